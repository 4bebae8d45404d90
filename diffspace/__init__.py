"""diffspace: differentiable space-mechanism dynamics in JAX.

float64 is enabled at import (``jax_enable_x64``): the physics checks need 1e-9 agreement.
"""

import jax

jax.config.update("jax_enable_x64", True)

from .dynamics import (  # noqa: E402
    base_momentum,
    bias_forces,
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
    momentum,
)
from .io import load_robot  # noqa: E402
from .robot import LinkTree, Robot, build_robot  # noqa: E402

__all__ = [
    "LinkTree",
    "Robot",
    "base_momentum",
    "bias_forces",
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
    "momentum",
]
