"""Two-body impact along a line with a compliant contact law (Cai et al. 2021, Aerospace 8:381)."""

from .scenario import Impact, ImpactParams, friction_from_decelerations

__all__ = ["Impact", "ImpactParams", "friction_from_decelerations"]
