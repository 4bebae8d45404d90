"""The guide "From test data to a robust design" (docs/guides/robust-design.md) runs as written: the impact fit,
the capture config with its contact-law dispersion taken from the fit (``from_fit``), a Monte-Carlo of it and
the optimization under uncertainty, with smaller sample sizes (``--set``) than the shipped config."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "guides" / "robust-design.md"
SMALLER = {"montecarlo": ["montecarlo.samples=128"],
           "optimize": ["optimize.uncertainty.samples=32", "optimize.uncertainty.validation_samples=256",
                        "optimize.steps=10", "optimize.sweep_samples=8"]}


def _commands() -> list[list[str]]:
    blocks = re.findall(r"```bash\n(.*?)```", GUIDE.read_text(), flags=re.S)
    return [shlex.split(line) for block in blocks for line in block.strip().splitlines()]


def _fit_config(root: Path) -> None:
    """Step 2 of the guide: the shipped capture config without its two contact lines, with the guide's robot
    path and ``from_fit``, saved as ``capture_robust_fit.toml`` in the working directory."""
    text = (ROOT / "configs" / "capture_robust.toml").read_text()
    block = re.findall(r"```toml\n(.*?)```", GUIDE.read_text(), flags=re.S)[0]
    robot, montecarlo = block.split("[montecarlo]")
    kept = [line for line in text.splitlines() if not line.startswith('"contact.')]
    body = "\n".join(kept).replace('[robot]\npath = "robots/esd_arm7.toml"', robot.strip())
    assert 'configs/robots' in body
    (root / "capture_robust_fit.toml").write_text(body + "\n\n[montecarlo]" + montecarlo)


@pytest.mark.slow  # ~6 min: a fit, a Monte-Carlo and a robust optimization of the capture
@pytest.mark.timeout(1800)
def test_robust_design_guide_runs_end_to_end(tmp_path):
    commands = _commands()
    assert [c[1] for c in commands] == ["fit", "montecarlo", "optimize", "optimize"]
    (tmp_path / "configs").symlink_to(ROOT / "configs")
    (tmp_path / "experiments").symlink_to(ROOT / "experiments")
    (tmp_path / "runs").mkdir()
    for command in commands[:3]:  # the capture chain (the ejection's command is the shipped config's own run)
        if command[1] == "montecarlo":
            _fit_config(tmp_path)
        extra = [arg for s in SMALLER.get(command[1], []) for arg in ("--set", s)]
        done = subprocess.run([sys.executable, "-m", "diffspace.app.cli", *command[1:], *extra, "--quiet"],
                              cwd=tmp_path, capture_output=True, text=True, timeout=1500)
        assert done.returncode == 0, (command, done.stderr[-3000:])
    fit = json.loads((tmp_path / "runs/impact_fit/summary.json").read_text())
    covariance = np.array(fit["covariance"])
    assert covariance.shape == (2, 2) and np.all(np.linalg.eigvalsh(covariance) > 0)
    summary = json.loads((tmp_path / "runs/capture_robust/summary.json").read_text())
    dispersions = summary["uncertainty"]["dispersions"]
    assert dispersions["contact.stiffness_N_m_n"]["std"] == pytest.approx(np.sqrt(covariance[0, 0]), rel=1e-9)
    robust, nominal = (summary["out_of_sample"][k]["violation_probability"]["peak_force_N"]["value"]
                       for k in ("robust", "nominal"))
    assert robust < nominal
    assert summary["optimum"]["capture.approach_speed_m_s"] < summary["nominal_optimum"]["design"][
        "capture.approach_speed_m_s"]
