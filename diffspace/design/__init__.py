"""Generic design work on any scenario: ``run`` (single or study), ``sweep``, ``montecarlo``, ``optimize``, ``fit``."""

from ..scenarios import COMMAND_SECTIONS as SECTIONS
from .cases import CaseBuilder, get_key, set_key
from .distributed import SOLO, CoordinatedProcesses, Processes
from .fit import parse_fit, run_fit
from .gradient import design_metrics
from .least_squares import FitResult, least_squares
from .montecarlo import prepare_montecarlo, print_montecarlo, run_montecarlo
from .montecarlo_spec import MonteCarloSpec, parse_montecarlo
from .optimize import run_optimize
from .problem import Problem, parse_problem
from .run import parse_study, run_single, run_study, simulate_default
from .sweep import check_disk, run_sweep
from .sweep_spec import SweepSpec, parse_sweep

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
