"""Warm starts: wall time of the default study (``diffspace run``) in a fresh process, first with an empty
persistent compilation cache and then again with the cache the first run filled (the second run
should start in under 10 s). Both runs are real command-line processes with their own result folders."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _timed_run(out: Path, env: dict) -> float:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "diffspace.app.cli", "run", "--out", str(out), "--quiet"],
                          env=env, capture_output=True, text=True, timeout=1800)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"diffspace run failed (exit {done.returncode}): {done.stderr.strip()[-500:]}")
    return wall


def bench_second_run(progress) -> dict:
    """``first_run_wall_s`` (cold cache) and ``second_run_wall_s`` (warm cache) of ``diffspace run``."""
    progress.stage("diffspace run twice (cold, then warm compilation cache)")
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as out:
        env = {**os.environ, "DIFFSPACE_CACHE_DIR": cache}
        env.pop("DIFFSPACE_NO_CACHE", None)
        first = _timed_run(Path(out) / "first", env)
        second = _timed_run(Path(out) / "second", env)
        entries = sum(1 for _ in Path(cache).rglob("*") if _.is_file())
    return {"first_run_wall_s": first, "second_run_wall_s": second, "cache_entries": entries}
