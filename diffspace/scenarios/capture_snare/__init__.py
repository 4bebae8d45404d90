"""Capture through the snare: the arm's capture rod strikes one wire rope of the target's snare."""

from .scenario import CaptureSnare, CaptureSnareOutcome, CaptureSnareParams

__all__ = ["CaptureSnare", "CaptureSnareOutcome", "CaptureSnareParams"]
