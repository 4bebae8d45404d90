"""Measured ejection data for ``diffspace fit`` (identification of joint friction from air-table tests).

CSV rows: ``attitude`` (a named attitude of the robot) or ``q1_deg .. qn_deg``; measured columns
``separation_velocity_m_s`` (required), optionally ``stable_angular_velocity_deg_s`` and
``joint{j}_change_final_deg`` for free joints ``j`` (1-based: the encoder reading after the ejection).
Residuals are divided by the ``[measurement]`` standard deviations of the config.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from ...status import ConfigError
from ..base import FitData


def _angles(row: dict, r: int, path: Path, names: dict, n: int) -> np.ndarray:
    if "attitude" in row:
        if row["attitude"] not in names:
            raise ConfigError(f"{path}: row {r}, column attitude: unknown attitude {row['attitude']!r}")
        return np.rad2deg(np.asarray(names[row["attitude"]]))
    try:
        return np.array([float(row[f"q{j + 1}_deg"]) for j in range(n)])
    except (KeyError, ValueError, TypeError):
        raise ConfigError(f"{path}: row {r}: need an 'attitude' column or numeric q1_deg..q{n}_deg") from None


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
    velocity, rate, angle = scenario.measurement_std
    scales = {"separation_velocity_m_s": velocity, "stable_angular_velocity_deg_s": rate}
    scales.update({f"joint{j + 1}_change_final_deg": angle for j in scenario.free})
    columns = [k for k in scales if k in header]
    robot = scenario.robot
    names = dict(robot.attitudes)
    angles, measured = [], {k: [] for k in columns}
    for r, row in enumerate(rows, start=1):
        angles.append(_angles(row, r, path, names, robot.n_joints))
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
