"""Diffrax drivers: free floating-base motion, hybrid (event-driven) systems with their event root finder and
neutral events, fixed-step solves (:mod:`~diffspace.integrate.fixed_step`), and
constrained (index-1 + Baumgarte + projection) dynamics in any coordinates, smooth ODEs
(:func:`~diffspace.integrate.smooth.solve_smooth`); one :class:`~diffspace.integrate.settings.SolverSettings` for
all of them; the differentiation mode of every solve (:mod:`~diffspace.integrate.adjoint`)."""

from .adjoint import DIFFERENTIATION, adjoint_for, solve_adjoint
from .constrained import (
    AbstractConstrainedSystem,
    ConstraintRows,
    Stabilization,
    constrained_accelerations,
    constraint_rows,
    constraint_velocity,
    kkt_solve,
    project_positions,
    project_velocities,
    violation,
)
from .constrained_solve import ConstrainedSolution, ProjectedSolver, output_multipliers, solve_constrained
from .event_root import EventRootFinder
from .fixed_step import FixedStepSolution, ZeroStep, bounded_step_solve, fixed_step_solve
from .free import Trajectory, check_result, simulate
from .hybrid import EXTREMUM_MARGIN, AbstractHybridSystem, HybridSolution, hybrid_solve
from .neutral import neutral_event
from .settings import SolverSettings
from .smooth import solve_smooth

__all__ = [
    "DIFFERENTIATION",
    "AbstractHybridSystem",
    "EXTREMUM_MARGIN",
    "AbstractConstrainedSystem",
    "ConstrainedSolution",
    "ConstraintRows",
    "FixedStepSolution",
    "HybridSolution",
    "ProjectedSolver",
    "EventRootFinder",
    "Stabilization",
    "SolverSettings",
    "Trajectory",
    "check_result",
    "bounded_step_solve",
    "fixed_step_solve",
    "ZeroStep",
    "constrained_accelerations",
    "constraint_rows",
    "constraint_velocity",
    "adjoint_for",
    "hybrid_solve",
    "kkt_solve",
    "neutral_event",
    "output_multipliers",
    "project_positions",
    "project_velocities",
    "simulate",
    "solve_adjoint",
    "solve_constrained",
    "solve_smooth",
    "violation",
]
