"""Measured snare peak forces for ``diffspace fit`` (identification of the bending stiffness k_tor).

CSV columns ``node`` (1-based contact node), ``speed_m_s`` (approach speed) and ``peak_force_N`` (measured
peak contact force), one row per test. Each row sets ``strike.node`` and ``strike.approach_speed_m_s``; the
residual is relative, ``F_model / F_measured - 1`` (the paper gives no measurement uncertainty), so the
covariance is scaled by the residual variance.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ...io.tables import read_csv_columns
from ...core.status import ConfigError
from ..base import FitData

COLUMNS = ["node", "speed_m_s", "peak_force_N"]


def read_peak_forces(scenario, path: Path) -> FitData:
    """Rows of conditions (node, speed) and measured peak forces; ``ConfigError`` naming row and column."""
    cols = read_csv_columns(path, COLUMNS)
    last = scenario.rope.n_sections
    problems = [f"{path}: row {i + 1}, column node: must be an interior node 2..{last}, got {x:g}"
                for i, x in enumerate(cols["node"]) if not (float(x).is_integer() and 2 <= x <= last)]
    problems += [f"{path}: row {i + 1}, column {c}: must be > 0, got {x:g}"
                 for c in COLUMNS[1:] for i, x in enumerate(cols[c]) if not x > 0]
    if problems:
        raise ConfigError("\n".join(problems))
    conditions = {"strike.node": np.asarray(cols["node"], float), "strike.approach_speed_m_s": cols["speed_m_s"]}
    measured = {"peak_force_N": cols["peak_force_N"]}
    return FitData(conditions, measured, dict(measured), absolute_sigma=False)
