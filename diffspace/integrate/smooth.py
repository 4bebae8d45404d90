r"""The smooth-ODE driver: ``dy/dt = f(t, y, args)`` on ``[0, t_final]``, saved on an equally spaced grid.

Adaptive (default): Tsit5, Tsitouras' 5(4) pair, with the PID step-size controller of
[`SolverSettings`][diffspace.integrate.settings.SolverSettings]. Fixed step (``step`` given): a one-step map as a
Diffrax solver ([`StepMap`][diffspace.integrate.fixed_step.StepMap]) with constant steps of ``step`` (the last one
ends at ``t_final``); its saved states are linear interpolations between step ends. Either way the solve never raises under ``jit`` (``throw=False``):
the caller turns ``sol.result`` into a status. The events of a hybrid system need
[`hybrid_solve`][diffspace.integrate.hybrid.hybrid_solve] instead.
"""

from __future__ import annotations

from collections.abc import Callable

import diffrax
import jax.numpy as jnp
from jaxtyping import PyTree

from .adjoint import solve_adjoint
from .settings import SolverSettings


def solve_smooth(
    field: Callable,
    y0: PyTree,
    t_final,
    settings: SolverSettings = SolverSettings(),
    *,
    args=None,
    solver: diffrax.AbstractSolver | None = None,
    step=None,
    dtmax=None,
    adjoint: diffrax.AbstractAdjoint | None = None,
    progress: bool = False,
) -> diffrax.Solution:
    """Integrate ``field(t, y, args)`` from ``y0`` over ``[0, t_final]``, saving ``settings.n_save`` states.

    Args:
        field: Vector field ``f(t, y, args)``.
        y0: Initial state (a PyTree of arrays).
        t_final: End time (may be traced).
        settings: Tolerances, saved points and step budget.
        args: Passed to ``field`` (and to a fixed-step solver's map).
        solver: Diffrax solver; default ``diffrax.Tsit5()``.
        step: Fixed step: ``solver`` is then taken at constant steps of this length (no error control).
        dtmax: Largest adaptive step, ``None`` for no bound.
        adjoint: How the solve is differentiated (``None``: reverse mode,
            [`diffspace.integrate.adjoint`][diffspace.integrate.adjoint]).
        progress: Show Diffrax's progress bar.

    Returns:
        The Diffrax solution (``ts``, ``ys``, ``result``, ``stats``).
    """
    fixed = step is not None
    return diffrax.diffeqsolve(
        diffrax.ODETerm(field),
        solver or diffrax.Tsit5(),
        t0=0.0,
        t1=t_final,
        dt0=step,
        y0=y0,
        args=args,
        saveat=diffrax.SaveAt(ts=jnp.linspace(0.0, t_final, settings.n_save)),
        stepsize_controller=diffrax.ConstantStepSize() if fixed else settings.controller(dtmax),
        max_steps=settings.max_steps,
        throw=False,
        adjoint=solve_adjoint(adjoint),
        progress_meter=diffrax.TqdmProgressMeter() if progress else diffrax.NoProgressMeter(),
    )
