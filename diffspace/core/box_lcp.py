r"""Box-constrained linear complementarity problems with a symmetric positive definite matrix.

Find $l \le x \le u$ with $w = W x + q$ such that

$$
x_i = l_i \Rightarrow w_i \ge 0, \qquad l_i < x_i < u_i \Rightarrow w_i = 0, \qquad x_i = u_i \Rightarrow w_i \le 0 ,
$$

the optimality conditions of the strictly convex quadratic program $\min \tfrac12 x^\top W x + q^\top x$ over
the box, so the solution is unique. This is the stick-slip problem of joints at rest (Pfeiffer and Glocker's
friction LCP: $x$ the friction torques within their limits, $w$ the accelerations).

**Method**: the primal active-set method for convex quadratic programs (Nocedal and Wright, *Numerical
Optimization*, 2nd ed., algorithm 16.3) specialised to bounds. It starts at $x = \mathrm{clip}(0, l, u)$ with
every variable free (those with $l_i = u_i$ stay fixed). Each iteration minimises over the free variables with
the others at their bounds (one SPD solve of $W_{FF}$, masked to a static shape); if that point is inside the
box the method moves there and checks the signs of $w$ at the bounds: done if none is wrong, else the variable
with the most wrong sign is freed; otherwise it steps toward the point until the first bound is met and fixes
that variable there. The objective decreases at every step that moves, so in exact arithmetic no active set
repeats and the method ends; in practice after about twice the number of variables at a bound. Unlike
Lemke's method on the equivalent LCP of twice the size (whose matrix is only semidefinite), it needs no
pivoting tolerance that could confuse a bound exceeded by a relative $10^{-8}$ with a tie: every iterate is
an exact SPD solve, and feasibility and signs are judged to $10^{-12}$ of the problem's scales
(``TOLERANCE``).

The result is exact where it matters to a caller choosing modes: $x_i$ is exactly $l_i$ or $u_i$ at a bound,
$w_i$ exactly 0 for a free variable and at a bound whose sign is wrong by less than the tolerance. Not
differentiated (callers choose a discrete mode with it).
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Bool, Float, Int

from .linalg import spd_solve

TOLERANCE = 1e-12
"""Relative to the problem's scales: a point outside the box by less than this times ``max(|l|, |u|)`` is
inside; a sign of ``w`` wrong by less than this times ``max|q| + max|W| max(|l|, |u|)`` is right."""


class BoxSolution(eqx.Module):
    """Solution of [`box_lcp`][diffspace.core.box_lcp.box_lcp].

    Attributes:
        x: The unknowns, each within its bounds, shape ``(n,)``.
        w: ``W x + q``: exactly 0 where ``x`` is free, >= 0 at a lower bound, <= 0 at an upper one, shape ``(n,)``.
        converged: The method ended within its iteration bound.
        iterations: Iterations made.
    """

    x: Float[Array, " n"]
    w: Float[Array, " n"]
    converged: Bool[Array, ""]
    iterations: Int[Array, ""]


class _State(eqx.Module):
    x: Float[Array, " n"]
    side: Int[Array, " n"]  # -1 at the lower bound, +1 at the upper one, 0 free
    done: Bool[Array, ""]
    iterations: Int[Array, ""]


def box_lcp(W: Float[ArrayLike, "n n"], q: Float[ArrayLike, " n"], lower: Float[ArrayLike, " n"],
            upper: Float[ArrayLike, " n"], max_iterations: int | None = None) -> BoxSolution:
    """Solve the box-constrained LCP of a symmetric positive definite ``W`` (module text).

    Args:
        W: Symmetric positive definite matrix, shape ``(n, n)``.
        q: Vector, shape ``(n,)``.
        lower: Lower bounds, shape ``(n,)``.
        upper: Upper bounds (``>= lower``; equal bounds fix the variable), shape ``(n,)``.
        max_iterations: Bound on the iterations (static); default ``4 n + 4``.

    Returns:
        The solution and whether the method converged.
    """
    W, q, lower, upper = (jax.lax.stop_gradient(jnp.asarray(a, float)) for a in (W, q, lower, upper))
    n = q.shape[0]
    limit = 4 * n + 4 if max_iterations is None else int(max_iterations)
    fixed = lower >= upper
    x_scale = jnp.maximum(jnp.max(jnp.maximum(jnp.abs(lower), jnp.abs(upper))), jnp.finfo(float).tiny)
    w_scale = jnp.maximum(jnp.max(jnp.abs(q)) + jnp.max(jnp.abs(W)) * x_scale, jnp.finfo(float).tiny)

    def at_bounds(side):
        return jnp.where(side > 0, upper, lower)

    def iterate(state: _State) -> _State:
        free = state.side == 0
        bounded = jnp.where(free, 0.0, at_bounds(state.side))
        system = jnp.where(free[:, None] & free[None, :], W, jnp.eye(n))
        trial = jnp.where(free, spd_solve(system, jnp.where(free, -(q + W @ bounded), 0.0)), bounded)
        slack = TOLERANCE * x_scale
        inside = jnp.all((trial >= lower - slack) & (trial <= upper + slack))
        # inside: move there and free the bounded variable whose w has the most wrong sign, if any
        x_in = jnp.clip(trial, lower, upper)
        wrong = jnp.where(fixed | free, -jnp.inf, state.side * (W @ x_in + q))
        release = jnp.argmax(wrong)
        optimal = wrong[release] <= TOLERANCE * w_scale
        side_in = jnp.where(optimal, state.side, state.side.at[release].set(0))
        # outside: step toward it until the first bound, and hold that variable there
        step = trial - state.x
        to_upper = jnp.where(free & (step > 0), (upper - state.x) / jnp.where(step > 0, step, 1.0), jnp.inf)
        to_lower = jnp.where(free & (step < 0), (lower - state.x) / jnp.where(step < 0, step, 1.0), jnp.inf)
        ratio = jnp.minimum(to_upper, to_lower)
        block = jnp.argmin(ratio)
        side_block = jnp.where(to_upper[block] <= to_lower[block], 1, -1)
        side_out = state.side.at[block].set(side_block)
        x_out = jnp.clip(state.x + jnp.clip(ratio[block], 0.0, 1.0) * step, lower, upper)
        x_out = x_out.at[block].set(jnp.where(side_block > 0, upper[block], lower[block]))
        return _State(jnp.where(inside, x_in, x_out), jnp.where(inside, side_in, side_out), inside & optimal,
                      state.iterations + 1)

    def running(state: _State):
        return ~state.done & (state.iterations < limit)

    start = _State(jnp.clip(jnp.zeros(n), lower, upper), jnp.where(fixed, -1, 0), jnp.asarray(False), jnp.asarray(0))
    end = jax.lax.while_loop(running, iterate, start)
    w = W @ end.x + q
    w = jnp.where(end.side < 0, jnp.maximum(w, 0.0), jnp.where(end.side > 0, jnp.minimum(w, 0.0), 0.0))
    w = jnp.where(fixed, W @ end.x + q, w)  # a fixed variable has no sign condition
    return BoxSolution(end.x, w, end.done, end.iterations)


__all__ = ["BoxSolution", "box_lcp"]
