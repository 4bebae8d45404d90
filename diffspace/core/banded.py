r"""Symmetric block-pentadiagonal matrices of 3x3 blocks (a chain's stiffness: node ``i`` coupled to ``i +- 1``
and ``i +- 2``), their product with a vector and their solve, in array operations and one ``lax.scan`` (no
LAPACK call; see :mod:`diffspace.core.linalg` for why).

A matrix ``K`` of ``n x n`` blocks is stored as its diagonal blocks ``K_ii`` (``diag``, ``(n, 3, 3)``) and the
blocks above it, ``K_{i,i+1}`` (``upper1``, ``(n - 1, 3, 3)``) and ``K_{i,i+2}`` (``upper2``, ``(n - 2, 3, 3)``);
the blocks below are their transposes.

**Solve.** Pairing the nodes ``(2p, 2p + 1)`` makes ``K`` block *tri*diagonal in 6x6 blocks ``D_p`` and
``U_p = K_{p,p+1}`` (an odd ``n`` gets one identity node more). Block Gaussian elimination without pivoting
between blocks (Golub & Van Loan, *Matrix Computations*, Sec. 4.5.1):

.. math:: S_0 = D_0,\quad S_p = D_p - U_{p-1}^T S_{p-1}^{-1} U_{p-1},\qquad
          y_p = b_p - U_{p-1}^T S_{p-1}^{-1} y_{p-1},

then ``x_{P-1} = S_{P-1}^{-1} y_{P-1}`` and ``x_p = S_p^{-1} (y_p - U_p x_{p+1})`` backwards. Each ``S_p`` is
inverted (apart from ``b``, so that the solve is manifestly linear in ``b`` for autodiff) as a 2x2 matrix of 3x3 blocks (a Schur complement; 3x3 inverses by Cramer's rule). ``O(n)`` work in
``n / 2`` loop steps, against ``O(n^3)`` for a dense LU. The pivots ``S_p`` are nonsingular for a positive
definite ``K`` (a stable equilibrium); an indefinite ``K`` (past a limit point of a displacement-controlled
path) is solved as well unless a pivot is singular, which gives non-finite entries, never a silent number.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float


class Bands(NamedTuple):
    """A symmetric block-pentadiagonal matrix of 3x3 blocks (module notes)."""

    diag: Float[Array, "n 3 3"]
    upper1: Float[Array, "n1 3 3"]
    upper2: Float[Array, "n2 3 3"]

    def inner(self) -> "Bands":
        """The matrix without its first and last block rows and columns."""
        return Bands(self.diag[1:-1], self.upper1[1:-1], self.upper2[1:-1])

    def matvec(self, v: Float[Array, "n 3"]) -> Float[Array, "n 3"]:
        """``K v``."""
        def times(blocks, u, transpose=False):
            return jnp.einsum("iba,ib->ia" if transpose else "iab,ib->ia", blocks, u)

        out = times(self.diag, v)
        for k, blocks in ((1, self.upper1), (2, self.upper2)):
            m = blocks.shape[0]  # n - k blocks (none if n <= k)
            out = out + _pad(times(blocks, v[k:k + m]), 0, len(v) - m) + _pad(times(blocks, v[:m], True), len(v) - m, 0)
        return out

    def solve(self, b: Float[Array, "n 3 *k"]) -> Float[Array, "n 3 *k"]:
        """``K^{-1} b`` for one right-hand side ``(n, 3)`` or several columns ``(n, 3, k)`` (module notes)."""
        columns = b if b.ndim == 3 else b[..., None]
        n = self.diag.shape[0]
        d, u = _pairs(self, n + n % 2)
        x = _tridiagonal_solve(d, u, _pad(columns, 0, n % 2).reshape(d.shape[0], 6, -1))
        x = x.reshape(-1, 3, columns.shape[-1])[:n]
        return x if b.ndim == 3 else x[..., 0]


def _pad(a, before: int, after: int):
    return jnp.pad(a, [(before, after)] + [(0, 0)] * (a.ndim - 1))


def _pairs(k: Bands, m: int):
    """6x6 diagonal ``(m/2, 6, 6)`` and upper ``(m/2 - 1, 6, 6)`` blocks of ``k`` with its nodes paired,
    ``m - n`` identity nodes appended."""
    n = k.diag.shape[0]
    d = jnp.concatenate([k.diag, jnp.broadcast_to(jnp.eye(3), (m - n, 3, 3))])
    u1, u2 = _pad(k.upper1, 0, m - 1 - k.upper1.shape[0]), _pad(k.upper2, 0, m - 2 - k.upper2.shape[0])

    def square(a, b, c, e):  # [[a, b], [c, e]]
        return jnp.concatenate([jnp.concatenate([a, b], -1), jnp.concatenate([c, e], -1)], -2)

    diag = square(d[0::2], u1[0::2], jnp.swapaxes(u1[0::2], -1, -2), d[1::2])
    upper = square(u2[0::2], jnp.zeros_like(u2[0::2]), u1[1::2], u2[1::2])
    return diag, upper


def _inverse3(a: Float[Array, "*B 3 3"]) -> Float[Array, "*B 3 3"]:
    """Cramer's rule: columns ``r_1 x r_2, r_2 x r_0, r_0 x r_1`` over ``r_0 . r_1 x r_2`` (rows ``r_i``)."""
    r0, r1, r2 = a[..., 0, :], a[..., 1, :], a[..., 2, :]
    adjugate = jnp.stack([jnp.cross(r1, r2), jnp.cross(r2, r0), jnp.cross(r0, r1)], axis=-1)
    return adjugate / jnp.sum(r0 * jnp.cross(r1, r2), axis=-1)[..., None, None]


def _solve6(s: Float[Array, "6 6"], r: Float[Array, "6 k"]) -> Float[Array, "6 k"]:
    """``s^{-1} r`` with ``s = [[A, B], [C, E]]``: ``z = A^{-1} r_1``, ``x_2 = (E - C A^{-1} B)^{-1} (r_2 - C z)``,
    ``x_1 = z - A^{-1} B x_2``."""
    a_inv = _inverse3(s[:3, :3])
    a_inv_b, c = a_inv @ s[:3, 3:], s[3:, :3]
    z = a_inv @ r[:3]
    x2 = _inverse3(s[3:, 3:] - c @ a_inv_b) @ (r[3:] - c @ z)
    return jnp.concatenate([z - a_inv_b @ x2, x2])


def _tridiagonal_solve(diag: Float[Array, "P 6 6"], upper: Float[Array, "Pm1 6 6"], b: Float[Array, "P 6 k"]):
    """Block elimination forwards, substitution backwards (module notes), one ``lax.scan`` each."""
    zero = jnp.zeros_like(diag[:1])
    ahead, behind = jnp.concatenate([upper, zero]), jnp.concatenate([zero, upper])
    k = b.shape[-1]

    def eliminate(carry, blocks):
        s_inv_u, s_inv_y = carry  # S_{p-1}^{-1} U_{p-1} and S_{p-1}^{-1} y_{p-1}
        d, u, u_prev, rhs = blocks
        s_inv = _solve6(d - u_prev.T @ s_inv_u, jnp.eye(6, dtype=d.dtype))  # apart from b: linear in b
        out = (s_inv @ u, s_inv @ (rhs - u_prev.T @ s_inv_y))
        return out, out

    start = (jnp.zeros((6, 6), diag.dtype), jnp.zeros((6, k), b.dtype))
    _, (s_inv_u, s_inv_y) = jax.lax.scan(eliminate, start, (diag, ahead, behind, b))

    def substitute(x_next, blocks):
        x = blocks[1] - blocks[0] @ x_next
        return x, x

    _, x = jax.lax.scan(substitute, jnp.zeros((6, k), b.dtype), (s_inv_u, s_inv_y), reverse=True)
    return x
