"""Order of the rope's fixed-step scheme (Newmark average acceleration for the axial and contact springs and
dashpots, linearised, the bending forces explicit: ``diffspace/bodies/rope_stepping.py``) on the snare closing,
against the adaptive Tsit5 solve of the same model at rtol 1e-10, and the forward run's CPU time of the shipped
config.

    python experiments/second_order_study.py order [case ...]   # writes experiments/results/second_order/<case>.json
    python experiments/second_order_study.py compare LABEL [case ...]   # this tree's errors against <case>.json's
                                                                         # reference: <case>_<LABEL>.json
    python experiments/second_order_study.py timing [label]     # CPU seconds of the shipped config's forward run

Cases (configs/snare_closing.toml with overrides): ``strike``, the ring strikes a shaft at rest (shipped rope, 40 to
58 deg in 0.3 s); ``steel``, the same with a steel wire rope's axial rigidity (EA = 5e5 N, axial zigzag 4.9e5 rad/s:
beyond any explicit step of this size). Steps 3e-5, 1.5e-5 and 7.5e-6 s (the shipped rope's bending limit is
3.87e-5 s); errors relative to the reference, and their ratio per halving. ``timing`` only uses ``load_scenario``
and ``metrics``, so it times an older tree as well (``PYTHONPATH=<tree>``): the forward run (``metrics`` under
``jit``) after a warm-up call, ``time.process_time`` around ``jax.block_until_ready``; ``compare`` likewise (earlier
schemes: ``<case>_first_order.json``, ``<case>_lumped_proposal.json`` and ``<case>_verlet.json``, the velocity-Verlet
scheme of commit a83b7cd, at its steps 1e-5, 5e-6 and 2.5e-6 s).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import equinox as eqx
import jax

from diffspace.scenarios import load_scenario

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "configs" / "snare_closing.toml"
OUT = ROOT / "experiments" / "results" / "second_order"
STRIKE = ["drive.start_angle_deg=40", "drive.final_angle_deg=58", "drive.duration_s=0.3", "closing.end_time_s=0.3",
          "shaft.initial_position_m=[0.0, -0.03]", "shaft.initial_velocity_m_s=[0.0, 0.0]", "simulation.n_save=301"]
CASES = {"strike": STRIKE, "steel": [*STRIKE, "rope.axial_rigidity_N=5e5"]}
REFERENCE = ["simulation.scheme=tsit5", "simulation.rtol=1e-10", "simulation.atol=1e-13", "simulation.max_steps=4000000"]
STEPS = (3e-5, 1.5e-5, 7.5e-6)
KEYS = ("peak_contact_force_N", "peak_ring_torque_N_m", "contact_impulse_N_s", "drive_work_J", "final_offset_m")


def metrics(overrides: list[str]) -> dict:
    """The closing's design metrics for ``overrides`` and the run's CPU seconds (compile included)."""
    scenario = load_scenario(CONFIG, overrides)
    start = time.process_time()
    values = jax.block_until_ready(eqx.filter_jit(lambda s: s.metrics(s.params))(scenario))
    if int(values["status"]) != 0:
        raise RuntimeError(f"{overrides}: status {int(values['status'])}")
    return {**{k: float(values[k]) for k in KEYS}, "cpu_s": time.process_time() - start}


def order(case: str) -> dict:
    reference = metrics([*CASES[case], *REFERENCE])
    runs = {f"{h:g}": metrics([*CASES[case], f"simulation.step_s={h}"]) for h in STEPS}
    errors = {h: {k: run[k] / reference[k] - 1.0 for k in KEYS} for h, run in runs.items()}
    steps = list(errors)
    ratios = {f"{a}/{b}": {k: abs(errors[a][k] / errors[b][k]) for k in KEYS} for a, b in zip(steps, steps[1:])}
    result = {"case": case, "overrides": CASES[case], "reference": reference, "runs": runs,
              "relative_errors": errors, "error_ratio_per_halving": ratios}
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"{case}.json").write_text(json.dumps(result, indent=1) + "\n")
    return result


def compare(label: str, case: str) -> dict:
    """This tree's relative errors on ``case`` against the reference stored by :func:`order`."""
    reference = json.loads((OUT / f"{case}.json").read_text())["reference"]
    runs = {f"{h:g}": metrics([*CASES[case], f"simulation.step_s={h}"]) for h in STEPS}
    result = {"case": case, "label": label, "runs": runs,
              "relative_errors": {h: {k: run[k] / reference[k] - 1.0 for k in KEYS} for h, run in runs.items()}}
    (OUT / f"{case}_{label}.json").write_text(json.dumps(result, indent=1) + "\n")
    return result


def timing(label: str, repeats: int = 2) -> dict:
    """CPU seconds of the shipped config's forward run after a warm-up call (the lowest of ``repeats``)."""
    scenario = load_scenario(CONFIG, [])
    run = eqx.filter_jit(lambda s: s.metrics(s.params))
    jax.block_until_ready(run(scenario))
    times = []
    for _ in range(repeats):
        start = time.process_time()
        values = jax.block_until_ready(run(scenario))
        times.append(time.process_time() - start)
    return {"label": label, "cpu_s": min(times), "all_cpu_s": times,
            "peak_contact_force_N": float(values["peak_contact_force_N"])}


if __name__ == "__main__":
    command, names = sys.argv[1], sys.argv[2:]
    if command == "order":
        for name in names or list(CASES):
            print(json.dumps(order(name), indent=1))
    elif command == "compare":
        for name in names[1:] or list(CASES):
            print(json.dumps(compare(names[0], name), indent=1))
    else:
        print(json.dumps(timing(names[0] if names else "this tree")))
