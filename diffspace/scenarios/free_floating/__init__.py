"""A free-floating arm driven by joint torques (momentum-conserving base motion)."""

from .scenario import FreeFloating, FreeFloatingOutcome, FreeFloatingParams

__all__ = ["FreeFloating", "FreeFloatingOutcome", "FreeFloatingParams"]
