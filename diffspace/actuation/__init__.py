"""Actuation: joint friction (hybrid stick-slip, smooth) and drive profiles."""

from .drive import BSpline, Cubic, Cycloidal, Drive, PointToPoint, Quintic, RestToRest, Tabulated, Trapezoid
from .friction import MODELS as FRICTION_MODELS, JointFriction

__all__ = ["FRICTION_MODELS", "BSpline", "Cubic", "Cycloidal", "Drive", "JointFriction", "PointToPoint", "Quintic", "RestToRest",
           "Tabulated", "Trapezoid"]
