"""Reproduce the speed comparison with Pinocchio and MuJoCo: ``python experiments/bench_report.py [--quick]``.

Runs :func:`diffspace.bench.run_bench` and writes ``experiments/results/bench/`` (bench.json,
summary.json, bench.png). Same as ``diffspace bench --out experiments/results/bench``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from diffspace.app.bench import run_bench

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", default=str(Path(__file__).resolve().parent / "results" / "bench"))
    args = parser.parse_args()
    run_bench(quick=args.quick, out=Path(args.out))
