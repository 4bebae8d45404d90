"""diffspace: differentiable space-mechanism dynamics in JAX.

float64 is enabled at import (``jax_enable_x64``): the physics checks need 1e-9 agreement. A library import
changes nothing else; the command line turns on the persistent compilation cache (``diffspace.app.cache``).
"""

import jax

jax.config.update("jax_enable_x64", True)

from .dynamics import (  # noqa: E402
    base_momentum,
    bias_forces,
    bias_from_kinematics,
    body_placements,
    center_of_mass,
    configuration_derivative,
    forward_dynamics,
    frame_jacobian,
    frame_pose,
    generalized_jacobian,
    inverse_dynamics,
    kinematics,
    kinetic_energy,
    mass_matrix,
    mass_matrix_and_bias,
    mass_matrix_from_kinematics,
    momentum,
)
from .actuation.drive import Drive, RestToRest, Tabulated  # noqa: E402
from .io import load_robot  # noqa: E402
from .robot import LinkTree, Robot, build_robot  # noqa: E402

__all__ = [
    "Drive",
    "LinkTree",
    "RestToRest",
    "Tabulated",
    "Robot",
    "base_momentum",
    "bias_forces",
    "bias_from_kinematics",
    "body_placements",
    "build_robot",
    "center_of_mass",
    "configuration_derivative",
    "forward_dynamics",
    "frame_jacobian",
    "frame_pose",
    "generalized_jacobian",
    "inverse_dynamics",
    "kinematics",
    "kinetic_energy",
    "load_robot",
    "mass_matrix",
    "mass_matrix_and_bias",
    "mass_matrix_from_kinematics",
    "momentum",
]
