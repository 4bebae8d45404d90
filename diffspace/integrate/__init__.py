"""Diffrax drivers: free floating-base motion, hybrid (event-driven) systems and their event root finder."""

from .event_root import SafeguardedNewton
from .free import Trajectory, check_result, simulate
from .hybrid import HybridSolution, hybrid_solve

__all__ = ["HybridSolution", "SafeguardedNewton", "Trajectory", "check_result", "hybrid_solve", "simulate"]
