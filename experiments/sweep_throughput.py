"""Sweep throughput of the ejection (cases per second) against the chunk size: one compiled, vmapped call per
chunk, through the generic design layer (``diffspace.design.evaluate_cases``), as ``diffspace sweep`` runs it.

For each chunk size B in 1..4096 (powers of 4 by default) the same B random attitudes are evaluated twice: the
first call compiles (reported separately), the second is timed. Writes
``experiments/results/sweep_throughput/throughput.json`` and ``throughput.png``.
Run: ``python experiments/sweep_throughput.py [--sizes 1 4 16 64 256 1024 4096]``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from diffspace.design import CaseBuilder
from diffspace.design.evaluate import evaluate_cases
from diffspace.scenarios import load_scenario

HERE = Path(__file__).resolve().parent
CONFIG = HERE.parent / "configs" / "ejection_sweep.toml"
OUT = HERE / "results" / "sweep_throughput"
KEYS = ["ejection.attitude[1]", "ejection.attitude[3]", "ejection.attitude[5]"]


def measure(size: int, builder: CaseBuilder, rng: np.random.Generator) -> dict:
    cases = [dict(zip(KEYS, rng.uniform(-150.0, 150.0, 3))) for _ in range(size)]
    start = time.perf_counter()
    evaluate_cases(builder, cases, size)
    first = time.perf_counter() - start
    start = time.perf_counter()
    result = evaluate_cases(builder, cases, size)
    elapsed = time.perf_counter() - start
    ok = int(np.sum(result.status == 0))
    return {"chunk_size": size, "first_call_s": first, "time_s": elapsed, "cases_per_s": size / elapsed, "ok": ok}


def main() -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 4, 16, 64, 256, 1024, 4096])
    args = parser.parse_args()
    scenario = load_scenario(CONFIG)
    import tomllib

    raw = tomllib.loads(CONFIG.read_text())
    raw["robot"]["path"] = str((CONFIG.parent / raw["robot"]["path"]).resolve())
    raw.pop("sweep")
    builder = CaseBuilder(raw, CONFIG.parent, {p.key for p in scenario.design_space()})
    rng = np.random.default_rng(0)
    rows = []
    for size in args.sizes:
        rows.append(measure(size, builder, rng))
        print(json.dumps(rows[-1]))
    OUT.mkdir(parents=True, exist_ok=True)
    result = {"config": str(CONFIG.name), "rows": rows}
    (OUT / "throughput.json").write_text(json.dumps(result, indent=2) + "\n")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 3.5))
    ax.loglog([r["chunk_size"] for r in rows], [r["cases_per_s"] for r in rows], "o-")
    ax.set_xlabel("chunk size (cases per vmapped call)")
    ax.set_ylabel("ejections per second")
    ax.grid(alpha=0.3, which="both")
    fig.tight_layout()
    fig.savefig(OUT / "throughput.png", dpi=110)
    return result


if __name__ == "__main__":
    main()
