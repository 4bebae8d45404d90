"""Monte-Carlo throughput (cases per second) with 1, 2 and 4 cooperating processes on this machine.

The campaign of ``configs/ejection_montecarlo.toml`` (air-table ejection, stick-slip friction, five dispersed
keys) without sensitivities, ``--runs`` cases in chunks of ``--chunk-size``, is run by ``diffspace montecarlo``
alone and by N processes joined on 127.0.0.1 (``--coordinator --num-processes --process-id``), one after the
other, each into a fresh results directory. A first small run fills the persistent compilation cache (a
private directory) so that every measured process loads the compiled chunk instead of compiling it.

Reported per N: the lead's ``cases_per_s`` (cases over the wall time from its first claim until every chunk
is stored, other processes' start-up included), the job's wall time from launch to the last exit and its CPU
time (all processes), how many cases each process computed, and the machine's 1-minute load average after the
job (other users' work included: this machine is shared). Writes ``experiments/results/montecarlo/throughput.json``.
Run: ``python experiments/montecarlo_throughput.py [--runs 8192] [--processes 1 2 4]``
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "experiments" / "results" / "montecarlo"
CLI = "import sys; from diffspace.app.cli import main; sys.exit(main(sys.argv[1:]))"


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def job(config: Path, out: Path, n: int, settings: list[str], env: dict) -> tuple[dict, float, float]:
    """Run one campaign with ``n`` processes; its summary, wall time and CPU time (all processes)."""
    base = [sys.executable, "-c", CLI, "montecarlo", str(config), "--out", str(out), "--quiet", *settings]
    port = _port()
    commands = [base] if n == 1 else [
        base + ["--coordinator", f"127.0.0.1:{port}", "--num-processes", str(n), "--process-id", str(i)]
        for i in range(n)]
    start, cpu = time.perf_counter(), _children_cpu_s()
    processes = [subprocess.Popen(c, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for c in commands]
    codes = [p.wait() for p in processes]
    wall, cpu = time.perf_counter() - start, _children_cpu_s() - cpu
    if codes != [0] * n:
        raise RuntimeError(f"{n} processes exited with {codes}")
    return json.loads((out / "summary.json").read_text()), wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", type=Path, default=ROOT / "configs" / "ejection_montecarlo.toml")
    parser.add_argument("--runs", type=int, default=8192)
    parser.add_argument("--chunk-size", type=int, default=64)
    parser.add_argument("--processes", type=int, nargs="+", default=[1, 2, 4])
    args = parser.parse_args()
    settings = [f"--set=montecarlo.samples={args.runs}", f"--set=montecarlo.chunk_size={args.chunk_size}",
                "--set=montecarlo.sensitivity=[]"]
    results = {"config": str(args.config.relative_to(ROOT)) if args.config.is_relative_to(ROOT) else str(args.config),
               "runs": args.runs, "chunk_size": args.chunk_size, "cpu_count": os.cpu_count(), "jobs": []}
    with tempfile.TemporaryDirectory() as work:
        env = {**os.environ, "DIFFSPACE_CACHE_DIR": str(Path(work) / "cache")}
        warm = [f"--set=montecarlo.samples={2 * args.chunk_size}", *settings[1:]]
        _, wall, _ = job(args.config, Path(work) / "warm", 1, warm, env)
        results["warm_up_s"] = wall
        for index, n in enumerate(args.processes):
            summary, wall, cpu = job(args.config, Path(work) / f"job{index}_n{n}", n, settings, env)
            entry = {"processes": n, "cases_per_s": summary["cases_per_s"], "wall_s": wall, "cpu_s": cpu,
                     "load_average_1min_after": os.getloadavg()[0],
                     "cases_by_process": summary.get("cases_by_process", {"0": summary["computed_cases"]})}
            results["jobs"].append(entry)
            print(json.dumps(entry), flush=True)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "throughput.json").write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
