"""Fixed-step integration on a grid of saved times: a one-step map ``(y_{n+1}, c_{n+1}) = step(t_n, y_n, c_n, h)``
applied a fixed number of times between two saved times (a nested ``lax.scan``); and the same map as a Diffrax
solver (:class:`StepMap`) for a horizon known only at run time. ``c`` is what the scheme carries from step to step
besides the state (for velocity Verlet, the accelerations it applied last: one force evaluation per step), set up
by ``start(t_0, y_0, h)``.

For models whose step is set by stability and whose stiff terms a scheme of their own handles (for instance the
velocity-Verlet scheme of :mod:`diffspace.bodies.rope_stepping`): no step-size control, no
rejected steps, the saved states are exact step ends (no interpolation). Differentiable in forward and reverse
mode; reverse mode recomputes each saved interval (``jax.checkpoint``), so it stores one state per saved time and
one interval's steps at a time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float, Int, PyTree


class FixedStepSolution(eqx.Module):
    """States ``ys`` (leading axis: saved times ``ts``), the number of steps taken and whether every saved state
    is finite (a non-finite state means the step was too large for the motion: the run failed)."""

    ts: Float[Array, " T"]
    ys: PyTree
    num_steps: Int[Array, ""]
    finite: Bool[Array, ""]


def fixed_step_solve(step: Callable[[Array, PyTree, PyTree, Array], tuple[PyTree, PyTree]],
                     start: Callable[[Array, PyTree, Array], PyTree], y0: PyTree, t_end, n_save: int,
                     steps_per_save: int) -> FixedStepSolution:
    """Apply ``step(t, y, c, h)`` over ``[0, t_end]`` from ``(y0, start(0, y0, h))``: ``n_save`` equally spaced saved
    times (both ends included) and ``steps_per_save`` equal steps between two of them
    (``h = t_end / ((n_save - 1) steps_per_save)``); the states ``y`` are saved."""
    ts = jnp.linspace(0.0, t_end, n_save)
    h = (ts[1] - ts[0]) / steps_per_save

    @jax.checkpoint
    def interval(carry, t0):
        def one(yc, i):
            return step(t0 + i * h, *yc, h), None

        carry, _ = jax.lax.scan(one, carry, jnp.arange(steps_per_save))
        return carry, carry[0]

    _, ys = jax.lax.scan(interval, (y0, start(ts[0], y0, h)), ts[:-1])
    ys = jax.tree.map(lambda a, b: jnp.concatenate([a[None], b]), y0, ys)
    finite = jnp.all(jnp.stack([jnp.all(jnp.isfinite(leaf)) for leaf in jax.tree.leaves(ys)]))
    return FixedStepSolution(ts, ys, jnp.asarray((n_save - 1) * steps_per_save), finite)


class StepMap(diffrax.AbstractSolver):
    """A model's own one-step map ``(y_{n+1}, c_{n+1}) = step(t_n, y_n, c_n, h, args)`` as a Diffrax solver, its carry
    ``c`` the solver state (``c_0 = start(t_0, y_0, h, args)``, ``h`` the first step): use it with
    ``diffrax.ConstantStepSize`` (no error estimate) when the horizon is traced (``diffeqsolve``'s bounded loop,
    ``SaveAt`` by linear interpolation between steps, every adjoint) and :func:`fixed_step_solve` when it is static.
    The term's vector field serves only ``func`` (Diffrax's initial-step heuristics); ``step`` and ``start`` must be
    module-level functions (they are static). The map must accept a step of its own length (the last one may be
    shorter)."""

    step_map: Callable = eqx.field(static=True)
    start: Callable = eqx.field(static=True)
    term_structure: ClassVar = diffrax.AbstractTerm
    interpolation_cls: ClassVar = diffrax.LocalLinearInterpolation

    def order(self, terms) -> int:
        return 2

    def init(self, terms, t0, t1, y0, args):
        return self.start(t0, y0, t1 - t0, args)

    def step(self, terms, t0, t1, y0, args, solver_state, made_jump):
        y1, state = self.step_map(t0, y0, solver_state, t1 - t0, args)
        return y1, None, {"y0": y0, "y1": y1}, state, diffrax.RESULTS.successful

    def func(self, terms, t0, y0, args):
        return terms.vf(t0, y0, args)
