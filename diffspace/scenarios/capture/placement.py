"""Capture geometry from the config: target inertia (Table 4 convention), contact surface, aim point, the
tangent basis of the approach angles and the target's placement facing the arm; config checks."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ...contact import ContactLaw, Surface, hertz_stiffness
from ...core.robot import validate_mass_properties
from ...core.status import ConfigError

TABLE4_COM = [-0.040931, 0.00137, 0.342138]
TABLE4_INERTIA = [3.40766, 3.15477, 1.61416, 0.00353, 0.02253, -0.08852]


def nonzero_check(v):
    return None if np.linalg.norm(v) > 0 else "must be non-zero"


def joints_check(v):
    if v in ("held", "free") or (isinstance(v, list) and all(type(j) is int for j in v)):
        return None
    return "expected 'held', 'free' or a list of 1-based joint indices (the free joints)"


def aim_check(v):
    ok = v == "central" or (isinstance(v, list) and len(v) == 3 and all(isinstance(x, (int, float)) for x in v))
    return None if ok else "expected 'central' or [x, y, z] in metres (target frame)"


def orientation_check(v):
    if v in ("rod_axis", "arm_com_line"):
        return None
    if isinstance(v, list) and len(v) == 4 and all(isinstance(x, (int, float)) for x in v) and np.linalg.norm(v) > 0:
        return None
    return "expected 'rod_axis', 'arm_com_line' or a non-zero quaternion [x, y, z, w] (target -> world)"


def angles_check(v):
    return None if all(abs(a) < 89.0 for a in v) else "angles must lie in (-89, 89) degrees"


def unit(v):
    v = np.asarray(v, float)
    return v / np.linalg.norm(v)


def rotation_between(a, b) -> np.ndarray:
    """Smallest rotation taking unit vector ``a`` to unit vector ``b``."""
    axis, c = np.cross(a, b), float(a @ b)
    if c < -1.0 + 1e-12:  # opposite: half turn about any perpendicular
        p = np.cross(a, [1.0, 0, 0] if abs(a[0]) < 0.9 else [0, 1.0, 0])
        p = p / np.linalg.norm(p)
        return 2.0 * np.outer(p, p) - np.eye(3)
    k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + k + k @ k / (1.0 + c)


def target_inertia(t: dict) -> np.ndarray:
    ixx, iyy, izz, ixy, iyz, izx = t["inertia_kg_m2"]
    s = 1.0 if t["product_convention"] == "tensor" else -1.0
    inertia = np.array([[ixx, s * ixy, s * izx], [s * ixy, iyy, s * iyz], [s * izx, s * iyz, izz]])
    try:
        validate_mass_properties(t["mass_kg"], inertia, "target.inertia_kg_m2")
    except ValueError as err:
        raise ConfigError(str(err)) from None
    return inertia


_margin = jax.jit(Surface.margin)  # one program at setup instead of a dozen eager operations


def surface_from_config(t: dict, tip_radius: float):
    """Surface module, aim point's surface point and normal, tangent basis, Hertz effective radius."""
    kind = "plane" if t["surface"] == "plane" else "cylinder"
    p0, u = np.asarray(t["surface_point_m"], float), unit(t["surface_direction"])
    com = np.asarray(t["com_m"], float)
    radius = t["shaft_radius_m"] if kind == "cylinder" else 0.0
    surface = Surface(jnp.asarray(p0), jnp.asarray(u), jnp.asarray(radius), jnp.asarray(t["extent_m"]),
                      jnp.asarray(1.0 if kind == "plane" else 0.0))
    central = t["aim_point_m"] == "central"
    aim = com if central else np.asarray(t["aim_point_m"], float)
    w = aim - p0
    if kind == "plane":
        normal, point = u, aim - (w @ u) * u
        helper = np.array([1.0, 0, 0]) if abs(u[0]) < 0.9 else np.array([0, 1.0, 0])
        t1 = unit(np.cross(u, helper))
        r_eff = tip_radius
    else:
        radial = w - (w @ u) * u
        if np.linalg.norm(radial) < 1e-9:
            raise ConfigError("target.aim_point_m: lies on the shaft axis (the side of the hit is undefined)")
        e = unit(radial)
        normal = -e if central else e  # central: the far side, so the normal line runs through the CoM
        point = p0 + (w @ u) * u + radius * normal
        t1 = u
        r_eff = np.sqrt(1.0 / (1.0 / tip_radius + 1.0 / radius) * tip_radius)  # Hertz: sqrt(R' R'')
    if float(_margin(surface, jnp.asarray(point))) < 0:
        raise ConfigError(f"target.aim_point_m: the aim point {np.round(point, 4).tolist()} is off the "
                          f"{'patch' if kind == 'plane' else 'shaft length'} (target.extent_m = {t['extent_m']:g})")
    basis = np.stack([normal, t1, np.cross(normal, t1)], axis=1)
    return surface, point, basis, r_eff


def contact_law(cfg: dict, r_eff: float) -> ContactLaw:
    c = cfg["contact"]
    if c["law"] == "kelvin_voigt":
        raise ConfigError("contact.law: 'kelvin_voigt' is not supported for capture (its force jumps to D v0 at "
                          "first touch); use a Hunt-Crossley-family law")
    k = c["stiffness_N_m_n"] if c["stiffness_source"] == "value" else float(
        hertz_stiffness(c["youngs1_Pa"], c["poisson1"], r_eff, c["youngs2_Pa"], c["poisson2"]))
    return ContactLaw(k, c["exponent"], c["restitution_c"], law=c["law"])


def free_joints(arm: dict, n: int) -> np.ndarray:
    spec = arm["joints"]
    if spec in ("held", "free"):
        return np.full(n, 1.0 if spec == "free" else 0.0)
    bad = [j for j in spec if not 1 <= j <= n]
    if bad:
        raise ConfigError(f"arm.joints: indices {bad} out of range 1..{n}")
    return np.array([1.0 if j + 1 in spec else 0.0 for j in range(n)])


