"""Spring ejection of a manipulator from its emergency separation device (Cai, Wang, Deng, Yang 2023)."""

from .model import FLIGHT, RAIL, EjectionModel, EjectionRun, equivalent_mass, rigid_motion, simulate_ejection
from .outcome import EjectionOutcome, ejection_outcome
from .paper import paper_ejection
from .scenario import Ejection, EjectionParams

__all__ = [
    "FLIGHT",
    "RAIL",
    "Ejection",
    "EjectionModel",
    "EjectionOutcome",
    "EjectionParams",
    "EjectionRun",
    "ejection_outcome",
    "equivalent_mass",
    "paper_ejection",
    "rigid_motion",
    "simulate_ejection",
]
