"""Reproduce the paper's five-attitude ejection study for the reference arm (plane mode, hybrid friction).

Writes ``experiments/results/ejection_study/``: ``summary.json`` (per attitude: equivalent masses space/plane,
separation time and velocity, joint angle changes, stable time/velocity/angular rate, energy budget),
``study.png`` and per-attitude time series and plots; with ``--paper`` also the semi-analytic baseline's
difference to the full simulation. Same as ``diffspace run`` with the output directory fixed.
"""

import argparse
import json
from pathlib import Path

from diffspace.app.cli import DEFAULT_CONFIG, load_scenario
from diffspace.scenarios.ejection_study import run_default

OUT = Path(__file__).resolve().parent / "results" / "ejection_study"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paper", action="store_true", help="add the semi-analytic baseline comparison")
    args = parser.parse_args()
    overrides = ['ejection.method="paper"'] if args.paper else []
    _, cfg = load_scenario(DEFAULT_CONFIG, overrides)
    summary = run_default(cfg, OUT)
    print(json.dumps({k: v["separation_velocity_m_s"] for k, v in summary["attitudes"].items()}, indent=1))


if __name__ == "__main__":
    main()
