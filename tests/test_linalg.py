"""``diffspace.core.linalg``: the loop Cholesky and LU and their solves against LAPACK's (NumPy, SciPy), their
implicit derivatives against the closed forms, and no LAPACK call left in the batched robot, constrained and
contact solves (jaxlib 0.10.2's CPU thread-pool deadlock in batched LAPACK solves hung a 4096-case ejection sweep
and the flexible arm's joint reactions)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.linalg

from diffspace.bodies import maximal_state
from diffspace.contact import lemke
from diffspace.contact.unilateral import contact_step, point_plane_contacts
from diffspace.core import linalg, restricted
from diffspace.integrate import Stabilization, output_multipliers, project_positions, project_velocities
from diffspace.io.packaged import DATA_DIR
from diffspace.scenarios import load_scenario
from diffspace.scenarios.flexible_arm import model


def _spd(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    g = rng.normal(size=(n, n))
    return g @ g.T + 0.1 * np.eye(n)  # condition numbers up to ~1e4 for n = 30


@pytest.mark.parametrize("n", [1, 6, 13, 30])
def test_cholesky_and_solves_match_lapack(n):
    """Factor to 1e-13 of LAPACK's (relative to its largest entry); solves of a vector and of a matrix of
    columns to 1e-12 relative (round-off times a condition number of at most ~1e3-1e4)."""
    a = _spd(n, n)
    factor = np.asarray(linalg.cholesky(jnp.asarray(a)))
    reference = np.linalg.cholesky(a)
    np.testing.assert_allclose(factor, reference, atol=1e-13 * np.abs(reference).max())
    assert np.all(np.triu(factor, 1) == 0.0)
    rhs = np.random.default_rng(1).normal(size=(n, 3))
    for b in (rhs[:, 0], rhs):
        x = np.asarray(linalg.cho_solve(jnp.asarray(factor), jnp.asarray(b)))
        expected = np.linalg.solve(a, b)
        np.testing.assert_allclose(x, expected, atol=1e-12 * np.linalg.cond(a) * np.abs(expected).max())


def test_cholesky_of_an_indefinite_matrix_is_nan():
    """No silent result: a matrix that is not positive definite gives NaN (as LAPACK's through JAX)."""
    assert np.isnan(np.asarray(linalg.cholesky(jnp.array([[1.0, 2.0], [2.0, 1.0]])))).any()


def _custom_calls(fn, *args) -> str:
    return " ".join(line for line in jax.jit(fn).lower(*args).compile().as_text().splitlines() if "custom_call" in line)


def test_batched_masked_solve_calls_no_lapack():
    """``vmap`` of the masked KKT solve (the ejection's and the capture's dynamics) lowers to plain array loops:
    no ``potrf``/``trsm`` custom call that splits its batch over the thread pool."""
    batch, n = 64, 13
    h = jnp.broadcast_to(jnp.asarray(_spd(n, 0)), (batch, n, n))
    rhs = jnp.ones((batch, n))
    basis = jnp.eye(n)
    mask = jnp.ones(n).at[2].set(0.0)
    calls = _custom_calls(jax.vmap(lambda hh, r: restricted.masked_solve(hh, r, basis, mask)), h, rhs)
    assert "lapack" not in calls.lower() and "blas" not in calls.lower(), calls


def _general(n: int, seed: int) -> np.ndarray:
    """A nonsymmetric matrix whose first column is small, so that partial pivoting must swap rows."""
    a = np.random.default_rng(seed).normal(size=(n, n)) + 0.5 * np.eye(n)
    a[:, 0] *= 1e-3
    return a


def _lapack_permutation(pivots: np.ndarray) -> np.ndarray:
    """LAPACK's row interchanges (row ``i`` swapped with ``pivots[i]``, in order) as the rows of ``P a``."""
    rows = np.arange(pivots.size)
    for i, p in enumerate(pivots):
        rows[[i, p]] = rows[[p, i]]
    return rows


@pytest.mark.parametrize("n", [1, 6, 13, 30])
def test_lu_factor_and_solves_match_lapack(n):
    """Same pivots as LAPACK's ``getrf`` (SciPy), factor to 1e-13 relative; plain and transposed solves of a vector
    and of columns to 1e-12 times the condition number (NumPy)."""
    a = _general(n, n)
    factor = linalg.lu_factor(jnp.asarray(a))
    reference, pivots = scipy.linalg.lu_factor(a)
    np.testing.assert_array_equal(np.asarray(factor.permutation), _lapack_permutation(pivots))
    np.testing.assert_allclose(np.asarray(factor.lu), reference, atol=1e-13 * np.abs(reference).max())
    rhs = np.random.default_rng(2).normal(size=(n, 3))
    bound = 1e-12 * np.linalg.cond(a)
    for b in (rhs[:, 0], rhs):
        for transpose, matrix in ((False, a), (True, a.T)):
            x = np.asarray(linalg.lu_solve(factor, jnp.asarray(b), transpose=transpose))
            expected = np.linalg.solve(matrix, b)
            np.testing.assert_allclose(x, expected, atol=bound * np.abs(expected).max())


def test_lu_solve_of_a_singular_matrix_is_not_finite():
    """No silent result: a zero pivot gives non-finite entries (the callers' acceptance tests and statuses see them)."""
    x = linalg.general_solve(jnp.array([[1.0, 2.0], [2.0, 4.0]]), jnp.ones(2))
    assert not np.all(np.isfinite(np.asarray(x)))


@pytest.mark.parametrize("solve, matrix", [(linalg.spd_solve, _spd), (linalg.general_solve, _general)])
def test_solve_derivatives_are_the_implicit_ones(solve, matrix):
    """Forward mode ``x' = a^-1 (b' - a' x)`` and reverse mode ``b_bar = a^-T x_bar``, ``a_bar = -b_bar x^T`` (NumPy,
    the closed forms) to 1e-12 times the condition number, with the derivative directions in the matrix's own
    class (symmetric for the SPD solve)."""
    n = 9
    a, rng = matrix(n, 4), np.random.default_rng(5)
    b, db, weights = rng.normal(size=n), rng.normal(size=n), rng.normal(size=n)
    da = rng.normal(size=(n, n))
    da = da + da.T if solve is linalg.spd_solve else da
    x = np.linalg.solve(a, b)
    bound = 1e-12 * np.linalg.cond(a)
    _, tangent = jax.jvp(solve, (jnp.asarray(a), jnp.asarray(b)), (jnp.asarray(da), jnp.asarray(db)))
    expected = np.linalg.solve(a, db - da @ x)
    np.testing.assert_allclose(tangent, expected, atol=bound * np.abs(expected).max())
    a_bar, b_bar = jax.grad(lambda aa, bb: solve(aa, bb) @ weights, argnums=(0, 1))(jnp.asarray(a), jnp.asarray(b))
    expected_b = np.linalg.solve(a.T, weights)
    np.testing.assert_allclose(b_bar, expected_b, atol=bound * np.abs(expected_b).max())
    np.testing.assert_allclose(a_bar, -np.outer(expected_b, x), atol=bound * np.abs(expected_b).max() * np.abs(x).max())


BATCH = 512


def _assert_no_lapack(fn, *args):
    calls = _custom_calls(fn, *args).lower()
    assert "lapack" not in calls and "blas" not in calls, calls


def _flexible_arm_states():
    """The flexible arm's maximal-coordinate system (modal link, momentum rows) and a batch of its states."""
    s = load_scenario(DATA_DIR / "flexible_arm.toml")
    p = s.params
    system = model.maximal_system(s.robot, s.settings, p.frequency_hz, p.damping_ratio, p.amplitude_N_m, p.period_s)
    start = maximal_state(s.robot, s.robot.neutral(), jnp.zeros(s.robot.nv))
    q = jnp.concatenate([start.q, jnp.zeros(system.n_modal)])
    rng = np.random.default_rng(0)
    w = jnp.asarray(rng.normal(size=(BATCH, start.w.shape[0] + system.n_modal)))
    return system, jnp.linspace(0.0, 1.0, BATCH), q + 1e-3 * jnp.asarray(rng.normal(size=(BATCH, q.shape[0]))), w


def test_batched_constrained_solves_call_no_lapack():
    """The flexible arm's joint reactions (``output_multipliers``: the KKT solve vmapped over the output grid, the
    reproducer that hung), the vmapped projection and ``vmap(jacfwd)`` of the KKT solve (implicit solvers' Jacobian)
    lower to array loops."""
    system, ts, q, w = _flexible_arm_states()
    stabilization = Stabilization(10.0, 10.0)
    _assert_no_lapack(lambda t, qq, ww: output_multipliers(system, stabilization, t, qq, ww), ts, q, w)
    project = jax.vmap(lambda t, qq, ww: project_velocities(system, t, project_positions(system, t, qq), ww))
    _assert_no_lapack(project, ts, q, w)
    jacobian = jax.vmap(jax.jacfwd(lambda ww, t, qq: output_multipliers(system, stabilization, t[None], qq[None], ww[None])))
    _assert_no_lapack(jacobian, w, ts, q)


def _contact_batch():
    """A batch of SPD mass matrices (6 coordinates) with one pressed point contact each (plane y = 0)."""
    rng = np.random.default_rng(1)
    mass = jnp.asarray(np.stack([_spd(6, k) for k in range(4)] * (BATCH // 4)))
    jacobian = jnp.asarray(rng.normal(size=(BATCH, 1, 2, 6)))
    velocity = jnp.asarray(rng.normal(size=(BATCH, 6)))
    return mass, jacobian, velocity


@pytest.mark.parametrize("formulation", ["acceleration", "velocity"])
def test_batched_contact_steps_call_no_lapack(formulation):
    """``contact_step`` (its Cholesky of ``M`` and the LU of every Lemke basis, with the implicit derivative through
    the LCP) vmapped over a sweep-sized batch lowers to array loops."""
    mass, jacobian, velocity = _contact_batch()

    def step(m, jac, u):
        contacts = point_plane_contacts(jnp.zeros((1, 2)), jac, jnp.zeros((1, 2)), (0.0, 1.0), ((1.0, 0.0),), 0.3)
        return contact_step(formulation, m, -jnp.ones(6), u, contacts, 0.01).velocity

    _assert_no_lapack(jax.vmap(step), mass, jacobian, velocity)
    _assert_no_lapack(jax.vmap(jax.jacfwd(step, argnums=2)), mass, jacobian, velocity)


def test_batched_lemke_and_its_gradient_call_no_lapack():
    """Lemke's basis solve and acceptance test, and its implicit-derivative solve, batched."""
    m = jnp.asarray(np.stack([_general(5, k) @ _general(5, k).T for k in range(BATCH)]))
    q = jnp.asarray(np.random.default_rng(3).normal(size=(BATCH, 5)))
    _assert_no_lapack(lambda mm, qq: lemke(mm, qq)[0], m, q)
    _assert_no_lapack(jax.vmap(jax.jacfwd(lambda mm, qq: lemke(mm, qq)[0], argnums=1)), m, q)
