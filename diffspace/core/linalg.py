r"""Small dense symmetric positive definite solves in plain array operations (no LAPACK call).

Robot-sized systems (the masked KKT solve of ``dynamics.masked_solve`` behind the ejection and capture
dynamics and ``restricted_dynamics``, and the ``"dense"`` forward-dynamics kernel) are factored here instead of
by ``jax.scipy.linalg.cho_factor``. On the CPU that lowers to LAPACK's ``potrf``
and ``trsm``, and with jaxlib 0.10.2 a batched call (``vmap``) splits its batch over XLA's thread pool and
blocks until the pieces finish: when the program runs as many of those calls at once as the pool has
threads, every thread waits for work queued behind itself, and the process hangs at 0 % CPU (seen with
2 threads in a 4096-case ejection sweep: both waiting in ``lapack_dpotrf_ffi``). Loops of
array operations have no such call, batch over ``vmap`` like any other operation, and cost ``n``
iterations of ``O(n^2)`` work, which is what a 6-30 coordinate system needs (the batched ejection ran as fast
as with LAPACK). Still on LAPACK: the constrained KKT solves of ``integrate.constrained`` (large systems)
and the LU inside the contact LCPs.

Cholesky ``a = L L^T`` row by row of ``U = L^T`` (row ``j`` of ``U`` is column ``j`` of ``L``, computed from
the rows before it; rows are contiguous, which keeps each loop step one fused kernel):

.. math:: l_{jj} = \sqrt{a_{jj} - \textstyle\sum_{k<j} l_{jk}^2}, \qquad
          l_{ij} = \big(a_{ij} - \textstyle\sum_{k<j} l_{ik} l_{jk}\big) / l_{jj} \quad (i > j),

then ``L y = b`` forward and ``L^T x = y`` backward. A matrix that is not positive definite gives NaN (as
LAPACK's does through JAX), which the outcome's status reports.
"""

from __future__ import annotations

import jax.numpy as jnp
from jax import lax
from jaxtyping import Array, Float


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


def spd_solve(a: Float[Array, "n n"], b: Float[Array, "n ..."]) -> Float[Array, "n ..."]:
    r"""``a^{-1} b`` for a symmetric positive definite ``a`` by one :func:`cholesky` factorisation, differentiated
    implicitly through that same factor (``jax.lax.custom_linear_solve``):

    .. math:: \dot x = a^{-1} (\dot b - \dot a\, x), \qquad \bar b = a^{-1} \bar x, \quad \bar a = -\bar b\, x^T.

    The factorisation itself is never differentiated (its input is ``stop_gradient``-ed), so derivatives
    cost two more triangular sweeps per direction and reuse the factor.
    """
    factor = cholesky(lax.stop_gradient(a))
    return lax.custom_linear_solve(lambda x: a @ x, b, lambda _, r: cho_solve(factor, r), symmetric=True)


__all__ = ["cho_solve", "cholesky", "spd_solve"]
