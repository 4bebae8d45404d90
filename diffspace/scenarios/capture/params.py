"""Capture parameters (what design work changes) and the approach direction they define."""

from __future__ import annotations

import jax.numpy as jnp
from jaxtyping import Array, Float

from ..declare import Declaration, declared
from ..parameter import AbstractParams
from .placement import TABLE4_COM, TABLE4_INERTIA, angles_check

APPROACH_SPEED = Declaration("capture.approach_speed_m_s", 0.05, gt=0.0, design=(1e-4, 10.0), log=True,
                             help="relative speed of the approach")
APPROACH_ANGLES = Declaration("capture.approach_angles_deg", (0.0, 0.0), design=(-89.0, 89.0), check=angles_check,
                              help="approach direction from the surface normal towards t1 and t2")
"""The approach: one declaration each, shared with the snare strike of the capture arm."""

INERTIA_NAMES = ("Ixx", "Iyy", "Izz", "Ixy", "Iyz", "Izx")


class CaptureParams(AbstractParams):
    """The approach, the contact law and the target's mass properties. The target is the scenario's own body: a
    mass set that is not physical (inertia not positive definite or against the triangle inequality) fails its
    run with status ``out_of_range`` (:func:`physical_target`)."""

    approach_speed: Float[Array, ""] = declared(APPROACH_SPEED)
    approach_angles: Float[Array, "2"] = declared(APPROACH_ANGLES)  # rad
    stiffness: Float[Array, ""] = declared("contact.stiffness_N_m_n", 1.491e7, gt=0.0, design=(1e3, 1e13), log=True,
                                           help="k (air-table fit with per-body Coulomb friction)")
    restitution: Float[Array, ""] = declared("contact.restitution_c", 0.608, gt=0.0, max=1.0, design=(1e-3, 1.0),
                                             help="input restitution c of the law (experiments/impact_validation.py)")
    exponent: Float[Array, ""] = declared("contact.exponent", 1.5, gt=0.0, max=5.0, design=(0.5, 3.0), help="n")
    target_mass: Float[Array, ""] = declared("target.mass_kg", 41.7, gt=0.0, design=(1e-3, 1e6), log=True)
    target_com: Float[Array, "3"] = declared("target.com_m", tuple(TABLE4_COM), design=(-10.0, 10.0),
                                             help="centre of mass in the target frame")
    target_inertia: Float[Array, "6"] = declared(
        "target.inertia_kg_m2", tuple(TABLE4_INERTIA), design=((0.0, 1e6),) * 3 + ((-1e6, 1e6),) * 3,
        help="Ixx, Iyy, Izz, Ixy, Iyz, Izx about the centre of mass, target frame",
        label=tuple(f"{name} about the centre of mass, target frame" for name in INERTIA_NAMES))


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
