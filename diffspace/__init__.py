"""diffspace: differentiable space-mechanism dynamics in JAX.

float64 is enabled at import (``jax_enable_x64``): the physics checks need 1e-9 agreement. The one other
import-time setting: XLA's CPU backend is asked for its classic loop emitters
(``--xla_cpu_use_fusion_emitters=false`` appended to ``XLA_FLAGS`` unless the user set that flag or
``DIFFSPACE_XLA_DEFAULTS=0``): on the dynamics kernels and the scenarios' solves they compile about twice as
fast and run as fast or faster than the newer MLIR emitters (measured by ``diffspace bench``). Like every
``XLA_FLAGS`` entry it only takes effect when diffspace is imported before JAX first compiles. Also (same
opt-out, unless the user set it): ``EQX_ON_ERROR=nan``, so Equinox's runtime checks inside Diffrax /
Optimistix / Lineax return NaN instead of raising through a host callback; a program with a host callback is
never written to JAX's persistent compilation cache, and diffspace reports failures as statuses anyway (a NaN
outcome is ``non_finite``). The command line turns on the persistent compilation cache
(``diffspace.app.cache``).
"""

import os

if os.environ.get("DIFFSPACE_XLA_DEFAULTS", "1") != "0" and "xla_cpu_use_fusion_emitters" not in os.environ.get(
    "XLA_FLAGS", ""
):
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_cpu_use_fusion_emitters=false").strip()
if os.environ.get("DIFFSPACE_XLA_DEFAULTS", "1") != "0":
    os.environ.setdefault("EQX_ON_ERROR", "nan")  # before Equinox is imported: it reads the variable once

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)

from .core.dynamics import (  # noqa: E402
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
from .core.compiled import CompiledRobot, compile_robot  # noqa: E402
from .core.robot import LinkTree, Robot, build_robot  # noqa: E402

__all__ = [
    "CompiledRobot",
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
    "compile_robot",
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
