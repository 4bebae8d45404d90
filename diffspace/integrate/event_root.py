r"""Bracketed root finder for event times: regula falsi with the Anderson-Bjoerck correction and a bisection
safeguard. It evaluates only the event function, never its derivative.

:func:`diffspace.integrate.hybrid_solve` ends a segment when the *first* of its mode conditions crosses zero,
so its event function is ``g(t) = min_i c_i(t)`` on the step's dense output: continuous, but with kinks
where the minimising condition changes. Plain Newton started at the step end can cycle on such a kink (at
loose tolerances, with long steps, Optimistix's ``Newton`` hit its iteration limit on 4 of 64 benchmark
ejections). Diffrax passes the step's ``[t_prev, t_next]`` as ``lower``/``upper``, across which ``g``
changes sign, and starts at ``t_next``. The iteration is:

1. evaluate ``g(upper)`` (the start point), then ``g(lower)``;
2. take the false-position point of the bracket,
   :math:`t = (l\,g_u - u\,g_l) / (g_u - g_l)`, and replace the end point on its side. When the same end
   survives twice, its stored value is scaled by the Anderson-Bjoerck factor
   :math:`m = 1 - g_\text{new}/g_\text{old}` (``1/2`` if ``m <= 0``), so both ends move and convergence is
   superlinear (order about 1.7) instead of linear;
3. bisect instead whenever the false-position point is not strictly inside the bracket or the same end has
   survived four steps in a row despite the scaling (kinks and flat stretches are then crossed by bisection).

No derivative of ``g`` is evaluated, so the compiled event search holds one evaluation of the conditions
instead of an evaluation plus its Jacobian-vector product: for conditions that run the dynamics (a
force-rate event needs the accelerations) that halves the root find's share of the program. Without a sign
change (Diffrax also calls the root find when no event happened, with ``g(t) = t_next - t``) the
false-position point of the two ends is the root of the linear ``g``: the interval end.

The event time's derivative comes from the implicit function theorem (Optimistix's ``ImplicitAdjoint``:
``dt/dp = -g_p / g_t`` at the root), independent of the iteration used to find it.
"""

from __future__ import annotations

from typing import Any, Callable, ClassVar

import equinox as eqx
import jax.numpy as jnp
import optimistix as optx
from jaxtyping import Array, Bool, Float, Int, PyTree, Scalar


_STUCK = 4  # bisect once the same end has survived this many false-position steps in a row


class _State(eqx.Module):
    lower: Scalar
    upper: Scalar
    g_lower: Scalar  # (Anderson-Bjoerck scaled) value at ``lower``
    g_upper: Scalar
    evaluated: Int[Array, ""]  # function evaluations so far
    kept: Int[Array, ""]  # +k: ``upper`` survived the last k steps; -k: ``lower`` did
    step: Scalar  # last change of t
    residual: Float[Array, ""]  # g at the last evaluated t
    bracketed: Bool[Array, ""]


def _false_position(lower, upper, g_lower, g_upper):
    denominator = g_upper - g_lower
    safe = jnp.where(denominator != 0.0, denominator, 1.0)
    return jnp.where(denominator != 0.0, (lower * g_upper - upper * g_lower) / safe, 0.5 * (lower + upper))


def _anderson_bjoerck(g_new, g_replaced):
    """Scale of the surviving end's value: ``1 - g_new / g_replaced``, or 1/2 where that is not positive."""
    m = 1.0 - g_new / jnp.where(g_replaced != 0.0, g_replaced, 1.0)
    return jnp.where(m > 0.0, m, 0.5)


def _shrink(state: _State, y, g):
    """``(lower, upper, g_lower, g_upper, kept)`` after replacing the end on ``g``'s side by ``(y, g)``; an
    end that survives again has its value scaled (Anderson-Bjoerck)."""
    replace_lower = jnp.sign(g) == jnp.sign(state.g_lower)
    scale_upper = jnp.where(state.kept > 0, _anderson_bjoerck(g, state.g_lower), 1.0)
    scale_lower = jnp.where(state.kept < 0, _anderson_bjoerck(g, state.g_upper), 1.0)
    lower = jnp.where(replace_lower, y, state.lower)
    upper = jnp.where(replace_lower, state.upper, y)
    g_lower = jnp.where(replace_lower, g, scale_lower * state.g_lower)
    g_upper = jnp.where(replace_lower, scale_upper * state.g_upper, g)
    kept = jnp.where(replace_lower, jnp.maximum(state.kept, 0) + 1, jnp.minimum(state.kept, 0) - 1)
    return lower, upper, g_lower, g_upper, kept


class EventRootFinder(optx.AbstractRootFinder):
    """Scalar root finder on the bracket ``[lower, upper]`` (Optimistix options): Anderson-Bjoerck false
    position with bisection (module notes). Stops when the last step or the bracket is below
    ``atol + rtol |t|``, or ``g = 0``."""

    rtol: float
    atol: float
    norm: ClassVar[Callable[[PyTree], Scalar]] = jnp.abs

    def init(self, fn, y, args, options: dict[str, Any], f_struct, aux_struct, tags) -> _State:
        if jnp.shape(y) != () or f_struct.shape != ():
            raise ValueError("EventRootFinder finds roots of scalar functions of a scalar")
        lower = jnp.asarray(options["lower"], f_struct.dtype)
        upper = jnp.asarray(options["upper"], f_struct.dtype)
        zero, inf = jnp.zeros((), f_struct.dtype), jnp.asarray(jnp.inf, f_struct.dtype)
        return _State(lower, upper, zero, zero, jnp.asarray(0), jnp.asarray(0), inf, inf, jnp.asarray(False))

    def step(self, fn, y, args, options, state: _State, tags):
        g, aux = fn(y, args)
        first, second, interior = state.evaluated == 0, state.evaluated == 1, state.evaluated >= 2
        # the first two evaluations are the bracket's ends (Diffrax starts at ``upper``)
        end_values = (jnp.where(second, g, state.g_lower), jnp.where(first, g, state.g_upper))
        bracketed = jnp.where(second, jnp.sign(end_values[0]) * jnp.sign(end_values[1]) < 0.0, state.bracketed)
        shrink = interior & bracketed
        shrunk = _shrink(state, y, g)
        ends = (state.lower, state.upper) + end_values + (jnp.asarray(0),)
        lower, upper, g_lower, g_upper, kept = (jnp.where(shrink, a, b) for a, b in zip(shrunk, ends))
        point = _false_position(lower, upper, g_lower, g_upper)
        inside = (point > lower) & (point < upper) & jnp.isfinite(point)
        slow = jnp.abs(kept) >= _STUCK  # one end survived _STUCK steps in a row despite the scaling
        chosen = jnp.where(inside & ~slow, point, 0.5 * (lower + upper))
        unbracketed = jnp.clip(point, lower, upper)  # linear g without a sign change: the interval end
        new_y = jnp.where(first, lower, jnp.where(bracketed, chosen, unbracketed))
        new_y = jnp.where(interior & (g == 0.0), y, new_y)  # an exact root: keep it
        step = jnp.where(first, jnp.inf, new_y - y)
        residual = jnp.where(first, jnp.inf, g)
        new_state = _State(lower, upper, g_lower, g_upper, state.evaluated + 1, kept, step, residual, bracketed)
        return new_y, new_state, aux

    def terminate(self, fn, y, args, options, state: _State, tags):
        scale = self.atol + self.rtol * jnp.abs(y)
        started = state.evaluated >= 2
        small_bracket = state.bracketed & (state.upper - state.lower < scale)
        done = started & ((jnp.abs(state.step) < scale) | (state.residual == 0.0) | small_bracket)
        return done, optx.RESULTS.successful

    def postprocess(self, fn, y, aux, args, options, state, tags, result):
        return y, aux, {}
