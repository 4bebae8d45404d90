"""Two-body impact along a line with a compliant contact law (SPEC 5.2)."""

from .scenario import Impact, ImpactParams, friction_from_decelerations

__all__ = ["Impact", "ImpactParams", "friction_from_decelerations"]
