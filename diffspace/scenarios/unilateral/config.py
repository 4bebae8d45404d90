"""Config schema of the unilateral-contact scenario and the host-side checks that build it.

Angles in the config are in degrees; everything else SI. The defaults are the paper's example (Table 1,
sec. 4.1) and the press-and-slide controller of :mod:`.control`.
"""

from __future__ import annotations

import math

import numpy as np

from ...contact.unilateral import FORMULATIONS
from ...io.config import Field, Schema
from ...status import ConfigError

PAPER_JOINT_ANGLES_DEG = [60.0, -60.0, math.degrees(math.acos(3.0 / 5.0))]  # q0 = [.., pi/3, -pi/3, acos(3/5)]
PROFILE_KEYS = (
    "base_force_x_N", "base_force_y_N", "base_torque_N_m", "joint1_torque_N_m", "joint2_torque_N_m",
    "joint3_torque_N_m",
)


def _positive_list(values) -> str | None:
    return None if all(v > 0 for v in values) else "every value must be > 0"


def schema() -> Schema:
    profile = {key: Field("floats", None, help="input at the knots (default zero)") for key in PROFILE_KEYS}
    return Schema({
        "unilateral": {
            "formulation": Field("str", "acceleration", choices=FORMULATIONS,
                                 help="acceleration: the paper's LCP (eqs. 20-22); velocity: impulse time stepping"),
            "t_final_s": Field("float", 5.0, gt=0.0),
            "dt_s": Field("float", 0.01, gt=0.0, max=0.1),
            "initial_base_m": Field("floats", [0.0, 2.5], length=2, help="[x0, y0] (y0 = L)"),
            "initial_base_angle_deg": Field("float", 0.0),
            "initial_joint_angles_deg": Field("floats", PAPER_JOINT_ANGLES_DEG, length=3,
                                              help="relative angles from the downward vertical"),
            "initial_base_velocity_m_s": Field("floats", [0.0, 0.0], length=2),
            "initial_base_rate_deg_s": Field("float", 0.0),
            "initial_joint_rates_deg_s": Field("floats", [0.0] * 3, length=3),
        },
        "robot": {
            "masses_kg": Field("floats", [1000.0, 30.0, 20.0, 10.0], length=4, check=_positive_list),
            "lengths_m": Field("floats", [1.0, 1.0, 0.7, 0.5], length=4, check=_positive_list,
                               help="l0 (base centre to joint 1), l1..l3"),
            "base_inertia_kg_m2": Field("float", 601.667, gt=0.0),
        },
        "contact": {
            "mu": Field("float", 0.1, min=0.0),
            "baumgarte_rate_1_s": Field("float", 25.0, min=0.0, help="acceleration level: drift correction"),
            "closed_gap_m": Field("float", 1e-9, min=0.0, help="acceleration level: contact closed below this gap"),
        },
        "controller": {
            "enabled": Field("bool", True),
            "stiffness_N_m": Field("float", 200.0, min=0.0),
            "damping_N_s_m": Field("float", 60.0, min=0.0),
            "press_force_N": Field("float", 5.0, min=0.0),
            "press_ramp_s": Field("float", 0.5, gt=0.0),
            "normal_damping_N_s_m": Field("float", 20.0, min=0.0),
            "slide_m": Field("float", 0.3),
            "slide_start_s": Field("float", 0.5, min=0.0),
            "slide_duration_s": Field("float", 3.0, gt=0.0),
            "posture_stiffness_N_m_rad": Field("float", 50.0, min=0.0),
            "posture_damping_N_m_s_rad": Field("float", 20.0, min=0.0),
            "base_stiffness": Field("floats", [1000.0] * 3, length=3, min=0.0, help="[N/m, N/m, N m/rad]"),
            "base_damping": Field("floats", [2000.0] * 3, length=3, min=0.0, help="[N s/m, N s/m, N m s/rad]"),
        },
        "inputs": {"times_s": Field("floats", [0.0, 1.0], help="knot times, increasing"), **profile},
    })


def profile_table(section: dict) -> tuple[np.ndarray, np.ndarray]:
    """Knot times ``(K,)`` and input values ``(K, 6)`` of ``[inputs]``; ``ConfigError`` naming the key."""
    times = np.asarray(section["times_s"], dtype=float)
    if times.size < 2 or np.any(np.diff(times) <= 0.0):
        raise ConfigError("inputs.times_s: need at least two strictly increasing knot times")
    values = np.zeros((times.size, len(PROFILE_KEYS)))
    for i, key in enumerate(PROFILE_KEYS):
        if section[key] is not None:
            if len(section[key]) != times.size:
                raise ConfigError(f"inputs.{key}: expected {times.size} values (one per inputs.times_s), "
                                  f"got {len(section[key])}")
            values[:, i] = section[key]
    return times, values


def step_count(section: dict) -> int:
    """Number of fixed steps; ``ConfigError`` unless ``t_final_s`` is a whole number of ``dt_s``."""
    steps = section["t_final_s"] / section["dt_s"]
    if abs(steps - round(steps)) > 1e-9 * steps:
        raise ConfigError(f"unilateral.t_final_s: must be a multiple of unilateral.dt_s ({section['dt_s']:g} s)")
    return int(round(steps))
