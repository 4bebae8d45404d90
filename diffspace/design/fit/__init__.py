"""``diffspace fit``: identification of design variables from measured data by nonlinear least squares."""

from .command import parse_fit, run_fit
from .least_squares import FitResult, least_squares

__all__ = ["FitResult", "least_squares", "parse_fit", "run_fit"]
