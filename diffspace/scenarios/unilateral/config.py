"""Config schema of the unilateral-contact scenario and the host-side checks that build it.

Angles in the config are in degrees; everything else SI. The defaults are the paper's example (Table 1,
sec. 4.1) and the press-and-slide controller of :mod:`.control`.
"""

from __future__ import annotations

import math

import numpy as np

from ...contact.unilateral import FORMULATIONS
from ...io.config import Field
from ...core.status import ConfigError

PAPER_JOINT_ANGLES_DEG = [60.0, -60.0, math.degrees(math.acos(3.0 / 5.0))]  # q0 = [.., pi/3, -pi/3, acos(3/5)]
# Defaults, chosen for the paper's arm (reach 2.2 m): penetration beyond 0.5 mm is flagged (the on-plane value
# is ~4e-5 m; an impact penetrates at most its closing speed times the step); the manipulability
# sqrt(det(J_a J_a^T)) is 0.76 m^2 at the paper's q0 and falls to 0.21 m^2 on the default 0.3 m slide, so the
# damping starts at a quarter of that (0.05 m^2, where the smallest singular value of J_a is ~0.02 m/rad) and
# reaches 1e-3 m^2 = (0.03 m/rad)^2 at the singular pose, above that singular value's square.
PENETRATION_TOLERANCE_M = 5e-4
PROFILE_KEYS = (
    "base_force_x_N", "base_force_y_N", "base_torque_N_m", "joint1_torque_N_m", "joint2_torque_N_m",
    "joint3_torque_N_m",
)


def _positive_list(values) -> str | None:
    return None if all(v > 0 for v in values) else "every value must be > 0"


def config_fields() -> dict:
    """The config keys the params do not declare."""
    profile = {key: Field("floats", None, help="input at the knots (default zero)") for key in PROFILE_KEYS}
    return {
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
            "baumgarte_rate_1_s": Field("float", 25.0, min=0.0, help="acceleration level: drift correction"),
            "closed_gap_m": Field("float", 1e-9, min=0.0, help="acceleration level: contact closed below this gap"),
            "restitution": Field("float", 0.0, min=0.0, max=1.0,
                                 help="acceleration level: Newton's coefficient of the impact impulses (0: plastic)"),
            "penetration_tolerance_m": Field("float", PENETRATION_TOLERANCE_M, gt=0.0,
                                             help="deeper penetration of the plane is flagged (status 'penetration')"),
        },
        "controller": {
            "enabled": Field("bool", True),
            "slide_m": Field("float", 0.3),
            "slide_start_s": Field("float", 0.5, min=0.0),
            "slide_duration_s": Field("float", 3.0, gt=0.0),
        },
        "inputs": {"times_s": Field("floats", [0.0, 1.0], help="knot times, increasing"), **profile},
    }


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


def check_reach(joint1, tip_x0: float, slide: float, link_lengths) -> None:
    """``ConfigError`` naming ``controller.slide_m`` when the commanded tip path ``x`` from ``tip_x0`` to
    ``tip_x0 + slide`` along the plane ``y = 0`` leaves the arm's reach with the base at its initial pose:
    the points of the plane at distance ``r_min <= r <= r_max`` from joint 1 (``r_max = l1 + l2 + l3``,
    ``r_min = max(0, 2 max l - r_max)``)."""
    lengths = np.asarray(link_lengths, dtype=float)
    r_max, height = float(lengths.sum()), abs(float(joint1[1]))
    r_min = max(0.0, 2.0 * float(lengths.max()) - r_max)
    ends = np.array([tip_x0, tip_x0 + slide]) - float(joint1[0])
    farthest = float(np.abs(ends).max())
    nearest = 0.0 if ends.min() <= 0.0 <= ends.max() else float(np.abs(ends).min())
    if math.hypot(farthest, height) <= r_max and math.hypot(nearest, height) >= r_min:
        return
    path = f"the commanded tip path x = {tip_x0:.4g} .. {tip_x0 + slide:.4g} m on the plane y = 0"
    if height > r_max:
        reach = f"the plane lies {height - r_max:.4g} m beyond the arm's reach ({r_max:.4g} m from joint 1)"
    else:
        half = math.sqrt(r_max**2 - height**2)
        reach = f"the arm reaches x = {joint1[0] - half:.4g} .. {joint1[0] + half:.4g} m of it"
        if r_min > height:
            reach += f" outside |x - {joint1[0]:.4g}| < {math.sqrt(r_min**2 - height**2):.4g} m"
    raise ConfigError(f"controller.slide_m: {path} leaves the arm's reach: {reach} with the base at its initial pose")
