"""The capture scenario against an independent model of the same system (Pinocchio ABA arm, NumPy target and
contact law, SciPy DOP853 with event location; experiments/references/capture_reference_model.py).

For every case of experiments/references/capture_comparison.py (approach speeds 0.01-0.2 m/s, oblique approaches, a moving
target, four damping laws, held / free / partly free joints): the reference at rtol 1e-12 / atol 1e-14 (and
at 1e-10 / 1e-12, its own convergence), diffspace at the config's tolerances (rtol 1e-10, atol 1e-12) and at
1e-12 / 1e-14, and the relative differences ``|a - b| / |b|`` (norms for vectors) to the tight reference.

Writes ``experiments/results/capture_reference/comparison.{json,md}``.
Run: ``python experiments/capture_reference.py``
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

from references.capture_comparison import CASES, SCALARS, VECTORS, diffspace_numbers, reference_numbers, relative_differences

OUT = Path(__file__).resolve().parent / "results" / "capture_reference"
TIGHT, LOOSE = (1e-12, 1e-14), (1e-10, 1e-12)
SHORT = {"contact_start_time_s": "t touch", "peak_force_N": "F peak", "impulse_N_s": "impulse",
         "contact_duration_s": "duration", "separation_speed_m_s": "v sep", "target_velocity_m_s": "v target",
         "target_angular_velocity_rad_s": "w target", "tip_velocity_m_s": "v tip", "base_velocity_m_s": "v base",
         "base_angular_velocity_rad_s": "w base"}


def _timed(fn, *args):
    start = time.perf_counter()
    value = fn(*args)
    return value, time.perf_counter() - start


def run_case(overrides: list[str]) -> dict:
    ref, ref_s = _timed(reference_numbers, overrides, *TIGHT)
    ref_loose = reference_numbers(overrides, *LOOSE)
    ds, ds_s = _timed(diffspace_numbers, overrides)  # first call: includes compilation where needed
    ds_tight, ds_tight_s = _timed(diffspace_numbers, overrides, *TIGHT)
    return {
        "overrides": overrides, "reference": ref, "diffspace_config_tolerances": ds, "diffspace_tight": ds_tight,
        "rel_diff_config_tolerances": relative_differences(ds, ref),
        "rel_diff_tight": relative_differences(ds_tight, ref),
        "reference_self_convergence": relative_differences(ref_loose, ref),
        "wall_s": {"reference": ref_s, "diffspace_first_call": ds_s, "diffspace_tight": ds_tight_s},
    }


def _jsonable(x):
    if isinstance(x, dict):
        return {k: _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple, np.ndarray)):
        return [_jsonable(v) for v in x]
    return x.item() if isinstance(x, np.generic) else x


def _value(x) -> str:
    x = np.asarray(x)
    return f"{float(x):.9g}" if x.ndim == 0 else "[" + ", ".join(f"{v:.6g}" for v in x) + "]"


def markdown(results: dict) -> str:
    header = " | ".join(SHORT[k] for k in SCALARS + VECTORS)
    rule = "|" + "---|" * (2 + len(SCALARS + VECTORS))
    lines = ["# Capture: diffspace vs independent reference (Pinocchio + SciPy)", "",
             ("Reference values (rtol 1e-12, atol 1e-14; world axes, SI, angular velocities in rad/s, after the "
              "first separation):"), "", f"| case | overrides | {header} |", rule]
    for name, r in results.items():
        ref = r["reference"]
        lines.append(f"| {name} | {'; '.join(r['overrides']) or '(config)'} | "
                     + " | ".join(_value(ref[k]) for k in SCALARS + VECTORS) + " |")
    for title, key in (("diffspace at the config's tolerances (rtol 1e-10, atol 1e-12)", "rel_diff_config_tolerances"),
                       ("diffspace at rtol 1e-12, atol 1e-14", "rel_diff_tight"),
                       ("reference at rtol 1e-10, atol 1e-12 (its own convergence)", "reference_self_convergence")):
        lines += ["", f"Relative difference to the reference: {title}", "",
                  f"| case | {header} | max |", rule + "---|"]
        for name, r in results.items():
            d = r[key]
            lines.append(f"| {name} | " + " | ".join(f"{d[k]:.1e}" for k in SCALARS + VECTORS)
                         + f" | {max(d.values()):.1e} |")
    lines += ["", ("| case | contacts (ref / diffspace) | reference RHS evaluations / wall [s] | diffspace steps "
                   "(config / tight) | diffspace wall [s] (first call, compile included / tight) |"), "|---|---|---|---|---|"]
    for name, r in results.items():
        ref, ds, dt, w = r["reference"], r["diffspace_config_tolerances"], r["diffspace_tight"], r["wall_s"]
        lines.append(f"| {name} | {ref['contacts']} / {ds['contacts']} | {ref['rhs_evaluations']} / "
                     f"{w['reference']:.2f} | {ds['solver_steps']} / {dt['solver_steps']} | "
                     f"{w['diffspace_first_call']:.1f} / {w['diffspace_tight']:.1f} |")
    return "\n".join(lines) + "\n"


def main():
    results = {name: run_case(overrides) for name, overrides in CASES.items()}
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "comparison.json").write_text(json.dumps(_jsonable(results), indent=1) + "\n")
    (OUT / "comparison.md").write_text(markdown(results))
    print(markdown(results))


if __name__ == "__main__":
    main()
