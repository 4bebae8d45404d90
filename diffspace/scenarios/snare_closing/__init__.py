"""Three wire ropes of a snare closing on a free grapple shaft as the rotating ring turns (Cai et al. 2021)."""

from .analysis import CaptureZone, Headline, axis_distance, capture_zone, headline
from .model import (
    ClosingModel,
    ClosingSample,
    ClosingState,
    ContactTerms,
    closing_solve,
    contact_forces,
    initial_state,
    internal_forces,
    rope_nodes,
    sample,
)
from .outcome import ClosingOutcome
from .scenario import ClosingParams, SnareClosing
from .semi_implicit import bending_step, semi_implicit_rates, semi_implicit_start, semi_implicit_step

__all__ = [
    "CaptureZone",
    "ClosingModel",
    "ClosingOutcome",
    "ClosingParams",
    "ClosingSample",
    "ClosingState",
    "ContactTerms",
    "Headline",
    "SnareClosing",
    "axis_distance",
    "bending_step",
    "capture_zone",
    "closing_solve",
    "contact_forces",
    "headline",
    "initial_state",
    "internal_forces",
    "rope_nodes",
    "sample",
    "semi_implicit_rates",
    "semi_implicit_start",
    "semi_implicit_step",
]
