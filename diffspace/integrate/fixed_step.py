"""Fixed-step integration on a grid of saved times: a one-step map ``(y_{n+1}, c_{n+1}) = step(t_n, y_n, c_n, h)``
applied a fixed number of times between two saved times (a nested ``lax.scan``, [`fixed_step_solve`][diffspace.integrate.fixed_step.fixed_step_solve]) or, for
a horizon known only at run time, a number computed at run time ([`bounded_step_solve`][diffspace.integrate.fixed_step.bounded_step_solve]). ``c`` is what the scheme carries from step to step
besides the state (for velocity Verlet, the accelerations it applied last: one force evaluation per step), set up
by ``start(t_0, y_0, h)``.

For models whose step is set by stability and whose stiff terms a scheme of their own handles (for instance the
velocity-Verlet scheme of `diffspace.bodies.rope_stepping`): no step-size control, no
rejected steps, the saved states are exact step ends (no interpolation). Differentiable in forward and reverse
mode; reverse mode recomputes each saved interval (``jax.checkpoint``), so it stores one state per saved time and
one interval's steps at a time.
"""

from __future__ import annotations

from collections.abc import Callable

import equinox as eqx
import equinox.internal as eqxi
import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float, Int, PyTree


class ZeroStep(eqx.Module):
    """A ``start`` of [`fixed_step_solve`][diffspace.integrate.fixed_step.fixed_step_solve] and
    [`bounded_step_solve`][diffspace.integrate.fixed_step.bounded_step_solve]: the carry at ``t = 0``
    is what a step of length zero, ``step(0, y0, carry, 0)``, returns from the placeholder ``carry`` (for a scheme
    whose zero-length step leaves the state as it is and evaluates its rates there). That step is taken inside
    the loop, so the step is compiled once instead of twice. ``fixed_step_solve``'s loop, whose length is static,
    takes it before every saved interval and keeps it only in the first (one step in ``steps_per_save + 1``);
    ``bounded_step_solve``'s, whose trip count is a run-time value, takes it in the first interval only."""

    carry: PyTree


class FixedStepSolution(eqx.Module):
    """States ``ys`` (leading axis: saved times ``ts``), the number of steps taken, whether every saved state
    is finite (a non-finite state means the step was too large for the motion: the run failed) and whether the
    step budget allowed the steps asked for ([`bounded_step_solve`][diffspace.integrate.fixed_step.bounded_step_solve])."""

    ts: Float[Array, " T"]
    ys: PyTree
    num_steps: Int[Array, ""]
    finite: Bool[Array, ""]
    within_budget: Bool[Array, ""]


def fixed_step_solve(step: Callable[[Array, PyTree, PyTree, Array], tuple[PyTree, PyTree]],
                     start: Callable[[Array, PyTree, Array], PyTree] | ZeroStep, y0: PyTree, t_end, n_save: int,
                     steps_per_save: int) -> FixedStepSolution:
    """Apply ``step(t, y, c, h)`` over ``[0, t_end]`` from ``(y0, start(0, y0, h))`` (or a
    [`ZeroStep`][diffspace.integrate.fixed_step.ZeroStep]'s carry): ``n_save`` equally spaced saved times (both
    ends included) and ``steps_per_save`` equal steps between two of them (``h = t_end / ((n_save - 1)
    steps_per_save)``); the states ``y`` are saved."""
    ts = jnp.linspace(0.0, t_end, n_save)
    h = (ts[1] - ts[0]) / steps_per_save
    zero_step = isinstance(start, ZeroStep)

    def interval(carry, t0):
        def one(yc, i):  # i = -1: the zero-length step, kept in the first interval only
            if not zero_step:
                return step(t0 + i * h, *yc, h), None
            new = step(t0 + jnp.maximum(i, 0) * h, *yc, jnp.where(i < 0, 0.0, h))
            discard = (i < 0) & (t0 != ts[0])
            return jax.tree.map(lambda old, fresh: jnp.where(discard, old, fresh), yc, new), None

        return jax.lax.scan(one, carry, jnp.arange(-1 if zero_step else 0, steps_per_save))[0]

    ys, finite = _saved_states(step, start, y0, ts, h, interval)
    return FixedStepSolution(ts, ys, jnp.asarray((n_save - 1) * steps_per_save), finite, jnp.asarray(True))


def bounded_step_solve(step: Callable[[Array, PyTree, PyTree, Array], tuple[PyTree, PyTree]],
                       start: Callable[[Array, PyTree, Array], PyTree] | ZeroStep, y0: PyTree, t_end, n_save: int,
                       max_step, max_steps: int, differentiation: str = "reverse") -> FixedStepSolution:
    """[`fixed_step_solve`][diffspace.integrate.fixed_step.fixed_step_solve] for a horizon ``t_end`` known only at run time: ``k = ceil(dt_save / max_step)``
    equal steps between two saved times (``dt_save = t_end / (n_save - 1)``, ``h = dt_save / k <= max_step``), a
    loop whose trip count is computed at run time, bounded by ``max_steps`` steps in all; ``within_budget`` is
    ``False`` when the bound forced longer steps than ``max_step``. ``differentiation``: ``"reverse"`` (a
    checkpointed loop, ``jax.grad``) or ``"forward"`` (``jax.jvp``), as [`diffspace.integrate.adjoint`][diffspace.integrate.adjoint]."""
    ts = jnp.linspace(0.0, t_end, n_save)
    k_max = max(1, max_steps // (n_save - 1))
    wanted = jnp.ceil((ts[1] - ts[0]) / max_step)
    k = jnp.clip(wanted, 1, k_max).astype(int)
    h = (ts[1] - ts[0]) / k
    kind = {"reverse": "checkpointed", "forward": "lax"}[differentiation]
    zero_step = isinstance(start, ZeroStep)  # then the first interval starts at i = -1, the zero-length step

    def interval(carry, t0):
        def one(state):
            i, yc = state
            return i + 1, step(t0 + jnp.maximum(i, 0) * h, *yc, jnp.where(i < 0, 0.0, h))

        first = jnp.where(zero_step & (t0 == ts[0]), -1, 0)
        return eqxi.while_loop(lambda state: state[0] < k, one, (first, carry), max_steps=k_max + zero_step,
                               kind=kind)[1]

    ys, finite = _saved_states(step, start, y0, ts, h, interval)
    return FixedStepSolution(ts, ys, (n_save - 1) * k, finite, wanted <= k_max)


def _saved_states(step, start, y0, ts, h, interval) -> tuple[PyTree, Bool[Array, ""]]:
    """The states at ``ts`` (``interval(carry, t0)`` advances ``(y, c)`` from ``t0`` to the next saved time;
    reverse mode recomputes each interval) and whether all are finite."""

    def save(carry, t0):
        carry = interval(carry, t0)
        return carry, carry[0]

    c0 = start.carry if isinstance(start, ZeroStep) else start(ts[0], y0, h)
    _, ys = jax.lax.scan(jax.checkpoint(save), (y0, c0), ts[:-1])
    ys = jax.tree.map(lambda a, b: jnp.concatenate([a[None], b]), y0, ys)
    return ys, jnp.all(jnp.stack([jnp.all(jnp.isfinite(leaf)) for leaf in jax.tree.leaves(ys)]))
