"""Measured ejection data for ``diffspace fit`` (identification of joint friction from air-table tests).

CSV rows: ``attitude`` (a named attitude of the robot) or one column per joint, ``q1_deg .. qn_deg`` (``q{j}_m``
for a prismatic joint); measured columns ``separation_velocity_m_s`` (required), optionally
``stable_angular_velocity_deg_s`` and ``joint{j}_change_final_deg`` (``_m`` for a prismatic joint) for free
joints ``j`` (1-based: the encoder reading after the ejection). Residuals are divided by the
``[measurement]`` standard deviations of the config.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from ...core.status import ConfigError
from ..base import FitData
from ..robot_config import joint_column, joint_unit, joint_values_to_config


def _coordinates(row: dict, r: int, path: Path, robot) -> np.ndarray:
    """Every joint's coordinate of one row, in config units (degrees or metres)."""
    names = dict(robot.attitudes)
    if "attitude" in row:
        if row["attitude"] not in names:
            raise ConfigError(f"{path}: row {r}, column attitude: unknown attitude {row['attitude']!r}")
        return joint_values_to_config(robot, names[row["attitude"]])
    columns = [f"q{j + 1}_{joint_unit(robot, j)}" for j in range(robot.n_joints)]
    try:
        return np.array([float(row[c]) for c in columns])
    except (KeyError, ValueError, TypeError):
        raise ConfigError(f"{path}: row {r}: need an 'attitude' column or numeric {', '.join(columns)}") from None


def read_ejection_data(scenario, path: Path) -> FitData:
    """Rows of conditions (every joint angle, degrees) and measured quantities, with their scales."""
    if not path.is_file():
        raise ConfigError(f"data file not found: {path}")
    with path.open(newline="", encoding="utf-8-sig") as fh:
        rows = list(csv.DictReader(fh))
    if not rows:
        raise ConfigError(f"{path}: no data rows")
    header = list(rows[0])
    if "separation_velocity_m_s" not in header:
        raise ConfigError(f"{path}: missing column separation_velocity_m_s (found: {', '.join(header)})")
    velocity, rate, angle, travel = scenario.measurement_std
    robot = scenario.robot
    scales = {"separation_velocity_m_s": velocity, "stable_angular_velocity_deg_s": rate}
    scales.update({joint_column(robot, j, "_change_final"): angle if joint_unit(robot, j) == "deg" else travel
                   for j in scenario.free})
    columns = [k for k in scales if k in header]
    angles, measured = [], {k: [] for k in columns}
    for r, row in enumerate(rows, start=1):
        angles.append(_coordinates(row, r, path, robot))
        for key in columns:
            cell = (row.get(key) or "").strip()
            if not cell:
                raise ConfigError(f"{path}: row {r}, column {key}: empty cell")
            try:
                measured[key].append(float(cell))
            except ValueError:
                raise ConfigError(f"{path}: row {r}, column {key}: not a number: {cell!r}") from None
            if not np.isfinite(measured[key][-1]):
                raise ConfigError(f"{path}: row {r}, column {key}: not finite: {cell!r}")
    angles = np.asarray(angles)
    conditions = {f"ejection.attitude[{i}]": angles[:, i] for i in range(robot.n_joints)}
    measured = {k: np.asarray(v) for k, v in measured.items()}
    sigma = {k: np.full(len(rows), scales[k]) for k in columns}
    return FitData(conditions, measured, sigma, absolute_sigma=True)
