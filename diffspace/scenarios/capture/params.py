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
    Parameter("contact.stiffness_N_m_n", 1e3, 1e13, "N/mⁿ", "stiffness", log=True),
    Parameter("contact.restitution_c", 1e-3, 1.0, "-", "restitution"),
    Parameter("contact.exponent", 0.5, 3.0, "-", "exponent"),
)


INERTIA_NAMES = ("Ixx", "Iyy", "Izz", "Ixy", "Iyz", "Izx")
TARGET_PARAMETERS = (
    Parameter("target.mass_kg", 1e-3, 1e6, "kg", "target_mass", log=True),
    *(Parameter(f"target.com_m[{i}]", -10.0, 10.0, "m", "target_com", index=i) for i in range(3)),
    *(Parameter(f"target.inertia_kg_m2[{i}]", 0.0 if i < 3 else -1e6, 1e6, "kg m²", "target_inertia", index=i,
                help=f"{INERTIA_NAMES[i]} about the centre of mass, target frame") for i in range(6)),
)
"""The target's mass properties as continuous parameters: the target is the scenario's own body. A set that is
not physical (inertia not positive definite or against the triangle inequality) fails its run with status
``out_of_range`` (:func:`physical_target`)."""


class CaptureParams(AbstractParams):
    approach_speed: Float[Array, ""]
    approach_angles: Float[Array, "2"]  # rad
    stiffness: Float[Array, ""]
    restitution: Float[Array, ""]
    exponent: Float[Array, ""]
    target_mass: Float[Array, ""]  # kg
    target_com: Float[Array, "3"]  # centre of mass in the target frame [m]
    target_inertia: Float[Array, "6"]  # Ixx, Iyy, Izz, Ixy, Iyz, Izx about the centre of mass [kg m^2] (config order)


def inertia_tensor(moments: Float[Array, "6"], product_sign: float) -> Float[Array, "3 3"]:
    """The symmetric tensor of ``(Ixx, Iyy, Izz, Ixy, Iyz, Izx)``; ``product_sign`` -1 where the products are
    given negated (``target.product_convention = "negated"``)."""
    ixx, iyy, izz, ixy, iyz, izx = (moments[i] for i in range(6))
    s = product_sign
    return jnp.array([[ixx, s * ixy, s * izx], [s * ixy, iyy, s * iyz], [s * izx, s * iyz, izz]])


def physical_target(mass, inertia: Float[Array, "3 3"]):
    """Traced check of a rigid body's mass properties: mass > 0, principal moments > 0 and each at most the sum
    of the other two (1e-9 relative slack for round-off)."""
    moments = jnp.linalg.eigvalsh(inertia)  # ascending
    slack = 1e-9 * jnp.maximum(moments[2], 1.0)
    return (mass > 0) & (moments[0] > 0) & (moments[2] <= moments[0] + moments[1] + slack)


def approach_direction(basis, angles):
    """Unit approach direction (target frame) for angles ``[a1, a2]`` [rad] (module docstring)."""
    d = -basis[:, 0] + jnp.tan(angles[0]) * basis[:, 1] + jnp.tan(angles[1]) * basis[:, 2]
    return d / jnp.linalg.norm(d)
