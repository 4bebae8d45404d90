"""``diffspace montecarlo``: the ``[montecarlo]`` table, its input distributions, the campaign, its statistics
and sensitivities, and its plots."""

from .command import prepare_montecarlo, print_montecarlo, run_montecarlo
from .spec import MonteCarloSpec, parse_montecarlo

__all__ = ["MonteCarloSpec", "parse_montecarlo", "prepare_montecarlo", "print_montecarlo", "run_montecarlo"]
