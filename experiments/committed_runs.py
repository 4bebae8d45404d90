"""The shipped runs whose summaries are committed as regression results: the snare strike, the snare closing and
the mast deployment (``diffspace run`` of their configs). ``tests/test_committed_results.py`` reruns them and
compares every number to 1e-12 relative, so a refactoring that changes a result shows up; a change of the
physics reruns this script and says so in its commit.

    python experiments/committed_runs.py [name ...]      # writes experiments/results/committed_runs/<name>/
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

from diffspace.app.bench.scenarios import CONFIGS
from diffspace.app.cli import main
from diffspace.io.packaged import packaged_config

OUT = Path(__file__).resolve().parent / "results" / "committed_runs"
RUNS = ("snare", "snare_closing", "deployment")  # scenarios; their shipped configs are the bench's


def run(name: str, out: Path) -> dict:
    """``diffspace run`` of the scenario's shipped config into ``out``; its summary."""
    if main(["run", str(packaged_config(CONFIGS[name])), "--out", str(out), "--quiet"]) != 0:
        raise RuntimeError(f"diffspace run of {CONFIGS[name]} failed")
    return json.loads((out / "summary.json").read_text())


def write(name: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        summary = run(name, Path(tmp) / name)
    target = OUT / name
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    (target / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    print(f"{name}: {target / 'summary.json'}")


if __name__ == "__main__":
    for name in sys.argv[1:] or list(RUNS):
        write(name)
