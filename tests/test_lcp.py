"""Lemke's method (diffspace.contact.lemke) against independent solvers, on degenerate and unsolvable
problems, and its implicit gradients against central finite differences."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from lcp_reference import enumerate_lcp, lemke_numpy

from diffspace.contact import lemke

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
