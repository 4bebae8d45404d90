"""First-call compile time of every scenario's forward program and headline gradient (the `scenario_compile`
stage of `diffspace bench`, run alone: a few minutes instead of the full bench).

    python experiments/scenario_compile.py [--out experiments/results/scenario_compile] [name ...]

Writes ``compile.json`` (per scenario: config, forward_compile_s, forward_run_s, gradient_compile_s,
gradient_run_s) and prints the bench's summary lines. Run it on an otherwise idle machine.
"""

from __future__ import annotations

import argparse
import json
import platform
from pathlib import Path

import jax

from diffspace.app.bench.scenarios import scenario_compile_times, summary_lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="scenarios (default: all)")
    parser.add_argument("--out", type=Path, default=Path("experiments/results/scenario_compile"))
    args = parser.parse_args()
    jax.config.update("jax_enable_x64", True)
    rows = scenario_compile_times(args.names or None)
    args.out.mkdir(parents=True, exist_ok=True)
    meta = {"machine": platform.machine(), "cpus": __import__("os").cpu_count(), "jax": jax.__version__}
    (args.out / "compile.json").write_text(json.dumps({"meta": meta, "scenario_compile": rows}, indent=2))
    print("\n".join(summary_lines(rows)))


if __name__ == "__main__":
    main()
