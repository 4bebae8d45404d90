"""A user's Python session on the capture scenario, cold and warm, in fresh processes (issue: sessions that
start warm).

The session: ``import diffspace``, ``enable_cache``, load ``configs/capture.toml``, one ``simulate``, the
user's own ``jax.jit(jax.grad(f))`` of the peak contact force with respect to the approach speed (``f`` built on
``diffspace.metrics``, whose programs are stored; one design number: its derivative by forward mode), a
``jax.jit(jax.vmap(jax.grad(f)))`` over 8 speeds, and
``diffspace.metric_gradient``. Each step's wall time is printed by the child process; the parent runs the
session twice against one fresh cache directory (cold, then warm) and writes
``experiments/results/user_session/session.json``.

    python experiments/user_session.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "experiments" / "results" / "user_session"
TIMEOUT_S = 1800

SESSION = r'''
import json, time
t0 = time.perf_counter(); marks = {}
def mark(name):
    marks[name] = time.perf_counter() - t0 - sum(marks.values())
import jax, jax.numpy as jnp
import diffspace
diffspace.enable_cache()
mark("import")
scenario = diffspace.load_scenario("configs/capture.toml")
mark("load")
outcome = diffspace.simulate(scenario)
jax.block_until_ready(outcome)
mark("simulate")
KEY = "capture.approach_speed_m_s"
def peak_force(speed):
    return diffspace.metrics(scenario, {KEY: speed})["peak_force_N"]
grad = jax.jit(jax.grad(peak_force))
g = float(grad(0.05))
mark("user_jit_grad")
batch = jax.jit(jax.vmap(jax.grad(peak_force)))(jnp.linspace(0.03, 0.07, 8))
jax.block_until_ready(batch)
mark("user_vmap_grad")
found = diffspace.metric_gradient(scenario, "peak_force_N", {KEY: 0.05})
jax.block_until_ready(found)
mark("metric_gradient")
marks["total"] = time.perf_counter() - t0
marks["user_gradient"] = g
marks["metric_gradient_value"] = float(found.gradient[KEY])
print("SESSION " + json.dumps(marks))
'''


def run_session(cache: Path) -> dict:
    env = os.environ | {"DIFFSPACE_CACHE_DIR": str(cache)}
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", SESSION], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=TIMEOUT_S)
    if done.returncode != 0:
        raise RuntimeError(f"session failed: {done.stderr[-3000:]}")
    line = next(x for x in done.stdout.splitlines() if x.startswith("SESSION "))
    return json.loads(line[len("SESSION "):]) | {"process_wall_s": time.perf_counter() - t0}


def main() -> None:
    with tempfile.TemporaryDirectory() as cache:
        result = {"cold": run_session(Path(cache)), "warm": run_session(Path(cache))}
    result["cpu_count"] = os.cpu_count()
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "session.json").write_text(json.dumps(result, indent=2) + "\n")
    for kind in ("cold", "warm"):
        r = result[kind]
        steps = ", ".join(f"{k} {r[k]:.1f} s" for k in ("import", "load", "simulate", "user_jit_grad",
                                                         "user_vmap_grad", "metric_gradient"))
        print(f"{kind}: total {r['total']:.1f} s ({steps})")


if __name__ == "__main__":
    main()
