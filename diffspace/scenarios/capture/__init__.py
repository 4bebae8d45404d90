"""Manipulator capture: the arm's rod hits a free-floating target (Cai et al. 2021, Aerospace 8:381)."""

from .model import CaptureModel, ContactMode
from .outcome import CaptureOutcome
from .scenario import Capture, CaptureParams, approach_direction

__all__ = ["Capture", "CaptureModel", "CaptureOutcome", "CaptureParams", "ContactMode", "approach_direction"]
