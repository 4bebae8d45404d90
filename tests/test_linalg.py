"""``diffspace.core.linalg``: the loop Cholesky and its solves against LAPACK's, and no LAPACK call left in the batched
robot solves (jaxlib 0.10.2's CPU thread-pool deadlock in batched LAPACK solves hung a 4096-case ejection sweep)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from diffspace.core import dynamics, linalg


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
    calls = _custom_calls(jax.vmap(lambda hh, r: dynamics.masked_solve(hh, r, basis, mask)), h, rhs)
    assert "lapack" not in calls.lower() and "blas" not in calls.lower(), calls
