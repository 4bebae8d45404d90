"""Seeded random ordinary cases through the snare closing's fixed-step scheme: count statuses and outcomes.

A campaign visits designs nobody looked at; this runs ``--cases`` random designs (seed ``--seed``) of a short
closing (shipped rope, ring 40 -> ``final`` deg in ``duration`` s onto a shaft somewhere in the middle of the zone,
0.3 s simulated) in vmapped chunks, and writes ``experiments/results/closing_random/summary.json``: the status
counts, the outcome counts, the peak-force range, and every non-ok case with its design (each needs a physical
reason: ``step_over_bending_limit`` above 1 is a design too stiff in bending for the fixed step; below it, the
energy balance was off: a contact the step could not follow). Run: ``python experiments/closing_random_cases.py [--cases 512]``.

2026-11-29, the scheme with implicit axial and contact springs, explicit forces at the extrapolated state: at
``simulation.step_s = 3e-5`` 21 of 512 designs (seed 0) reported peaks of 2.4e3-2e9 N with status ok where 1e-5 and
3e-6 s agree on 110-1,250 N. With the explicit forces at the Newmark predictor (the same day, designs drawn at 3e-5 s)
3e-5 s and 1.5e-5 s agree on the peak force to 2.6e-5 (median), 4.2e-3 (99th percentile) over the 491 designs with
contact, but three stiff ropes (EA 2.3e5-4.7e5 N) still go wrong at 3e-5 s, one of them and one more design at
every step tried (1e-5 s included); all four are off in their energy balance by 2.7e-3-1.4e-2 (good runs: below 1.4e-6), which now fails them
(``solver_failure``). At the shipped 2e-5 s (designs drawn at 2e-5 s): 510 ok, 2 ``solver_failure`` (the energy
check: EA 2.3e5 and 3.8e5 N), peaks 0-1,521 N, all enclosed, 404 s (the committed summary).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from diffspace.core.status import Status
from diffspace.scenarios import load_scenario
from diffspace.scenarios.snare_closing import bending_step

ROOT = Path(__file__).resolve().parents[1]
OVERRIDES = ["drive.start_angle_deg=40", "closing.end_time_s=0.3", "simulation.n_save=61",
             "shaft.initial_position_m=[0.0, 0.0]", "shaft.initial_velocity_m_s=[0.0, 0.0]"]


def designs(scenario, n: int, seed: int) -> dict[str, np.ndarray]:
    """Random ordinary designs (config units): shaft within 30 mm of the axis drifting at up to 50 mm/s, drive
    50-58 deg in 0.1-0.25 s, EA log-uniform over 1e4-5e5 N (a soft rope to steel wire; implicit, no stability
    bound), EI over [0.02, 1] of its stable bound, contact law and shaft mass varied."""
    rng = np.random.default_rng(seed)
    radius, angle = 0.03 * np.sqrt(rng.uniform(size=n)), rng.uniform(0, 2 * np.pi, n)
    speed, heading = 0.05 * rng.uniform(size=n), rng.uniform(0, 2 * np.pi, n)
    ei = scenario.parameter("rope.bending_rigidity_N_m2").upper
    return {"shaft.initial_position_m[0]": radius * np.cos(angle), "shaft.initial_position_m[1]": radius * np.sin(angle),
            "shaft.initial_velocity_m_s[0]": speed * np.cos(heading), "shaft.initial_velocity_m_s[1]": speed * np.sin(heading),
            "drive.duration_s": rng.uniform(0.1, 0.25, n), "drive.final_angle_deg": rng.uniform(50.0, 58.0, n),
            "rope.axial_rigidity_N": 10 ** rng.uniform(4.0, np.log10(5e5), n), "rope.bending_rigidity_N_m2": ei * rng.uniform(0.02, 1.0, n),
            "contact.restitution_c": rng.uniform(0.3, 0.9, n), "contact.stiffness_N_m_n": 10 ** rng.uniform(6.5, 7.5, n),
            "shaft.mass_kg": 10 ** rng.uniform(0.0, 2.0, n)}


def step_over_limit(scenario, batch: dict, i: int) -> float:
    """The step over case ``i``'s bending limit (above 1 the run fails by design: too stiff in bending for it)."""
    params = scenario.with_design(scenario.params, {k: float(v[i]) for k, v in batch.items()})
    return float(scenario.step_length / bending_step(scenario.model_of(params).rope))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=512)
    parser.add_argument("--chunk", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    scenario = load_scenario(ROOT / "configs" / "snare_closing.toml", OVERRIDES)
    batch = designs(scenario, args.cases, args.seed)
    run = eqx.filter_jit(jax.vmap(lambda d: scenario.metrics(scenario.with_design(scenario.params, d))))
    start, chunks = time.perf_counter(), []
    for lo in range(0, args.cases, args.chunk):
        chunks.append(jax.device_get(run({k: jnp.asarray(v[lo:lo + args.chunk]) for k, v in batch.items()})))
        print(f"{lo + len(chunks[-1]['status'])}/{args.cases} cases, {time.perf_counter() - start:.0f} s", flush=True)
    metrics = {k: np.concatenate([c[k] for c in chunks]) for k in chunks[0]}
    status = metrics["status"].astype(int)
    ok = status == int(Status.OK)
    peak = metrics["peak_contact_force_N"][ok]
    summary = {"cases": args.cases, "seed": args.seed, "wall_s": time.perf_counter() - start,
               "status_counts": {Status(s).name.lower(): int((status == s).sum()) for s in np.unique(status)},
               "outcome_counts": {name: int(((metrics["outcome"] == i) & ok).sum()) for i, name in enumerate(("enclosed", "escaped"))},
               "peak_contact_force_N": {"min": float(peak.min()), "median": float(np.median(peak)), "max": float(peak.max())}
               if peak.size else None,
               "not_ok": [{"status": Status(int(status[i])).name.lower(), "step_over_bending_limit": step_over_limit(scenario, batch, i),
                           **{k: float(v[i]) for k, v in batch.items()}} for i in np.flatnonzero(~ok)]}
    out = ROOT / "experiments" / "results" / "closing_random"
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    print(json.dumps({k: v for k, v in summary.items() if k != "not_ok"}, indent=2))


if __name__ == "__main__":
    main()
