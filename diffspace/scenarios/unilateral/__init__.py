"""Unilateral contact with friction by LCP: the paper's planar floating-base arm pressing on a plane."""

from .model import PlanarArm, planar_arm_robot
from .scenario import Unilateral, UnilateralOutcome, UnilateralParams

__all__ = ["PlanarArm", "Unilateral", "UnilateralOutcome", "UnilateralParams", "planar_arm_robot"]
