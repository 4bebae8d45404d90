"""Diffrax driver of :mod:`.constrained`: any solver (explicit or implicit), optional per-step projection,
multipliers and the constraint-violation history on the output grid, and a status."""

from __future__ import annotations

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float, Int

from ..core.status import Status, first_failure, flag
from .constrained import (
    AbstractConstrainedSystem,
    Stabilization,
    constrained_accelerations,
    constraint_rows,
    max_abs,
    violation,
    project_positions,
    project_velocities,
)
from .settings import SolverSettings
from .smooth import solve_smooth


class ConstrainedSolution(eqx.Module):
    """States on the output grid and what the constraints did there.

    ``multipliers``: ``lambda`` (holonomic rows, then linear rows; ``None`` unless asked for); ``position_violation``:
    ``max |Phi|``; ``velocity_violation``: ``max |[Phi'; psi]|``; ``status``: ``OK``, ``SOLVER_FAILURE``
    (the solve stopped early), ``NON_FINITE`` or ``NOT_CONVERGED`` (the initial state could not be made
    consistent to ``consistency_tol``).
    """

    ts: Float[Array, " T"]
    q: Float[Array, "T nq"]
    w: Float[Array, "T nv"]
    multipliers: Float[Array, "T mk"] | None
    position_violation: Float[Array, " T"]
    velocity_violation: Float[Array, " T"]
    num_steps: Int[Array, ""]
    status: Int[Array, ""]


class _Args(eqx.Module):
    system: AbstractConstrainedSystem
    stabilization: Stabilization


def _project(system: AbstractConstrainedSystem, iterations: int, t, y):
    q, w = y
    q = project_positions(system, t, q, iterations)
    return q, project_velocities(system, t, q, w)


class ProjectedSolver(diffrax.AbstractAdaptiveSolver, diffrax.AbstractWrappedSolver):
    """Wraps a Diffrax solver: every step's end point ``(q, w)`` is projected onto the constraint manifold.

    The wrapped step always runs as after a jump (``made_jump=True``), so FSAL solvers re-evaluate their first
    stage at the projected state instead of reusing the derivative at the unprojected one. The error estimate
    is the wrapped solver's (of the unprojected step); the dense output runs from the projected start to the
    projected end of the step (its interior stage slopes are the unprojected step's, so points inside a step
    carry drift of the order of one step's). ``args`` must be the driver's ``_Args``.
    """

    solver: diffrax.AbstractSolver

    @property
    def term_structure(self):
        return self.solver.term_structure

    @property
    def interpolation_cls(self):  # pyright: ignore
        return self.solver.interpolation_cls

    @property
    def root_finder(self):  # implicit solvers: Diffrax sets the wrapped root finder's tolerances through this
        return self.solver.root_finder

    @property
    def term_compatible_contr_kwargs(self):
        return self.solver.term_compatible_contr_kwargs

    def order(self, terms):
        return self.solver.order(terms)

    def error_order(self, terms):
        return self.solver.error_order(terms)

    def init(self, terms, t0, t1, y0, args):
        return self.solver.init(terms, t0, t1, y0, args)

    def step(self, terms, t0, t1, y0, args, solver_state, made_jump):
        y1, y_error, dense_info, solver_state, result = self.solver.step(terms, t0, t1, y0, args, solver_state, True)
        y1 = _project(args.system, args.stabilization.iterations, t1, y1)
        if "y1" in dense_info:  # the dense output ends at the projected point
            dense_info = dict(dense_info, y1=y1)
        return y1, y_error, dense_info, solver_state, result

    def func(self, terms, t0, y0, args):
        return self.solver.func(terms, t0, y0, args)


def _vector_field(t, y, args: _Args):
    q, w = y
    accel, _ = constrained_accelerations(args.system, t, q, w, args.stabilization)
    return args.system.rates(q, w), accel


def solve_constrained(
    system: AbstractConstrainedSystem,
    q0: Float[Array, " nq"],
    w0: Float[Array, " nv"],
    t_final: float,
    stabilization: Stabilization = Stabilization(),
    solver: diffrax.AbstractSolver | None = None,
    settings: SolverSettings = SolverSettings(n_save=201),
    consistency_tol: float = 1e-9,
    dtmax: float | None = None,
    project_initial: bool = False,
    multipliers: bool = False,
    adjoint: diffrax.AbstractAdjoint | None = None,
) -> ConstrainedSolution:
    """Integrate the constrained system from ``(q0, w0)`` to ``t_final``; states saved at ``settings.n_save`` times.

    ``solver``: any Diffrax ODE solver (default Tsit5; Kvaerno5 for stiff systems), with the PID step-size
    controller of ``settings`` (:func:`~diffspace.integrate.smooth.solve_smooth`); wrapped in :class:`ProjectedSolver` when ``stabilization.project`` (the saved states are then
    projected too, since output points fall inside steps where the dense output carries one step's drift).
    ``project_initial``: make ``(q0, w0)`` consistent first (otherwise an initial violation above
    ``consistency_tol`` gives ``NOT_CONVERGED``). ``multipliers``: also evaluate ``lambda`` at the saved
    states, with the violations from the same constraint rows (one more compiled copy of the constraint derivatives; see
    :func:`output_multipliers` to get them later). Gradients flow through Diffrax's
    ``RecursiveCheckpointAdjoint`` (bounded loops only). Pure: use under ``jit``/``vmap``/``grad``.
    """
    args = _Args(system, stabilization)
    y0 = (q0, w0)
    if project_initial:
        y0 = _project(system, max(stabilization.iterations, 3), 0.0, y0)
    solver = solver or diffrax.Tsit5()
    if stabilization.project:
        solver = ProjectedSolver(solver)
    sol = solve_smooth(_vector_field, y0, t_final, settings, args=args, solver=solver, dtmax=dtmax, adjoint=adjoint)
    q, w = sol.ys
    if stabilization.project:  # output points lie inside steps: project them as well
        q, w = jax.vmap(lambda t, qk, wk: _project(system, stabilization.iterations, t, (qk, wk)))(sol.ts, q, w)
    if multipliers:  # violations and multipliers from one evaluation of the constraint rows
        position, velocity, lam = jax.vmap(lambda t, qk, wk: _saved_rows(system, stabilization, t, qk, wk))(
            sol.ts, q, w)
    else:
        position, velocity = jax.vmap(lambda t, qk, wk: violation(system, t, qk, wk))(sol.ts, q, w)
        lam = None
    finite = jnp.all(jnp.isfinite(q)) & jnp.all(jnp.isfinite(w))
    status = first_failure(
        flag(sol.result != diffrax.RESULTS.successful, Status.SOLVER_FAILURE),
        flag(~finite, Status.NON_FINITE),
        flag(~(position[0] <= consistency_tol), Status.NOT_CONVERGED),
    )
    return ConstrainedSolution(sol.ts, q, w, lam, position, velocity, sol.stats["num_steps"], status)


def _saved_rows(system: AbstractConstrainedSystem, stabilization: Stabilization, t, q, w):
    """``max |Phi|``, ``max |[Phi'; psi]|`` (as :func:`.constrained.violation`) and ``lambda`` at a saved state."""
    rows = constraint_rows(system, t, q, w, stabilization)
    lam = constrained_accelerations(system, t, q, w, stabilization, rows)[1]
    return max_abs(rows.position), max_abs(rows.velocity), lam


def output_multipliers(
    system: AbstractConstrainedSystem, stabilization: Stabilization, ts, q, w
) -> Float[Array, "T mk"]:
    """Multipliers ``lambda`` at saved states (holonomic rows, then linear rows)."""
    return jax.vmap(lambda t, qk, wk: constrained_accelerations(system, t, qk, wk, stabilization)[1])(ts, q, w)
