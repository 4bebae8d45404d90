"""Config pieces shared by the scenarios: the ``[robot]`` and ``[simulation]`` tables."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..io.config import Field
from ..core.status import ConfigError
from ..io import load_robot
from ..io.units import key_suffix, to_si
from ..integrate.settings import SolverSettings

ROBOT_FIELDS = {"path": Field("path", required=True, help="URDF or TOML robot; root link = floating base")}


def simulation_fields(defaults: SolverSettings, *, t_final_s: float | None = None, segments: bool = False,
                      min_save: int = 2, **extra: Field) -> dict[str, Field]:
    """A scenario's ``[simulation]`` table: its horizon ``t_final_s`` [s] (when it has one there), the
    [`SolverSettings`][diffspace.integrate.settings.SolverSettings] keys with the scenario's ``defaults``
    (``max_segments`` only for a hybrid solve, ``segments``; at least ``min_save`` saved states where its outputs
    need a resolved record), and the scenario's own keys ``extra``."""
    horizon = {} if t_final_s is None else {"t_final_s": Field("float", t_final_s, gt=0.0)}
    fields = {
        "rtol": Field("float", float(defaults.rtol), gt=0.0, max=1e-2, help="relative tolerance of the step control"),
        "atol": Field("float", float(defaults.atol), gt=0.0, max=1e-2, help="absolute tolerance of the step control"),
        "n_save": Field("int", defaults.n_save, min=min_save, max=100_000, help="saved states, equally spaced"),
        "max_steps": Field("int", defaults.max_steps, min=10, help="step budget (of each hybrid segment)"),
    }
    if segments:
        fields["max_segments"] = Field("int", defaults.max_segments, min=2, max=200,
                                       help="bound on hybrid segments (events + 1)")
    return horizon | fields | extra


def solver_settings(sim: dict) -> SolverSettings:
    """The solver settings of a validated ``[simulation]`` table (`simulation_fields`)."""
    keys = ("rtol", "atol", "n_save", "max_steps", "max_segments")
    return SolverSettings(**{key: sim[key] for key in keys if key in sim})


def robot_from_config(cfg: dict):
    """Load ``cfg['robot']['path']``; loader errors become one-line ``ConfigError``s naming the key."""
    path: Path = cfg["robot"]["path"]
    try:
        return load_robot(path)
    except (ValueError, KeyError, FileNotFoundError) as err:
        raise ConfigError(f"robot.path: {err}") from None


def joint_unit(robot, joint: int, rate: bool = False) -> str:
    """Config unit of a joint coordinate (``rate``: of its velocity): degrees for a revolute joint, metres for a
    prismatic one. Every joint list of a config (attitudes, design keys, limits) and every joint column of the
    results uses it."""
    unit = "deg" if robot.joint_kinds[joint + 1] == "revolute" else "m"
    return unit + "/s" if rate else unit


def joint_effort_unit(robot, joint: int) -> str:
    """Unit of a joint's generalised force: N m (revolute) or N (prismatic)."""
    return "N m" if robot.joint_kinds[joint + 1] == "revolute" else "N"


def joint_scales(robot) -> np.ndarray:
    """Per joint, the factor from its config unit (`joint_unit`) to SI: pi/180 for revolute joints
    (degrees), 1 for prismatic joints (metres)."""
    return np.array([to_si(joint_unit(robot, j)) for j in range(robot.n_joints)], dtype=float)


def joint_column(robot, joint: int, stem: str = "", rate: bool = False) -> str:
    """Column or metric name of a joint quantity with its unit suffix: ``joint2_deg``, ``joint3_change_m``."""
    return f"joint{joint + 1}{stem}{key_suffix(joint_unit(robot, joint, rate))}"


def joint_values_from_config(robot, value, key: str, check_limits: bool = True) -> np.ndarray:
    """Joint coordinates in SI (rad or m) from a named attitude of the robot or a list in config units
    (degrees for revolute joints, metres for prismatic ones), checked against the robot and its limits."""
    if isinstance(value, str):
        names = dict(robot.attitudes)
        if value not in names:
            raise ConfigError(f"{key}: unknown attitude '{value}' (known: {', '.join(names) or 'none'})")
        return np.asarray(names[value], dtype=float)
    if not isinstance(value, list) or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in value):
        raise ConfigError(f"{key}: expected an attitude name or a list of joint values (degrees for revolute "
                          "joints, metres for prismatic ones)")
    if len(value) != robot.n_joints:
        raise ConfigError(f"{key}: expected {robot.n_joints} joint values, got {len(value)}")
    coordinates = np.asarray(value, dtype=float) * joint_scales(robot)
    if check_limits:
        lower, upper = np.asarray(robot.lower), np.asarray(robot.upper)
        bad = [i + 1 for i in range(robot.n_joints) if not lower[i] - 1e-12 <= coordinates[i] <= upper[i] + 1e-12]
        if bad:
            raise ConfigError(f"{key}: joints {bad} outside their limits")
    return coordinates


def joint_values_to_config(robot, coordinates) -> np.ndarray:
    """SI joint coordinates (rad or m) in config units (degrees or metres)."""
    return np.asarray(coordinates, dtype=float) / joint_scales(robot)


def joint_columns(robot, coordinates, joints) -> dict[str, np.ndarray]:
    """Time-series columns of joint coordinates in config units, named with their unit (``joint2_deg``,
    ``joint3_m``): ``coordinates[:, k]`` (SI) is joint ``joints[k]`` (0-based)."""
    coordinates, scale = np.asarray(coordinates), joint_scales(robot)
    return {joint_column(robot, j): coordinates[:, k] / scale[j] for k, j in enumerate(joints)}


def joint_panels(robot, columns: dict, joints) -> list[tuple[str, dict]]:
    """Plot panels of `joint_columns`: revolute angles [deg] and prismatic travels [m] apart."""
    panels = []
    for unit, label in (("deg", "revolute joint angle [deg]"), ("m", "prismatic joint travel [m]")):
        curves = {f"joint {j + 1}": columns[joint_column(robot, j)] for j in joints if joint_unit(robot, j) == unit}
        if curves:
            panels.append((label, curves))
    return panels
