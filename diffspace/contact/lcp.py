r"""Linear complementarity problems by Lemke's complementary pivoting, in JAX, with implicit gradients.

``z, info = lemke(M, q)`` finds ``z`` with

$$
w = M z + q,\qquad z \ge 0,\quad w \ge 0,\quad z^\top w = 0
$$

(the LCP of eq. (20) of the unilateral-contact paper, ``xi = A eta + b``). Lemke's method [Lemke 1968;
Cottle, Pang & Stone, *The Linear Complementarity Problem*, sec. 4.4] augments the system with an
artificial variable ``z0`` and the covering vector ``d = 1``,

$$
w - M z - d\, z_0 = q,
$$

starts from the almost-complementary basis ``w`` with ``z0 = max(-q)`` entering, and then always lets the
complement of the variable that just left enter the basis, until ``z0`` leaves (a solution) or the
entering column has no positive entry (*ray termination*: for a copositive-plus ``M`` this proves that
the LCP has no solution). The ratio test is lexicographic (rows of ``[B^{-1} q, B^{-1}]`` divided by the
pivot column, compared entry by entry), which makes ties safe: the method cannot cycle on degenerate
problems. It solves every LCP with a P-matrix (unique solution), every feasible LCP with a positive
semidefinite or copositive-plus ``M`` (the contact LCPs of ``diffspace.contact.unilateral``) and
reports the others.

Implementation: the tableau ``B^{-1}[I, -M, -d, q]`` has a fixed ``n x (2n + 2)`` shape; the pivots run in a
``lax.while_loop`` bounded by ``max_pivots`` (static shapes, no Python control flow on data; jit- and
vmap-compatible, and under ``vmap`` the batch pivots until its slowest member is done). A bounded while
loop rather than a fixed-length ``scan`` because the loop is never differentiated (derivatives come from
the solution, below), and it stops at the solution: typical LCPs need about ``n`` pivots, a fixed-length
loop would pay ``max_pivots`` every time. The pivots run on the scaled problem (``M / max|M|``,
``q / max|q|``, below) so that their tolerances are relative.

Acceptance (what ``converged`` means): the pivots only choose the complementary basis ``s``; the solution
is then recomputed from the data on that basis, ``B x = q`` with ``B = diag(1 - s) - M diag(s)`` (basic
``z_i = x_i`` where ``s_i``, basic ``w_i = x_i`` elsewhere, the other member of each pair exactly 0, so
``z.w = 0`` holds by construction), by an LU solve with partial pivoting (``diffspace.core.linalg.lu_factor``:
array loops, no LAPACK call, so batches of LCPs under ``vmap`` cannot hit jaxlib 0.10.2's thread-pool deadlock in
batched LAPACK solves) and one step of iterative refinement ``x <- x + B^{-1}
(q - B x)``, on the scaled problem (powers of two near ``max|M|`` and ``max|q|``: exact, and ``z``, ``w``
become comparable O(1) numbers). Its componentwise forward-error bound, the one LAPACK's ``dgerfs``
evaluates (Higham, *Accuracy and Stability of Numerical Algorithms*, ch. 7; ``n + 1`` covers the rounding
of the residual itself),

$$
|x - x^*| \le e = |B^{-1}| \left(|q - B x| + \gamma_{n+1} (|B||x| + |q|)\right),\qquad
\gamma_{n+1} = (n + 1)\,\epsilon
$$

grows with the basis's conditioning, so the test is relative to the problem: the basis is accepted when
every basic variable is non-negative up to its own bound and the pivots' resolution,
``x_i >= -(e_i + TIE_TOL max|x|)`` (a slightly negative ``x_i`` is a degenerate zero, clipped: ratios that close
are ties to the pivots, and either choice leaves the other variable that slightly negative; data that
should be 0 but carry round-off, e.g. a stopped contact's tangential speed of 7e-19 m/s, make such ties),
and the bound leaves at least four significant digits (``max e <= 1e-4 max|x|``: otherwise ``B`` is
numerically singular and the answer meaningless). A fixed absolute tolerance cannot do
this: on a symmetric positive-definite LCP with condition number 6e3 the right basis carries ``w`` and ``z.w``
round-off of ``cond * eps * |z|``, which a fixed 1e-9 rejected. A wrong basis (a genuinely infeasible
answer) has ``x_i < 0`` by far more than ``e_i`` and is still rejected; ray termination and the pivot limit
are failures whatever the bound.

Gradients: at a solution with final complementary basis ``s`` (``s_i``: ``z_i`` basic, otherwise ``w_i``),
the basic variables solve ``B x = q`` with ``B = diag(1 - s) - M diag(s)`` (nonsingular: it is the last
tableau's basis), ``z = s * x``. Differentiating ``w - M z = q`` with the basis fixed gives

$$
dz = s \odot B^{-1} (dq + dM\, z),
$$

the implicit-function derivative of the active-set linear system (an LU of ``B``,
``diffspace.core.linalg.general_solve``). It is defined as one ``jax.custom_jvp``
rule, which serves forward mode directly and reverse mode by JAX's transposition of this linear map:
the transpose is ``q_bar = B^{-T} (s * z_bar)``, ``M_bar = q_bar z^T``, exactly what a hand-written
``custom_vjp`` would compute (one function cannot carry both a ``custom_jvp`` and a ``custom_vjp``; the
JVP form gives both modes from one rule). Where the solution is degenerate (a pair with ``z_i = w_i =
0``, e.g. a contact exactly at lift-off) this is the one-sided derivative of the branch Lemke found.

Failures are data, never silent: ``info.converged`` is False on ray termination, at the pivot limit or
when the recomputed solution fails the acceptance test above, and ``z`` is then NaN.
"""

from __future__ import annotations

import functools

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, ArrayLike, Bool, Float, Int

from ..core.linalg import general_solve, lu_factor, lu_solve

PIVOT_TOL = 1e-11  # pivot-column entries up to this times max(1, its largest entry) count as zero
TIE_TOL = 1e-11  # ratios closer than this (relative) are ties, resolved by the next lexicographic column
MIN_DIGITS_BOUND = 1e-4  # largest accepted relative forward-error bound max(e) / max|x| (>= 4 digits)


class LemkeInfo(eqx.Module):
    """What happened in one Lemke solve (all arrays, so they batch under ``vmap``).

    ``converged``: a solution was found and passed the acceptance test (module text); ``ray_termination``:
    the method stopped on a ray (no solution for copositive-plus ``M``); ``iterations``: pivots made (0 when
    ``q >= 0``); ``residual``: the largest sign violation of a basic variable in units of its tolerance,
    ``max_i max(-x_i, 0) / (e_i + TIE_TOL max|x|)`` (accepted up to 1); ``error_bound``: the relative
    forward-error bound ``max e / max|x|`` of the recomputed solution (accepted up to ``MIN_DIGITS_BOUND``);
    ``basis``: True where ``z_i`` is basic in the final basis (the active set the gradients use).
    """

    converged: Bool[Array, ""]
    ray_termination: Bool[Array, ""]
    iterations: Int[Array, ""]
    residual: Float[Array, ""]
    error_bound: Float[Array, ""]
    basis: Bool[Array, " n"]


class _Pivoting(eqx.Module):
    tableau: Float[Array, "n m"]
    basis: Int[Array, " n"]  # variable basic in each row: w_i = i, z_i = n + i, z0 = 2n
    entering: Int[Array, ""]
    done: Bool[Array, ""]
    ray: Bool[Array, ""]
    pivots: Int[Array, ""]


@functools.partial(jax.jit, static_argnames="max_pivots")
def lemke(M: Float[ArrayLike, "*batch n n"], q: Float[ArrayLike, "*batch n"], max_pivots: int | None = None):
    """Solve the LCP ``w = M z + q >= 0, z >= 0, z.w = 0``.

    Leading batch dimensions are mapped with ``vmap``. Differentiable (forward and reverse mode) through
    the final basis (module text).

    Args:
        M: The matrices, shape ``(*batch, n, n)``.
        q: The vectors, shape ``(*batch, n)``.
        max_pivots: Bound on the pivots (static); default ``max(100, 10 n)``.

    Returns:
        ``(z, info)``: the solution, shape ``(*batch, n)``, NaN where ``info.converged`` is False, and the
        [`LemkeInfo`][diffspace.contact.lcp.LemkeInfo] of each solve.

    Raises:
        ValueError: Shapes that do not match.
    """
    M, q = jnp.asarray(M, float), jnp.asarray(q, float)
    n = q.shape[-1]
    if M.shape[-2:] != (n, n) or M.shape[:-2] != q.shape[:-1]:
        raise ValueError(f"lemke: M must have shape (..., n, n) matching q (..., n); got {M.shape} and {q.shape}")
    limit = max(100, 10 * n) if max_pivots is None else int(max_pivots)
    solve = functools.partial(_lemke, limit)
    for _ in range(q.ndim - 1):
        solve = jax.vmap(solve)
    return solve(M, q)


@functools.partial(jax.custom_jvp, nondiff_argnums=(0,))
def _lemke(max_pivots: int, M, q):
    n = q.shape[0]
    m_scale, q_scale = _power_of_two_scale(M), _power_of_two_scale(q)  # exact: scaling adds no rounding
    state = _pivot_until_done(M / m_scale, q / q_scale, max_pivots)
    zbasic = jnp.zeros(n, bool).at[jnp.where(state.basis >= n, state.basis - n, n)].set(True, mode="drop")
    basic = basis_solution(M / m_scale, q / q_scale, zbasic)
    converged = state.done & ~state.ray & basic.accepted
    info = LemkeInfo(converged, state.ray, state.pivots, basic.residual, basic.error_bound, zbasic)
    z = jnp.where(zbasic, jnp.maximum(basic.x, 0.0), 0.0) * (q_scale / m_scale)  # clips degenerate zeros only
    return jnp.where(converged, z, jnp.nan), info


def _power_of_two_scale(a):
    """The power of two nearest ``max|a|`` (1 for a zero array)."""
    largest = jnp.max(jnp.abs(a))
    return jnp.where(largest > 0.0, jnp.exp2(jnp.round(jnp.log2(jnp.where(largest > 0.0, largest, 1.0)))), 1.0)


@_lemke.defjvp
def _lemke_jvp(max_pivots, primals, tangents):
    M, q = primals
    dM, dq = tangents
    z, info = _lemke(max_pivots, M, q)
    dz = jnp.where(info.basis, general_solve(_basis_matrix(M, info.basis), dq + dM @ z), 0.0)
    return (z, info), (dz, _zero_tangent(info))


def _zero_tangent(info: LemkeInfo):
    def zero(x):
        if jnp.issubdtype(x.dtype, jnp.floating):
            return jnp.zeros_like(x)
        return np.zeros(x.shape, dtype=jax.dtypes.float0)

    return jax.tree.map(zero, info)


def _basis_matrix(M, zbasic):
    """``B = diag(1 - s) - M diag(s)``: columns of ``[I, -M]`` of the basic variables."""
    s = zbasic.astype(M.dtype)
    return jnp.diag(1.0 - s) - M * s[None, :]


class BasisSolution(eqx.Module):
    """The basic variables ``x`` of one complementary basis and its acceptance test (module text)."""

    x: Float[Array, " n"]  # basic z_i where the basis has z_i, basic w_i elsewhere
    bound: Float[Array, " n"]  # componentwise forward-error bound e
    residual: Float[Array, ""]  # max_i max(-x_i, 0) / (e_i + TIE_TOL max|x|)
    error_bound: Float[Array, ""]  # max e / max|x|
    accepted: Bool[Array, ""]


def basis_solution(M, q, zbasic) -> BasisSolution:
    """Solve ``B x = q`` on the complementary basis ``zbasic`` (one refinement step) and test it: every
    ``x_i >= -(e_i + TIE_TOL max|x|)`` and ``max e <= MIN_DIGITS_BOUND max|x|`` (module text). ``e`` is
    invariant under row and column scaling; ``max|x|`` compares z's and w's, so pass the scaled problem
    (``M / max|M|``, ``q / max|q|``, where both are O(1)).

    Args:
        M: The matrix, shape ``(n, n)``.
        q: The vector, shape ``(n,)``.
        zbasic: True where ``z_i`` is basic, shape ``(n,)``.

    Returns:
        The basic variables, their error bounds and the acceptance test.
    """
    n = q.shape[0]
    basis = _basis_matrix(M, zbasic)
    factor = lu_factor(basis)
    x = lu_solve(factor, q)
    x = x + lu_solve(factor, q - basis @ x)
    residual = q - basis @ x
    inverse = lu_solve(factor, jnp.eye(n))
    gamma = (n + 1) * jnp.finfo(q.dtype).eps
    bound = jnp.abs(inverse) @ (jnp.abs(residual) + gamma * (jnp.abs(basis) @ jnp.abs(x) + jnp.abs(q)))
    tiny = jnp.finfo(q.dtype).tiny
    largest = jnp.max(jnp.abs(x))
    violation = jnp.max(jnp.maximum(-x, 0.0) / jnp.maximum(bound + TIE_TOL * largest, tiny))
    relative = jnp.max(bound) / jnp.maximum(largest, tiny)
    finite = jnp.all(jnp.isfinite(x)) & jnp.all(jnp.isfinite(bound))
    accepted = finite & (violation <= 1.0) & (relative <= MIN_DIGITS_BOUND)
    return BasisSolution(x, bound, jnp.where(finite, violation, jnp.inf), jnp.where(finite, relative, jnp.inf),
                         accepted)


def _pivot(tableau, row, col):
    pivot_row = tableau[row] / tableau[row, col]
    return (tableau - jnp.outer(tableau[:, col], pivot_row)).at[row].set(pivot_row)


def _lexmin_row(tableau, column, eligible):
    """Row of the lexicographic minimum of ``[B^{-1} q, B^{-1}]_i / column_i`` over the eligible rows."""
    n = tableau.shape[0]
    safe = jnp.where(eligible, column, 1.0)
    keys = jnp.concatenate([tableau[:, -1:], tableau[:, :n]], axis=1) / safe[:, None]

    def narrow(state):
        j, candidates = state
        ratio = jnp.where(candidates, keys[:, j], jnp.inf)
        best = jnp.min(ratio)
        spread = jnp.max(jnp.where(candidates, jnp.abs(keys[:, j]), 0.0))
        return j + 1, candidates & (ratio <= best + TIE_TOL * (1.0 + spread))

    def tied(state):  # later columns only break ties (the rows of B^-1 are independent: at most n + 1 passes)
        j, candidates = state
        return (j <= n) & (jnp.sum(candidates) > 1)

    _, candidates = jax.lax.while_loop(tied, narrow, (0, eligible))
    return jnp.argmax(candidates)


def _pivot_until_done(M, q, max_pivots: int) -> _Pivoting:
    """Run the pivots on the scaled problem; the state records the final basis and how it ended."""
    n = q.shape[0]
    artificial = 2 * n
    tableau = jnp.concatenate([jnp.eye(n), -M, -jnp.ones((n, 1)), q[:, None]], axis=1)
    trivial = jnp.all(q >= 0.0)
    # first pivot: z0 enters at the most negative q, making the basis feasible; the lexicographic order breaks
    # exact ties only (a near tie, e.g. q_i = -1e-16 next to q_j = 0, must still pivot on i: pivoting on j left
    # w_i < 0 and ended the pivots on a false ray)
    first = _lexmin_row(tableau, jnp.ones(n), q == jnp.min(q))
    start = _Pivoting(
        tableau=jnp.where(trivial, tableau, _pivot(tableau, first, artificial)),
        basis=jnp.where(trivial, jnp.arange(n), jnp.arange(n).at[first].set(artificial)),
        entering=first + n,  # the complement of w_first, which just left
        done=trivial,
        ray=jnp.asarray(False),
        pivots=jnp.where(trivial, 0, 1).astype(jnp.int32),
    )

    def running(state: _Pivoting):
        return ~state.done & ~state.ray & (state.pivots < max_pivots)

    def step(state: _Pivoting) -> _Pivoting:
        column = state.tableau[:, state.entering]
        eligible = column > PIVOT_TOL * jnp.maximum(1.0, jnp.max(jnp.abs(column)))
        ray = ~jnp.any(eligible)
        row = _lexmin_row(state.tableau, column, eligible)
        leaving = state.basis[row]
        return _Pivoting(
            tableau=jnp.where(ray, state.tableau, _pivot(state.tableau, row, state.entering)),
            basis=jnp.where(ray, state.basis, state.basis.at[row].set(state.entering)),
            entering=jnp.where(leaving < n, leaving + n, leaving - n),
            done=~ray & (leaving == artificial),
            ray=ray,
            pivots=state.pivots + jnp.where(ray, 0, 1),
        )

    return jax.lax.while_loop(running, step, start)


__all__ = ["BasisSolution", "LemkeInfo", "basis_solution", "lemke"]
