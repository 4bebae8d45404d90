"""Capture parameters (what design work changes) and the approach direction they define."""

from __future__ import annotations

import jax.numpy as jnp
from jaxtyping import Array, Float

from ..base import AbstractParams, Parameter

APPROACH_PARAMETERS = (
    Parameter("capture.approach_speed_m_s", 1e-4, 10.0, "m/s", "approach_speed", log=True),
    Parameter("capture.approach_angles_deg[0]", -89.0, 89.0, "deg", "approach_angles", index=0),
    Parameter("capture.approach_angles_deg[1]", -89.0, 89.0, "deg", "approach_angles", index=1),
)
CONTACT_PARAMETERS = (
    Parameter("contact.stiffness_N_m_n", 1e3, 1e13, "N/m^n", "stiffness", log=True),
    Parameter("contact.restitution_c", 1e-3, 1.0, "-", "restitution"),
    Parameter("contact.exponent", 0.5, 3.0, "-", "exponent"),
)


class CaptureParams(AbstractParams):
    approach_speed: Float[Array, ""]
    approach_angles: Float[Array, "2"]  # rad
    stiffness: Float[Array, ""]
    restitution: Float[Array, ""]
    exponent: Float[Array, ""]


def approach_direction(basis, angles):
    """Unit approach direction (target frame) for angles ``[a1, a2]`` [rad] (module docstring)."""
    d = -basis[:, 0] + jnp.tan(angles[0]) * basis[:, 1] + jnp.tan(angles[1]) * basis[:, 2]
    return d / jnp.linalg.norm(d)
