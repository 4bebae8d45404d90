"""A failed run still leaves its results: ``summary.json`` with the status, the reason and the time reached,
the time series up to the failure (undefined after it: NaN, never zeros) and the report, and the command ends
with exit status 3 naming the failure and where the results are."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from diffspace.app.cli import main

CONFIGS = Path(__file__).resolve().parent.parent / "configs"


@pytest.mark.timeout(600)
def test_a_run_stopped_by_its_step_budget_writes_its_trajectory_so_far(tmp_path, capsys):
    out = tmp_path / "run"
    code = main(["run", str(CONFIGS / "ejection_plane.toml"), "--out", str(out), "--quiet",
                 "--set", "simulation.max_steps=10", "--set", "simulation.rtol=1e-12"])
    assert code == 3
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("solver failure:") and str(out) in err
    summary = json.loads((out / "summary.json").read_text())
    assert list(summary)[:3] == ["status", "reason", "time_reached_s"]
    assert summary["status"] == "solver_failure"
    reached = summary["time_reached_s"]
    assert 0.0 < reached < 3.0
    series = np.load(out / "timeseries.npz")
    t = series["t_s"]
    before, after = t <= reached, t > reached
    assert after.any() and before.sum() > 1
    assert all(np.isfinite(series[k][before]).all() for k in series.files)
    assert any(np.isnan(series[k][after]).all() for k in series.files if k != "t_s")
    assert (out / "report.html").is_file() and (out / "manifest.json").is_file()


@pytest.mark.timeout(600)
def test_a_run_without_separation_writes_its_summary(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["run", str(CONFIGS / "ejection_plane.toml"), "--out", str(out), "--quiet",
                 "--set", "simulation.t_final_s=0.2"]) == 3
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "no_event" and "separation" in summary["reason"]
    assert summary["time_reached_s"] == pytest.approx(0.2)
    assert 50.0 < summary["equivalent_mass_kg"] < 116.1  # what is defined without a separation is still reported
