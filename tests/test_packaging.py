"""A non-editable install runs the default study from a directory outside the repository: configs and robots
are shipped inside the package (``diffspace/data``, found with ``importlib.resources``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_non_editable_install_runs_the_default_study_elsewhere(tmp_path):
    site = tmp_path / "site"
    # build isolation as a user's `pip install .` (it fetches the build backend pyproject.toml asks for)
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site), str(ROOT)],
                   check=True, timeout=600)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    script = ("import sys, diffspace; print(diffspace.__file__); "
              "from diffspace.app.cli import main; sys.exit(main(['run', '--out', 'results', '--quiet']))")
    env = {**os.environ, "PYTHONPATH": str(site)}
    done = subprocess.run([sys.executable, "-c", script], cwd=elsewhere, env=env, capture_output=True, text=True,
                          timeout=1500)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].startswith(str(site))  # the installed copy, not the checkout
    summary = json.loads((elsewhere / "results" / "summary.json").read_text())
    assert len(summary["cases"]) == 5
    assert summary["cases"]["attitude_5"]["separation_velocity_m_s"] == pytest.approx(0.22753, rel=1e-4)
