r"""Small dense linear solves in plain array operations (no LAPACK call): SPD by Cholesky, general by LU.

Robot-sized systems (the masked KKT solve of ``restricted.masked_solve`` behind the ejection and capture
dynamics and ``restricted_dynamics``, the ``"dense"`` forward-dynamics kernel, the constrained KKT solves of
``integrate.constrained`` and the contact solves of ``contact.unilateral`` and ``contact.lcp``) are factored here
instead of by ``jax.scipy.linalg``. On the CPU that lowers to LAPACK's ``potrf``, ``trsm``, ``getrf`` and
``getrs``, and with jaxlib 0.10.2 a batched call (``vmap``) splits its batch over XLA's thread pool and blocks
until the pieces finish: when the program runs as many of those calls at once as the pool has threads, every
thread waits for work queued behind itself, and the process hangs at 0 % CPU (seen with 2 threads in a
4096-case ejection sweep, both waiting in ``lapack_dpotrf_ffi``, and in the flexible arm's vmapped joint
reactions). Loops of array operations have no such call, batch over ``vmap`` like any other operation, and
cost ``n`` iterations of ``O(n^2)`` work, which is what a 6-30 coordinate system needs (the batched ejection ran
as fast as with LAPACK).

Cholesky ``a = L L^T`` row by row of ``U = L^T`` (row ``j`` of ``U`` is column ``j`` of ``L``, computed from
the rows before it; rows are contiguous, which keeps each loop step one fused kernel):

.. math:: l_{jj} = \sqrt{a_{jj} - \textstyle\sum_{k<j} l_{jk}^2}, \qquad
          l_{ij} = \big(a_{ij} - \textstyle\sum_{k<j} l_{ik} l_{jk}\big) / l_{jj} \quad (i > j),

then ``L y = b`` forward and ``L^T x = y`` backward. A matrix that is not positive definite gives NaN (as
LAPACK's does through JAX), which the outcome's status reports.

LU with partial pivoting ``P a = L U`` (``L`` unit lower, ``U`` upper; Golub & Van Loan, *Matrix Computations*,
alg. 3.4.1, the right-looking elimination LAPACK's ``getrf`` performs): at step ``k`` the row with the largest
``|a_ik|``, ``i >= k`` (the first of equals, as ``idamax``), is swapped into row ``k``, then

.. math:: l_{ik} = a_{ik} / a_{kk}, \qquad a_{ij} \leftarrow a_{ij} - l_{ik} a_{kj} \quad (i, j > k),

so ``|l_ik| <= 1``. ``a x = b`` is then ``L y = P b`` forward and ``U x = y`` backward; ``a^T x = b`` is
``U^T y = b`` forward, ``L^T v = y`` backward and ``x = P^T v``. A singular ``a`` (a zero pivot) gives
non-finite entries, never a silent number.
"""

from __future__ import annotations

from typing import Callable

import equinox as eqx
import jax.numpy as jnp
from jax import lax
from jaxtyping import Array, Float, Int


def cholesky(a: Float[Array, "n n"]) -> Float[Array, "n n"]:
    """Lower-triangular ``L`` with ``a = L L^T`` (the module's recursion, one row of ``L^T`` per loop step)."""
    n = a.shape[-1]
    cols = jnp.arange(n)

    def row(j, upper):  # row j of U = L^T; rows >= j of ``upper`` are still zero, so the sum runs over k < j
        remainder = a[j] - upper[:, j] @ upper
        diagonal = jnp.sqrt(remainder[j])
        return upper.at[j].set(jnp.where(cols > j, remainder / diagonal, jnp.where(cols == j, diagonal, 0.0)))

    return lax.fori_loop(0, n, row, jnp.zeros_like(a)).T


def cho_solve(factor: Float[Array, "n n"], b: Float[Array, "n ..."]) -> Float[Array, "n ..."]:
    """``(L L^T)^{-1} b`` for the factor ``L`` of :func:`cholesky`; ``b`` a vector or a matrix of columns."""
    n = factor.shape[-1]

    def forward(i, y):  # L y = b; entries >= i of y are still zero
        return y.at[i].set((b[i] - factor[i] @ y) / factor[i, i])

    y = lax.fori_loop(0, n, forward, jnp.zeros_like(b))

    def backward(step, x):  # L^T x = y; entries <= i of x are still zero
        i = n - 1 - step
        return x.at[i].set((y[i] - factor[:, i] @ x) / factor[i, i])

    return lax.fori_loop(0, n, backward, jnp.zeros_like(b))


def spd_solver(a: Float[Array, "n n"]) -> Callable[[Float[Array, "n ..."]], Float[Array, "n ..."]]:
    r"""``b -> a^{-1} b`` for a symmetric positive definite ``a``: one :func:`cholesky` factorisation, shared by
    every solve, each differentiated implicitly through that same factor (``jax.lax.custom_linear_solve``):

    .. math:: \dot x = a^{-1} (\dot b - \dot a\, x), \qquad \bar b = a^{-1} \bar x, \quad \bar a = -\bar b\, x^T.

    The factorisation itself is never differentiated (its input is ``stop_gradient``-ed), so derivatives
    cost two more triangular sweeps per direction and reuse the factor.
    """
    factor = cholesky(lax.stop_gradient(a))
    return lambda b: lax.custom_linear_solve(lambda x: a @ x, b, lambda _, r: cho_solve(factor, r), symmetric=True)


def spd_solve(a: Float[Array, "n n"], b: Float[Array, "n ..."]) -> Float[Array, "n ..."]:
    """``a^{-1} b`` for a symmetric positive definite ``a`` (:func:`spd_solver`)."""
    return spd_solver(a)(b)


class LUFactor(eqx.Module):
    """``P a = L U``: ``lu`` holds ``L`` below the diagonal (its unit diagonal implied) and ``U`` on and above it;
    ``permutation`` lists the rows of ``a`` in pivot order (``(P a)_i = a_{permutation_i}``)."""

    lu: Float[Array, "n n"]
    permutation: Int[Array, " n"]


def lu_factor(a: Float[Array, "n n"]) -> LUFactor:
    """LU with partial pivoting (module text), one elimination step per loop iteration."""
    a = jnp.asarray(a)
    n = a.shape[-1]
    index = jnp.arange(n)

    def eliminate(k, factor: LUFactor) -> LUFactor:
        pivot_row = jnp.argmax(jnp.where(index >= k, jnp.abs(factor.lu[:, k]), -1.0))
        swap = jnp.where(index == k, pivot_row, jnp.where(index == pivot_row, k, index))
        lu, permutation = factor.lu[swap], factor.permutation[swap]
        multipliers = jnp.where(index > k, lu[:, k] / lu[k, k], 0.0)
        lu = lu - jnp.outer(multipliers, jnp.where(index > k, lu[k], 0.0))
        return LUFactor(lu.at[:, k].set(jnp.where(index > k, multipliers, lu[:, k])), permutation)

    return lax.fori_loop(0, n, eliminate, LUFactor(a, index))


def _triangular_sweeps(first, second, b):
    """``second^{-1} first^{-1} b`` for triangular ``(matrix, unit_diagonal, lower)`` pairs, row by row; the
    unknowns not yet computed are zero, so each row's product only sums over the solved ones."""

    def sweep(triangle, rhs):
        matrix, unit, lower = triangle
        n = matrix.shape[0]
        strict = jnp.tril(matrix, -1) if lower else jnp.triu(matrix, 1)
        diagonal = jnp.ones(n, matrix.dtype) if unit else jnp.diagonal(matrix)

        def row(step, x):
            i = step if lower else n - 1 - step
            return x.at[i].set((rhs[i] - strict[i] @ x) / diagonal[i])

        return lax.fori_loop(0, n, row, jnp.zeros_like(rhs))

    return sweep(second, sweep(first, b))


def lu_solve(factor: LUFactor, b: Float[Array, "n ..."], transpose: bool = False) -> Float[Array, "n ..."]:
    """``a^{-1} b`` (or ``a^{-T} b`` with ``transpose``) from :func:`lu_factor`; ``b`` a vector or columns."""
    b = jnp.asarray(b)
    if not transpose:
        return _triangular_sweeps((factor.lu, True, True), (factor.lu, False, False), b[factor.permutation])
    v = _triangular_sweeps((factor.lu.T, False, True), (factor.lu.T, True, False), b)
    return jnp.zeros_like(v).at[factor.permutation].set(v)


def general_solver(a: Float[Array, "n n"]) -> Callable[[Float[Array, "n ..."]], Float[Array, "n ..."]]:
    r"""``b -> a^{-1} b`` for a general nonsingular ``a``: one :func:`lu_factor`, shared by every solve, each
    differentiated implicitly like :func:`spd_solver` (``a^{-1}(\dot b - \dot a x)``; the transpose solves
    ``a^T`` through the same factor)."""
    factor = lu_factor(lax.stop_gradient(a))
    return lambda b: lax.custom_linear_solve(
        lambda x: a @ x, b, lambda _, r: lu_solve(factor, r), lambda _, r: lu_solve(factor, r, transpose=True)
    )


def general_solve(a: Float[Array, "n n"], b: Float[Array, "n ..."]) -> Float[Array, "n ..."]:
    """``a^{-1} b`` for a general nonsingular ``a`` (:func:`general_solver`)."""
    return general_solver(a)(b)


__all__ = [
    "LUFactor", "cho_solve", "cholesky", "general_solve", "general_solver", "lu_factor", "lu_solve", "spd_solve",
    "spd_solver",
]
