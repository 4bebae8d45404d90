r"""The smooth-ODE driver: ``dy/dt = f(t, y, args)`` on ``[0, t_final]``, saved on an equally spaced grid.

Adaptive: Tsit5, Tsitouras' 5(4) pair (or another Diffrax solver), with the PID step-size controller of
[`SolverSettings`][diffspace.integrate.settings.SolverSettings]. The solve never raises under ``jit`` (``throw=False``):
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
        args: Passed to ``field``.
        solver: Diffrax solver; default ``diffrax.Tsit5()``.
        dtmax: Largest adaptive step, ``None`` for no bound.
        adjoint: How the solve is differentiated (``None``: reverse mode,
            [`diffspace.integrate.adjoint`][diffspace.integrate.adjoint]).
        progress: Show Diffrax's progress bar.

    Returns:
        The Diffrax solution (``ts``, ``ys``, ``result``, ``stats``).
    """
    return diffrax.diffeqsolve(
        diffrax.ODETerm(field),
        solver or diffrax.Tsit5(),
        t0=0.0,
        t1=t_final,
        dt0=None,
        y0=y0,
        args=args,
        saveat=diffrax.SaveAt(ts=jnp.linspace(0.0, t_final, settings.n_save)),
        stepsize_controller=settings.controller(dtmax),
        max_steps=settings.max_steps,
        throw=False,
        adjoint=solve_adjoint(adjoint),
        progress_meter=diffrax.TqdmProgressMeter() if progress else diffrax.NoProgressMeter(),
    )
