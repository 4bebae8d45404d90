"""The committed results reproduce: rerunning the shipped configs gives the numbers in experiments/results/ (ejection
study, flexible-arm paper example, unilateral press-and-slide time series to 1e-10 relative; the snare strike, the
snare closing and the mast deployment, ``experiments/committed_runs.py``, to 1e-12) (a refactoring that changes a result shows up here; a change of the physics regenerates the
results with the experiment script and says so in its commit).

Quantities that are round-off by nature (energy residuals, constraint violations, momentum drifts, solver step
counts, timings) are left out: they carry no result and change with any reordering of floating-point work.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from diffspace.app.cli import main

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "experiments" / "results"
ROUND_OFF = ("residual", "violation", "drift", "steps", "_s_wall", "time_compile", "n_segments")


def _numbers(tree, prefix=""):
    """Flatten a JSON tree into ``{dotted key: float}`` (booleans and strings left out)."""
    if isinstance(tree, dict):
        out = {}
        for key, value in tree.items():
            out.update(_numbers(value, f"{prefix}{key}."))
        return out
    if isinstance(tree, list):
        out = {}
        for i, value in enumerate(tree):
            out.update(_numbers(value, f"{prefix}{i}."))
        return out
    if isinstance(tree, (int, float)) and not isinstance(tree, bool):
        return {prefix.rstrip("."): float(tree)}
    return {}


def _assert_same(fresh: dict, committed: dict, rtol: float = 1e-10):
    a, b = _numbers(fresh), _numbers(committed)
    keys = [k for k in b if not any(word in k for word in ROUND_OFF)]
    assert keys and set(keys) <= set(a), sorted(set(keys) - set(a))[:10]
    bad = [(k, a[k], b[k]) for k in keys if not np.isclose(a[k], b[k], rtol=rtol, atol=1e-13)]
    assert not bad, bad[:10]


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_ejection_study_reproduces(tmp_path):
    """``python experiments/ejection_study.py --paper``: the five attitudes, full model and paper baseline."""
    assert main(["run", "--set", 'ejection.method="paper"', "--out", str(tmp_path / "study"), "--quiet"]) == 0
    fresh = json.loads((tmp_path / "study" / "summary.json").read_text())
    committed = json.loads((RESULTS / "ejection_study" / "summary.json").read_text())
    _assert_same(fresh["cases"], committed["cases"])


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_flexible_arm_paper_example_reproduces(tmp_path):
    """The paper's flexible-arm example (``experiments/flexible_arm_study.py``, its ``paper_example``)."""
    assert main(["run", str(ROOT / "configs" / "flexible_arm.toml"), "--out", str(tmp_path / "arm"), "--quiet"]) == 0
    fresh = json.loads((tmp_path / "arm" / "summary.json").read_text())
    committed = json.loads((RESULTS / "flexible_arm" / "study.json").read_text())["paper_example"]["summary"]
    _assert_same(fresh, committed)


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_unilateral_press_slide_reproduces(tmp_path):
    """The unilateral study's default press-and-slide task (``experiments/unilateral_study.py``): every state
    and contact-force sample of the shipped config."""
    out = tmp_path / "press"
    assert main(["run", str(ROOT / "configs" / "unilateral_contact.toml"), "--out", str(out), "--quiet"]) == 0
    for name in ("states.npz", "steps.npz"):
        fresh, committed = np.load(out / name), np.load(RESULTS / "unilateral" / "press_slide" / name)
        assert set(committed.files) <= set(fresh.files), name
        for key in committed.files:
            np.testing.assert_allclose(fresh[key], committed[key], rtol=1e-10, atol=1e-12, err_msg=f"{name}:{key}")


@pytest.mark.slow
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("name", ["snare", "snare_closing", "deployment"])
def test_shipped_run_reproduces(tmp_path, name):
    """``diffspace run`` of the snare strike, snare closing and deployment configs (the bench's shipped configs):
    every number of the summary committed by ``experiments/committed_runs.py`` to 1e-12 relative."""
    from diffspace.app.bench.scenarios import CONFIGS
    from diffspace.io.packaged import packaged_config

    out = tmp_path / name
    assert main(["run", str(packaged_config(CONFIGS[name])), "--out", str(out), "--quiet"]) == 0
    fresh = json.loads((out / "summary.json").read_text())
    committed = json.loads((RESULTS / "committed_runs" / name / "summary.json").read_text())
    _assert_same(fresh, committed, rtol=1e-12)
