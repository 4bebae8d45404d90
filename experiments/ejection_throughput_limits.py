"""What limits the batched ejection throughput of ``diffspace bench`` (ours vs MuJoCo at 1e-6 accuracy).

The bench's 64 ejection cases (the ESD arm in plane mode, named attitudes +-10 deg, spring stiffness +-15 %,
stick-slip friction, integrated to separation at rtol 1e-6) are run here with their solver statistics:

* **lockstep**: under ``vmap`` every segment's adaptive loop runs until its slowest case is done, and every case
  pays each batched step. Measured as the batched time of the 64 distinct cases against 64 copies of one case
  (the same work in every lane), scaled by the cases' mean step count;
* **segments**: the hybrid loop is a ``lax.scan`` over ``max_segments`` (8 in the bench); a case that has
  separated runs zero-length solves for the rest. Measured as the time with 8 segments against the fewest that
  let every case reach separation;
* **per step**: the cost of one Tsit5 step (6 vector-field calls, each a forward dynamics of the 13-DOF model,
  plus the event condition) per case in a batch, against MuJoCo's RK4 step (4 calls).

MuJoCo's step count is read from the committed bench (``experiments/results/bench/bench.json``). Writes
``experiments/results/ejection_limits/limits.json`` and ``limits.png``. Run on an idle machine:
``python experiments/ejection_throughput_limits.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from diffspace.app.bench.common import BenchConfig, timed_together
from diffspace.app.bench.ejection import ejection_cases
from diffspace.integrate import SolverSettings
from diffspace.scenarios.ejection import FLIGHT, RAIL, simulate_ejection

RESULTS = Path(__file__).resolve().parent / "results"
OUT = RESULTS / "ejection_limits"
RTOL = 1e-6  # the bench's chosen tolerance for 1e-6 accuracy of the separation velocity


def run_fn(model, horizon: float, max_segments: int, viscous: float):
    """``f(angles, stiffness) -> (separated, accepted+rejected steps, segments used)`` of one ejection."""

    def run(angles, stiffness):
        m = eqx.tree_at(lambda mm: (mm.stiffness, mm.friction.viscous), model,
                        (stiffness, jnp.full(model.robot.n_joints, viscous)))
        settings = SolverSettings(rtol=RTOL, atol=RTOL * 1e-2, n_save=2, max_steps=20_000, max_segments=max_segments)
        sol = simulate_ejection(m, angles, horizon, settings).solution
        separated = jnp.any((sol.segment_mode_before.phase == RAIL) & (sol.segment_mode_after.phase == FLIGHT)
                            & sol.segment_event)
        return separated, sol.num_steps, jnp.sum(sol.segment_event) + 1

    return jax.jit(jax.vmap(run))


def main() -> dict:
    jax.config.update("jax_enable_x64", True)
    cfg = BenchConfig()
    cases = ejection_cases(cfg)
    model, angles, stiffness, horizon = cases.model, cases.angles, cases.stiffness, cases.horizon
    n = angles.shape[0]
    bench = run_fn(model, horizon, cfg.ejection_max_segments, cases.viscous)
    separated, steps, segments = (np.asarray(x) for x in bench(angles, stiffness))
    if not separated.all():
        raise RuntimeError(f"{int((~separated).sum())} of {n} bench cases did not separate")
    typical = int(np.argsort(steps)[n // 2])  # the median case, copied into every lane
    copies = (jnp.broadcast_to(angles[typical], angles.shape), jnp.broadcast_to(stiffness[typical], (n,)))
    mujoco_steps = json.loads((RESULTS / "bench" / "bench.json").read_text())["mujoco_steps_per_sim"]
    fewest = int(segments.max())
    tight = run_fn(model, horizon, fewest, cases.viscous)
    t_distinct, t_copies, t_tight = timed_together(
        [lambda: bench(angles, stiffness), lambda: bench(*copies), lambda: tight(angles, stiffness)], 7)
    per_case_step = t_copies / (n * steps[typical])
    ideal = per_case_step * steps.sum()  # every lane doing only its own steps
    res = {
        "batch_size": n, "rtol": RTOL, "max_segments": cfg.ejection_max_segments,
        "steps_per_case": {"mean": float(steps.mean()), "min": int(steps.min()), "max": int(steps.max())},
        "segments_used": {"mean": float(segments.mean()), "max": fewest},
        "batched_distinct_s": t_distinct, "batched_copies_of_median_case_s": t_copies,
        "batched_fewest_segments_s": t_tight,
        "lockstep_factor": t_distinct / ideal,
        "segment_budget_factor": t_distinct / t_tight,
        "per_case_step_us": per_case_step * 1e6,
        "per_vector_field_call_us": per_case_step * 1e6 / 6,
        "mujoco_steps_per_sim": mujoco_steps, "steps_vs_mujoco": float(steps.mean()) / mujoco_steps,
        "sims_per_s_distinct": n / t_distinct, "sims_per_s_if_no_lockstep": n / ideal,
    }
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "limits.json").write_text(json.dumps(res, indent=2) + "\n")
    _plot(res, OUT / "limits.png")
    print(json.dumps(res, indent=2))
    return res


def _plot(res: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = ["64 distinct\n(bench)", "fewest\nsegments", "64 copies of\nthe median case", "own steps only\n(no lockstep)"]
    rates = [res["sims_per_s_distinct"], res["batch_size"] / res["batched_fewest_segments_s"],
             res["batch_size"] / res["batched_copies_of_median_case_s"], res["sims_per_s_if_no_lockstep"]]
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.bar(labels, rates, color=["C0", "C1", "C2", "C2"])
    ax.set_ylabel("ejections per second (batch 64)")
    ax.set_title("batched ejection: what lockstep and the segment budget cost", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
