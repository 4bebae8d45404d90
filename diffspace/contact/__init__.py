"""Contact mechanics: compliant normal force laws (Hertz + damping family), 1-D impact simulation, and
unilateral (rigid) contact with Coulomb friction as linear complementarity problems solved by Lemke."""

from .forces import (
    CHI_LAWS,
    LAWS,
    ChiLaw,
    ContactLaw,
    hertz_stiffness,
    kelvin_voigt_damping_ratio,
    kelvin_voigt_restitution_linear,
    restitution_closed_form,
    safe_power,
)
from .impact1d import FRICTION_MODELS, output_restitution, reference_indentation, simulate_impact
from .lcp import LemkeInfo, lemke

__all__ = [
    "CHI_LAWS",
    "FRICTION_MODELS",
    "LAWS",
    "ChiLaw",
    "ContactLaw",
    "LemkeInfo",
    "hertz_stiffness",
    "kelvin_voigt_damping_ratio",
    "kelvin_voigt_restitution_linear",
    "lemke",
    "output_restitution",
    "reference_indentation",
    "restitution_closed_form",
    "safe_power",
    "simulate_impact",
]
