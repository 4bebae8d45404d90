"""Contact mechanics: compliant normal force laws behind one abstract base (including the snare's virtual
spring), the two-body impact, and unilateral (rigid) contact with Coulomb friction as linear complementarity
problems solved by Lemke."""

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
from .virtual_spring import VirtualSpringLaw, eval_surface, fit_polynomial, fit_surface, linear_contact_time, virtual_impact
from .surfaces import Surface
from .lcp import LemkeInfo, lemke

__all__ = [
    "AbstractContactLaw",
    "CHI_LAWS",
    "FRICTION_MODELS",
    "LAWS",
    "ChiLaw",
    "ContactLaw",
    "ImpactFriction",
    "ImpactOutcome",
    "LemkeInfo",
    "Surface",
    "hertz_stiffness",
    "kelvin_voigt_damping_ratio",
    "kelvin_voigt_restitution_linear",
    "lemke",
    "output_restitution",
    "reference_indentation",
    "restitution_closed_form",
    "safe_power",
    "simulate_impact",
    "VirtualSpringLaw",
    "eval_surface",
    "fit_polynomial",
    "fit_surface",
    "linear_contact_time",
    "virtual_impact",
]
