"""Contact mechanics: compliant normal force laws behind one abstract base, and the two-body impact."""

from .forces import (
    CHI_LAWS,
    LAWS,
    AbstractContactLaw,
    ChiLaw,
    ContactLaw,
    hertz_stiffness,
    kelvin_voigt_damping_ratio,
    kelvin_voigt_restitution_linear,
    restitution_closed_form,
    safe_power,
)
from .impact import (
    FRICTION_MODELS,
    ImpactFriction,
    ImpactOutcome,
    output_restitution,
    reference_indentation,
    simulate_impact,
)
from .surfaces import Surface

__all__ = [
    "AbstractContactLaw",
    "CHI_LAWS",
    "FRICTION_MODELS",
    "LAWS",
    "ChiLaw",
    "ContactLaw",
    "ImpactFriction",
    "ImpactOutcome",
    "Surface",
    "hertz_stiffness",
    "kelvin_voigt_damping_ratio",
    "kelvin_voigt_restitution_linear",
    "output_restitution",
    "reference_indentation",
    "restitution_closed_form",
    "safe_power",
    "simulate_impact",
]
