"""Contact mechanics: compliant normal force laws (Hertz + damping family) and 1-D impact simulation."""

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

__all__ = [
    "CHI_LAWS",
    "FRICTION_MODELS",
    "LAWS",
    "ChiLaw",
    "ContactLaw",
    "hertz_stiffness",
    "kelvin_voigt_damping_ratio",
    "kelvin_voigt_restitution_linear",
    "output_restitution",
    "reference_indentation",
    "restitution_closed_form",
    "safe_power",
    "simulate_impact",
]
