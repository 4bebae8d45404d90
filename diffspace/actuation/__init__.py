"""Actuation: joint friction (hybrid stick-slip, smooth) and drive profiles."""

from .drive import Drive, RestToRest, Tabulated
from .friction import MODELS as FRICTION_MODELS, JointFriction

__all__ = ["FRICTION_MODELS", "Drive", "JointFriction", "RestToRest", "Tabulated"]
