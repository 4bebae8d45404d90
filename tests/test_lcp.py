"""Lemke's method (diffspace.contact.lemke) against independent solvers, on degenerate and unsolvable
problems, and its implicit gradients against central finite differences."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from diffspace.contact import lemke
from diffspace.contact.lcp import MIN_DIGITS_BOUND, basis_solution
from experiments.references.lcp_reference import enumerate_lcp, enumerate_lcp_exact, lemke_numpy

# The returned solution is recomputed from the final basis by one dense solve, so z and w carry only
# round-off of a well-conditioned n <= 8 system: 1e-10 relative to the data is ample.
TOL = 1e-10


def _p_matrices(rng, batch, n):
    """Random P-matrices: positive-definite symmetric part plus a random skew part (non-symmetric)."""
    a = rng.normal(size=(batch, n, n))
    skew = rng.normal(size=(batch, n, n))
    return a @ a.transpose(0, 2, 1) / n + 0.2 * np.eye(n) + (skew - skew.transpose(0, 2, 1))


def _check_solution(M, q, z):
    w = M @ z + q
    scale = 1.0 + np.abs(q).max()
    assert z.min() >= 0.0 and w.min() >= -TOL * scale
    assert np.abs(z * w).max() <= TOL * scale * (1.0 + np.abs(z).max())


def test_p_matrix_lcps_match_enumeration():
    """A P-matrix LCP has exactly one solution: Lemke, the NumPy Lemke and enumeration agree."""
    rng = np.random.default_rng(1)
    M, q = _p_matrices(rng, 24, 6), rng.normal(size=(24, 6))
    z, info = lemke(M, q)
    assert np.all(info.converged) and not np.any(info.ray_termination)
    for k in range(24):
        (exact,) = enumerate_lcp(M[k], q[k])
        _check_solution(M[k], q[k], np.asarray(z[k]))
        np.testing.assert_allclose(z[k], exact, atol=TOL * (1 + np.abs(exact).max()))
        ref, status = lemke_numpy(M[k], q[k])
        assert status == "solved"
        np.testing.assert_allclose(z[k], ref, atol=1e-9 * (1 + np.abs(exact).max()))
    for k in (0, 7):  # batched (vmap) and single solves agree
        np.testing.assert_allclose(z[k], lemke(M[k], q[k])[0], atol=1e-14)


def test_symmetric_psd_lcps_match_enumeration_and_qp():
    """Rank-deficient symmetric PSD M (non-unique z): w = Mz + q and the QP value are unique."""
    rng = np.random.default_rng(2)
    n, rank = 6, 4
    for _ in range(12):
        a = rng.normal(size=(n, rank))
        M = a @ a.T
        z_star = np.where(rng.random(n) < 0.5, rng.random(n), 0.0)
        w_star = np.where(z_star > 0, 0.0, rng.random(n))
        q = w_star - M @ z_star  # a solvable problem with a known solution
        z, info = lemke(M, q)
        assert bool(info.converged)
        z = np.asarray(z)
        _check_solution(M, q, z)
        np.testing.assert_allclose(M @ z + q, w_star, atol=1e-9)
        objective = lambda x: 0.5 * x @ M @ x + q @ x  # noqa: E731  (the LCP is this QP's KKT system)
        assert objective(z) == pytest.approx(objective(z_star), abs=1e-9)
        assert all(np.allclose(M @ s + q, w_star, atol=1e-8) for s in enumerate_lcp(M, q))


def test_trivial_and_degenerate_problems():
    """q >= 0 (z = 0, no pivot); exact ties in the ratio tests; a solution with z_i = w_i = 0."""
    z, info = lemke(np.eye(3), np.array([1.0, 0.0, 2.0]))
    assert bool(info.converged) and int(info.iterations) == 0 and np.all(np.asarray(z) == 0)
    # all of q tied, and a cyclic M whose ratio tests tie again later (lexicographic rule resolves both)
    M = np.array([[1.0, 2.0, 0.0], [0.0, 1.0, 2.0], [2.0, 0.0, 1.0]])
    q = -np.ones(3)
    z, info = lemke(M, q)
    assert bool(info.converged)
    _check_solution(M, q, np.asarray(z))
    np.testing.assert_allclose(z, np.full(3, 1.0 / 3.0), atol=TOL)
    # degenerate pair: q_2 = 0 with z_2 = w_2 = 0 at the solution; repeated identical rows
    for M, q in [(np.array([[2.0, 1.0], [1.0, 2.0]]), np.array([-2.0, 1.0])),
                 (np.ones((3, 3)) + np.eye(3) * 1e-300, np.array([-1.0, -1.0, -1.0]))]:
        z, info = lemke(M, q)
        assert bool(info.converged)
        _check_solution(M, q, np.asarray(z))


def test_q_entry_negative_by_round_off_is_solved():
    """The force LCP of a block resting on a plane (mu = 0.3, m = 2 kg, dt = 2.5 ms) whose stopped tangential speed
    is round-off (2.5e-21 m/s): q_2 = -1e-18 next to q_3 = 0 ties with it in the first ratio test. The first pivot
    must still be on the most negative q (on the tied zero it left w_2 < 0, and the pivots ended on a false ray).
    Against exact rational enumeration (one solution, z_3 = 1e-18)."""
    M = np.array([[0.4999999999999999, 0.0, 0.0], [-0.14999999999999997, 0.9999999999999998, 1.0], [0.3, -1.0, 0.0]])
    q = np.array([5.726051144481326e-03, -9.999362367647694e-19, 0.0])
    z, info = lemke(M, q)
    assert bool(info.converged) and not bool(info.ray_termination)
    _check_solution(M, q, np.asarray(z))
    ((exact, _),) = enumerate_lcp_exact(M, q)
    np.testing.assert_allclose(z, exact, atol=TOL * np.abs(q).max())


def _spd_problems(rng, conditions, per_condition, n):
    """Symmetric positive-definite ``M`` with the given 2-norm condition numbers (random eigenvectors,
    eigenvalues spread geometrically from 1 to 1/cond) and standard normal ``q``; shape ``(len(conditions),
    per_condition, ...)``."""
    conditions = np.asarray(conditions, float)
    vectors = np.linalg.qr(rng.normal(size=(conditions.size, per_condition, n, n)))[0]
    values = conditions[:, None, None] ** -np.linspace(0.0, 1.0, n) * np.ones((1, per_condition, 1))
    M = np.einsum("cbij,cbj,cbkj->cbik", vectors, values, vectors)
    return 0.5 * (M + np.swapaxes(M, -1, -2)), rng.normal(size=(conditions.size, per_condition, n))


def test_ill_conditioned_spd_lcps_are_solved_to_their_conditioning():
    """SPD LCPs (unique solution) of condition 1e1..1e8 against exact rational enumeration: every one is
    accepted, on the exact basis, with the error a backward-stable solve allows (measured up to 0.2 cond
    eps). A fixed residual tolerance of 1e-9 rejected right answers from cond ~ 6e3 on (4x4: 10 in 4000 at
    6e3, a third of them at 1e7-1e8)."""
    conditions = [1e1, 1e2, 1e3, 6e3, 1e4, 1e5, 1e6, 1e7, 1e8]
    n, per_condition = 4, 24
    M, q = _spd_problems(np.random.default_rng(11), conditions, per_condition, n)
    z, info = lemke(M, q)
    assert np.all(np.asarray(info.converged)) and np.all(np.asarray(info.residual) <= 1.0)
    eps = np.finfo(float).eps
    for c, cond in enumerate(conditions):
        for k in range(per_condition):
            ((exact, basis),) = enumerate_lcp_exact(M[c, k], q[c, k])
            np.testing.assert_array_equal(np.asarray(info.basis[c, k]), basis)
            assert np.linalg.cond(M[c, k]) == pytest.approx(cond, rel=1e-6)
            error = np.abs(np.asarray(z[c, k]) - exact).max()
            assert error <= n * eps * cond * np.abs(exact).max()


def test_infeasible_and_numerically_singular_lcps_still_fail():
    """``M = [[1, -1], [-1, 1]] + e I``, ``q = -1``: SPD for ``e > 0`` with the solution ``z = 1 / e`` (condition
    2 / e up to 2e8: solved); infeasible for ``e <= 0`` (``w_1 + w_2 = -e (z_1 + z_2) - 2 < 0``): ray
    termination, NaN. A wrong basis is rejected by the acceptance test, and a basis whose error bound
    leaves fewer than four digits (condition 2e14) counts as not solved."""
    base = np.array([[1.0, -1.0], [-1.0, 1.0]])
    q = -np.ones(2)
    for e in (1e-2, 1e-4, 1e-6, 1e-8):
        z, info = lemke(base + e * np.eye(2), q)
        ((exact, _),) = enumerate_lcp_exact(base + e * np.eye(2), q)
        assert bool(info.converged)
        np.testing.assert_allclose(z, exact, rtol=4 * np.finfo(float).eps * 2 / e)
    for e in (0.0, -1e-8):
        z, info = lemke(base + e * np.eye(2), q)
        assert not bool(info.converged) and bool(info.ray_termination) and np.all(np.isnan(np.asarray(z)))
        assert enumerate_lcp_exact(base + e * np.eye(2), q) == []
    spd, spd_q = (x[0, 0] for x in _spd_problems(np.random.default_rng(3), [10.0], 1, 4))
    ((_, basis),) = enumerate_lcp_exact(spd, spd_q)
    assert bool(basis_solution(spd, spd_q, basis).accepted)
    for i in range(4):  # every single flip of the active set is infeasible for a unique, nondegenerate solution
        wrong = basis_solution(spd, spd_q, basis ^ (np.arange(4) == i))
        assert not bool(wrong.accepted) and float(wrong.residual) > 1e3
    # e = 1e-14: the pivots already see a ray (pivot entries below their tolerance); the true basis itself
    # (both z basic, z = 1e14) is numerically singular: its bound leaves no digit
    assert bool(lemke(base + 1e-14 * np.eye(2), q)[1].ray_termination)
    singular = basis_solution(base + 1e-14 * np.eye(2), q, np.array([True, True]))
    assert not bool(singular.accepted) and float(singular.error_bound) > MIN_DIGITS_BOUND


@pytest.mark.parametrize(
    "M, q",
    [
        (-np.eye(2), -np.ones(2)),  # w = -z - 1 < 0 for every z >= 0
        (np.array([[0.0, 1.0], [-1.0, 0.0]]), -np.ones(2)),  # PSD (skew): w_2 = -z_1 - 1 < 0, infeasible
    ],
)
def test_unsolvable_lcp_reports_ray_termination(M, q):
    z, info = lemke(M, q)
    assert bool(info.ray_termination) and not bool(info.converged)
    assert np.all(np.isnan(np.asarray(z)))
    assert enumerate_lcp(M, q) == []
    assert lemke_numpy(M, q)[1] == "ray"


def test_pivot_limit_is_reported():
    rng = np.random.default_rng(3)
    M, q = _p_matrices(rng, 1, 6)[0], -rng.random(6) - 0.1  # all of q negative: needs more than 2 pivots
    assert bool(lemke(M, q)[1].converged) and int(lemke(M, q)[1].iterations) > 2
    z, info = lemke(M, q, max_pivots=2)
    assert not bool(info.converged) and not bool(info.ray_termination) and int(info.iterations) == 2
    assert np.all(np.isnan(np.asarray(z)))


def test_gradients_match_central_differences():
    """Implicit derivatives (active-set system) vs central differences, away from degeneracy."""
    rng = np.random.default_rng(4)
    n = 6
    M, q = _p_matrices(rng, 1, n)[0], rng.normal(size=n)
    z, info = lemke(M, q)
    w = M @ np.asarray(z) + q
    assert np.min(np.asarray(z) + w) > 1e-2  # strictly complementary: the basis is locally constant
    c = rng.normal(size=n)

    def f(M, q):
        return jnp.dot(c, lemke(M, q)[0])

    g_M, g_q = jax.grad(f, argnums=(0, 1))(M, q)
    h = 1e-6
    fd_q = np.array([(f(M, q + h * e) - f(M, q - h * e)) / (2 * h) for e in np.eye(n)])
    np.testing.assert_allclose(g_q, fd_q, rtol=1e-7, atol=1e-8)  # FD round-off ~1e-16 / h
    for i, j in [(0, 0), (1, 3), (4, 2), (5, 5)]:
        dM = np.zeros((n, n))
        dM[i, j] = h
        fd = (f(M + dM, q) - f(M - dM, q)) / (2 * h)
        assert float(g_M[i, j]) == pytest.approx(float(fd), rel=1e-6, abs=1e-8)
    # forward mode (the custom_jvp rule) and reverse mode (its transpose) agree
    dq, dM = rng.normal(size=n), rng.normal(size=(n, n))
    tangent = jax.jvp(f, (M, q), (dM, dq))[1]
    assert float(tangent) == pytest.approx(float(np.sum(g_M * dM) + g_q @ dq), rel=1e-12)
