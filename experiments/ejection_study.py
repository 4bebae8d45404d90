"""Reproduce the paper's five-attitude ejection study for the reference arm (plane mode, hybrid friction).

Writes ``experiments/results/ejection_study/``: ``summary.json`` (per attitude: equivalent masses space/plane,
separation time and velocity, joint angle changes, stable time/velocity/angular rate, energy budget),
``study.png`` and per-attitude time series and plots; with ``--paper`` the semi-analytic baseline's difference
to the full simulation too. Same as ``diffspace run --out experiments/results/ejection_study --overwrite``.
"""

import argparse
import sys
from pathlib import Path

from diffspace.app.cli import main as cli

OUT = Path(__file__).resolve().parent / "results" / "ejection_study"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paper", action="store_true", help="add the semi-analytic baseline comparison")
    args = parser.parse_args()
    extra = ["--set", 'ejection.method="paper"'] if args.paper else []
    return cli(["run", "--out", str(OUT), "--overwrite", *extra])


if __name__ == "__main__":
    sys.exit(main())
