"""``diffspace run``: one simulation, or a study of several cases of the same scenario batched in one call."""

from .command import parse_study, run_single, run_study, simulate_default

__all__ = ["parse_study", "run_single", "run_study", "simulate_default"]
