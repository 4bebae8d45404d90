"""Config pieces shared by the scenarios: the ``[robot]`` and ``[simulation]`` tables."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..io.config import Field
from ..status import ConfigError
from ..io import load_robot

ROBOT_FIELDS = {"path": Field("path", required=True, help="URDF or TOML robot; root link = floating base")}

SIMULATION_FIELDS = {
    "t_final_s": Field("float", 3.0, gt=0.0),
    "rtol": Field("float", 1e-8, gt=0.0, max=1e-2),
    "atol": Field("float", 1e-10, gt=0.0, max=1e-2),
    "n_save": Field("int", 301, min=2, max=100_000),
    "max_steps": Field("int", 100_000, min=10),
    "progress": Field("bool", False),
}


def robot_from_config(cfg: dict):
    """Load ``cfg['robot']['path']``; loader errors become one-line ``ConfigError``s naming the key."""
    path: Path = cfg["robot"]["path"]
    try:
        return load_robot(path)
    except (ValueError, KeyError, FileNotFoundError) as err:
        raise ConfigError(f"robot.path: {err}") from None


def joint_angles_from_config(robot, value, key: str) -> np.ndarray:
    """Joint angles (rad) from a named attitude or a list of degrees, checked against the robot."""
    if isinstance(value, str):
        names = dict(robot.attitudes)
        if value not in names:
            raise ConfigError(f"{key}: unknown attitude '{value}' (known: {', '.join(names) or 'none'})")
        return np.asarray(names[value], dtype=float)
    if not isinstance(value, list) or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in value):
        raise ConfigError(f"{key}: expected an attitude name or a list of joint angles in degrees")
    if len(value) != robot.n_joints:
        raise ConfigError(f"{key}: expected {robot.n_joints} joint angles, got {len(value)}")
    angles = np.deg2rad(np.asarray(value, dtype=float))
    lower, upper = np.asarray(robot.lower), np.asarray(robot.upper)
    bad = [i + 1 for i in range(robot.n_joints) if not lower[i] - 1e-12 <= angles[i] <= upper[i] + 1e-12]
    if bad:
        raise ConfigError(f"{key}: joints {bad} outside their limits")
    return angles
