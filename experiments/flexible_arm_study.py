"""Free-floating manipulator with a flexible link (paper: quaternion_flexible_manipulator, numerical study).

    python experiments/flexible_arm_study.py

Writes ``experiments/results/flexible_arm/``: ``study.json`` and PNG plots.

1. the paper's example (``configs/flexible_arm.toml``): flexible (maximal coordinates, 2 modes, 5 Hz, zeta 0.03)
   against the rigid arm in minimal coordinates: end-effector difference (paper: above 1.7 mm), elastic tip
   deflection, base and joint angle differences;
2. agreement of the two formulations with a rigid last link (maximal vs minimal coordinates);
3. constraint violation and momentum drift with and without stabilisation (none, Baumgarte, Baumgarte + the
   per-step projection), at the config's tolerances and at loose ones (rtol 1e-6);
4. wall time of the 5 s run in each formulation (first call = compile + run, then the median of 3 runs);
   the machine is shared with other jobs, so the load is recorded next to the timings.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from diffspace.integrate import Stabilization
from diffspace.io.packaged import DATA_DIR
from diffspace.io.results import plot_panels
from diffspace.scenarios import load_scenario
from diffspace.scenarios.flexible_arm import model
from diffspace.scenarios.flexible_arm.results import angle_differences
from diffspace.scenarios.flexible_arm.scenario import headline

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "experiments" / "results" / "flexible_arm"
CONFIG = DATA_DIR / "flexible_arm.toml"


def timed(fn, *args, repeats: int = 3) -> tuple[object, float, float]:
    """Result, first-call time (compile + run) and the median of ``repeats`` further calls (s)."""
    start = time.perf_counter()
    result = jax.block_until_ready(fn(*args))
    first = time.perf_counter() - start
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn(*args))
        times.append(time.perf_counter() - start)
    return result, first, float(np.median(times))


def formulation_timings(overrides: list[str]) -> dict:
    """Each formulation alone: the maximal-coordinate solve and the minimal-coordinate reference."""
    s = load_scenario(CONFIG, overrides)
    p, st = s.params, s.settings

    @eqx.filter_jit
    def maximal(s, p):
        system = model.maximal_system(s.robot, st, p.frequency_hz, p.damping_ratio, p.amplitude_N_m, p.period_s)
        sol = model.solve_maximal(system, s.robot, st, Stabilization(p.alpha, p.beta, st.projection), False)
        return sol.q, sol.num_steps

    @eqx.filter_jit
    def minimal(s, p):
        traj = model.solve_minimal(s.robot, st, p.amplitude_N_m, p.period_s)
        return traj.q, traj.num_steps

    (_, max_steps), max_first, max_run = timed(maximal, s, p)
    (_, min_steps), min_first, min_run = timed(minimal, s, p)
    return {
        "maximal_first_call_s": max_first, "maximal_run_s": max_run, "maximal_steps": int(max_steps),
        "minimal_first_call_s": min_first, "minimal_run_s": min_run, "minimal_steps": int(min_steps),
    }


def paper_example() -> tuple[dict, object]:
    s = load_scenario(CONFIG)
    out = eqx.filter_jit(lambda s, p: s.simulate(p))(s, s.params)
    s.write(out, OUT / "paper_example")
    summary = s.summary(out)
    return summary, out


def rigid_agreement() -> dict:
    s = load_scenario(CONFIG, ["arm.flexible=false"])
    out = eqx.filter_jit(lambda s, p: s.run(p))(s, s.params)
    base_diff, joint_diff = angle_differences(out)
    return {
        "joint_angle_difference_max_rad": float(np.abs(joint_diff).max()),
        "base_angle_difference_max_rad": float(np.abs(base_diff).max()),
        "base_position_difference_max_m": float(np.abs(out.maximal.base_position - out.reference.base_position).max()),
        "end_effector_difference_max_m": float(headline(out)["end_effector_difference_max_m"]),
        "constraint_violation_max": float(np.max(out.constraint_violation)),
        "momentum_drift_max": float(headline(out)["momentum_drift_max"]),
    }


def drift_study() -> tuple[dict, dict]:
    """Violation histories: stabilisation variants at two tolerances (the flexible arm, 5 s)."""
    results, histories = {}, {}
    for tol in ("1e-9", "1e-6"):
        atol = f"{float(tol) * 1e-2:g}"
        for projection in (False, True):
            s = load_scenario(CONFIG, [f"simulation.rtol={tol}", f"simulation.atol={atol}",
                                       f"stabilization.projection={str(projection).lower()}"])
            run = eqx.filter_jit(lambda s, p: s.run(p))
            variants = [("baumgarte+projection", 10.0)] if projection else [("none", 0.0), ("baumgarte", 10.0)]
            for label, gain in variants:
                p = eqx.tree_at(lambda p: (p.alpha, p.beta), s.params, (jnp.asarray(gain), jnp.asarray(gain)))
                out = run(s, p)
                key = f"rtol_{tol}_{label}"
                drift = np.abs(np.asarray(out.momentum) - np.asarray(out.momentum[0])).max(axis=1)
                results[key] = {
                    "constraint_violation_max": float(np.max(out.constraint_violation)),
                    "constraint_violation_final": float(out.constraint_violation[-1]),
                    "velocity_violation_max": float(np.max(out.velocity_violation)),
                    "momentum_drift_max": float(drift.max()),
                    "solver_steps": int(out.maximal_steps),
                }
                histories[key] = (np.asarray(out.ts), np.asarray(out.constraint_violation))
    return results, histories


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    study: dict = {"load_average_start": os.getloadavg()[0]}
    summary, out = paper_example()
    study["paper_example"] = {
        "end_effector_difference_max_m": summary["end_effector_difference_max_m"],
        "end_effector_difference_rms_m": summary["end_effector_difference_rms_m"],
        "tip_deflection_max_m": summary["tip_deflection_max_m"],
        "paper_end_effector_difference_m": "above 1.7e-3",
        "base_angle_difference_max_deg": summary["base_angle_difference_max_deg"],
        "joint_angle_difference_max_deg": summary["joint_angle_difference_max_deg"],
        "constraint_violation_max": summary["constraint_violation_max"],
        "momentum_drift_max": summary["momentum_drift_max"],
        "summary": summary,
    }
    study["rigid_formulation_agreement"] = rigid_agreement()
    study["drift"], histories = drift_study()
    study["wall_time_5s"] = {
        "flexible": formulation_timings([]),
        "rigid": formulation_timings(["arm.flexible=false"]),
    }
    study["load_average_end"] = os.getloadavg()[0]
    floor = 1e-18
    plot_panels(OUT / "constraint_drift.png", histories["rtol_1e-9_none"][0], [
        (f"log10 max |Phi| (rtol {tol})", {label: np.log10(np.maximum(histories[f"rtol_{tol}_{label}"][1], floor))
                                   for label in ("none", "baumgarte", "baumgarte+projection")})
        for tol in ("1e-9", "1e-6")
    ])
    (OUT / "study.json").write_text(json.dumps(study, indent=2) + "\n")
    print(json.dumps({k: v for k, v in study.items() if k != "paper_example"}, indent=2))
    print(json.dumps({k: v for k, v in study["paper_example"].items() if k != "summary"}, indent=2))


if __name__ == "__main__":
    main()
