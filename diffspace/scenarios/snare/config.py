"""Snare config: the schema, cross-key checks and the striking mass of the air-table arm (host side)."""

from __future__ import annotations

import functools
from pathlib import Path

import jax.numpy as jnp
import numpy as np

from ...bodies import APPROACHES, END_CONDITIONS, MAX_STEP, SCHEMES, RopeSpec
from ...contact import LAWS
from ...io.config import Field
from ...core.status import ConfigError
from ...integrate import SolverSettings
from ..robot_config import robot_from_config, simulation_fields

METHODS = ("dynamic", "virtual")
SOLVER = SolverSettings(rtol=1e-6, atol=1e-9, n_save=600, max_steps=400_000)
"""Defaults of ``[simulation]`` (the tolerances serve ``scheme = "tsit5"``)."""


def config_fields() -> dict:
    """The snare's config keys other than its declared parameters (:mod:`.params`)."""
    pos = dict(gt=0.0)
    return {
        "snare": {
            "ring_radius_m": Field("float", 0.15, **pos, help="R_cm of both rings (2R = largest d_se)"),
            "end_distance_m": Field("float", 0.26, **pos, help="d_se at the impact"),
            "approach": Field("str", "against_bow", choices=APPROACHES),
        },
        "rope": {
            "length_m": Field("float", 0.30, **pos),
            "diameter_m": Field("float", 0.003, **pos),
            "linear_density_kg_m": Field("float", 0.0365, **pos),
            "n_sections": Field("int", 30, min=3, max=400),
            "compression_ratio": Field("float", 1.0, min=0.0, max=1.0, help="0 = tension-only (paper)"),
            "end_condition": Field("str", "pinned", choices=END_CONDITIONS,
                                   help="pinned (paper) or clamped: a k_tor spring at each end fitting"),
            "rest_bend_total_deg": Field("float", 26.0, min=0.0, max=180.0),
            "axial_damping_ratio": Field("float", 0.2, min=0.0, help="of one section's axial mode"),
            "bending_damping_ratio": Field("float", 0.2, min=0.0, help="of one node's bending mode"),
        },
        "shaft": {"radius_m": Field("float", 0.01, **pos), "axis": Field("floats", [0.0, 0.0, 1.0], length=3)},
        "contact": {
            "law": Field("str", "zhiying_qishao", choices=LAWS),
            "exponent": Field("float", 1.5, gt=1.0, max=3.0),
        },
        "strike": {
            "mass_source": Field("str", "arm", choices=("arm", "value")),
        },
        "arm": {
            "robot": Field("path", "robots/esd_arm7.toml"),
            "free_joints": Field("any", [2, 4, 6]),
            "free_joint_angles_rad": Field("floats", [0.8727, 1.7453, 0.8727]),
            "frame": Field("str", "rod_tip"),
            "direction": Field("str", "rod_normal", choices=("rod_normal", "rod_axis")),
        },
        "virtual_spring": {
            "max_depth_m": Field("float", 0.03, **pos, help="range of the static pressing solves"),
            "n_depths": Field("int", 60, min=4, max=400),
            "max_force_N": Field("float", 8.0, **pos, help="F_A: the polynomial fits F_c in [0, F_A]"),
            "degree": Field("int", 6, min=1, max=8),
            "end_distances_m": Field("floats", [0.24, 0.25, 0.26, 0.27, 0.28], help="d_se grid of the surface fit"),
        },
        "simulation": simulation_fields(
            SOLVER, min_save=10,
            method=Field("str", "dynamic", choices=METHODS, help="impact model of the design metrics (run reports both)"),
            scheme=Field("str", "semi_implicit", choices=SCHEMES,
                         help="full-rope integrator: fixed-step semi-implicit (axial and contact forces implicit, second order) or adaptive Tsit5"),
            max_step_s=Field("float", MAX_STEP, gt=0.0, max=1e-3,
                             help="semi_implicit: largest step; the step is 0.99 x the bending forces' stability limit below it"),
            horizon_factor=Field("float", 1.5, min=1.0, help="x the virtual-spring contact duration")),
    }


def ring_problems(end_distance: float, ring_radius: float, length: float, end_key: str, radius_key: str) -> list[str]:
    """Rope-on-ring geometry: a slack rope (``d_se < length``) whose ends fit on the ring (``d_se <= 2 R``)."""
    problems = []
    if end_distance >= length:
        problems.append(f"{end_key}: must be < rope.length_m = {length:g} (a slack rope)")
    if end_distance > 2.0 * ring_radius:
        problems.append(f"{end_key}: must be <= 2 * {radius_key} = {2 * ring_radius:g}")
    return problems


def check_config(cfg: dict) -> None:
    """Cross-key checks the field ranges cannot express; raises ConfigError naming the key."""
    s, r, i, a = cfg["snare"], cfg["rope"], cfg["strike"], cfg["arm"]
    problems = ring_problems(s["end_distance_m"], s["ring_radius_m"], r["length_m"], "snare.end_distance_m",
                             "snare.ring_radius_m")
    if not 2 <= i["node"] <= r["n_sections"]:
        problems.append(f"strike.node: {i['node']} out of range 2..{r['n_sections']} (interior nodes, 1-based)")
    if not cfg["virtual_spring"]["end_distances_m"]:
        problems.append("virtual_spring.end_distances_m: need at least one end distance for the surface fit")
    free = a["free_joints"]
    if not isinstance(free, list) or not all(isinstance(j, int) for j in free) or len(free) != len(a["free_joint_angles_rad"]):
        problems.append("arm.free_joints: expected a list of 1-based joints, one per arm.free_joint_angles_rad")
    if problems:
        raise ConfigError("\n".join(problems))


def rope_spec(r: dict, end_condition: str) -> RopeSpec:
    """The :class:`RopeSpec` of a validated ``[rope]`` table."""
    a = lambda x: jnp.asarray(x, dtype=float)  # noqa: E731
    return RopeSpec(a(r["linear_density_kg_m"]), a(r["rest_bend_total_deg"]), a(r["axial_damping_ratio"]),
                    a(r["bending_damping_ratio"]), a(r["compression_ratio"]), a(r["diameter_m"]), r["length_m"],
                    r["n_sections"], end_condition)


def arm_masses(cfg: dict) -> dict:
    """Effective masses [kg] of the striking arm (``mass_source = "arm"``): ``selected`` and the alternatives
    (:func:`.mass.arm_effective_mass`); empty for ``mass_source = "value"``."""
    if cfg["strike"]["mass_source"] == "value":
        return {}
    arm = cfg["arm"]
    return dict(_arm_masses(Path(arm["robot"]), tuple(arm["free_joints"]), tuple(arm["free_joint_angles_rad"]),
                            arm["frame"], arm["direction"]))


@functools.lru_cache(maxsize=8)
def _arm_masses(robot_path: Path, free_joints: tuple, angles_free: tuple, frame: str, direction: str) -> tuple:
    """Cached: every case of a sweep rebuilds the scenario from its config, the arm is the same."""
    from .mass import arm_effective_mass

    robot = robot_from_config({"robot": {"path": robot_path}})
    bad = [j for j in free_joints if not 1 <= j <= robot.n_joints]
    if bad:
        raise ConfigError(f"arm.free_joints: joints {bad} out of range 1..{robot.n_joints}")
    angles = np.zeros(robot.n_joints)
    angles[np.asarray(free_joints, dtype=int) - 1] = angles_free
    try:
        masses = arm_effective_mass(robot, angles, [j - 1 for j in free_joints], frame, direction)
    except KeyError as err:
        raise ConfigError(f"arm.frame: {err}") from None
    return tuple(masses.items())
