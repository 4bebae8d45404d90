"""Three wire ropes of a snare closing on a free grapple shaft as the rotating ring turns (Cai et al. 2021)."""

from .analysis import CaptureZone, Headline, axis_distance, capture_zone, headline
from .model import ClosingModel, ClosingSample, ClosingState, closing_solve, initial_state, rope_nodes, sample
from .outcome import ClosingOutcome
from .scenario import ClosingParams, SnareClosing

__all__ = [
    "CaptureZone",
    "ClosingModel",
    "ClosingOutcome",
    "ClosingParams",
    "ClosingSample",
    "ClosingState",
    "Headline",
    "SnareClosing",
    "axis_distance",
    "capture_zone",
    "closing_solve",
    "headline",
    "initial_state",
    "rope_nodes",
    "sample",
]
