"""``diffspace optimize``: the design problem, its seeding sweep, the multi-start search and, under uncertainty,
the statistics over dispersed runs and the out-of-sample check."""

from .command import run_optimize
from .problem import Problem, parse_problem

__all__ = ["Problem", "parse_problem", "run_optimize"]
