"""Generic design work on any scenario, one subpackage per command: ``run`` (single or study), ``sweep``,
``montecarlo``, ``optimize``, ``fit``; beside them the machinery they share: cases (a scenario at assignments of
config keys), their batched evaluation and design gradients, labels, outcomes, progress, stages, stored programs,
several processes and timing."""

from ..scenarios import COMMAND_SECTIONS as SECTIONS
from .cases import CaseBuilder, get_key, set_key
from .distributed import SOLO, CoordinatedProcesses, Processes
from .fit import FitResult, least_squares, parse_fit, run_fit
from .gradient import design_metrics
from .montecarlo import MonteCarloSpec, parse_montecarlo, prepare_montecarlo, print_montecarlo, run_montecarlo
from .optimize import Problem, parse_problem, run_optimize
from .run import parse_study, run_single, run_study, simulate_default
from .sweep import SweepSpec, check_disk, parse_sweep, run_sweep

__all__ = [
    "SECTIONS",
    "SOLO",
    "CaseBuilder",
    "CoordinatedProcesses",
    "FitResult",
    "MonteCarloSpec",
    "Processes",
    "Problem",
    "SweepSpec",
    "check_disk",
    "design_metrics",
    "get_key",
    "least_squares",
    "prepare_montecarlo",
    "print_montecarlo",
    "parse_fit",
    "parse_montecarlo",
    "parse_problem",
    "parse_study",
    "parse_sweep",
    "run_fit",
    "run_montecarlo",
    "run_optimize",
    "run_single",
    "run_study",
    "run_sweep",
    "set_key",
    "simulate_default",
]
