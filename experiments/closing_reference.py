"""Independent references for three scenarios, each against a model that shares no code with diffspace:

* snare_closing: experiments/references/closing_reference.py (planar NumPy ropes, same discretisation, SciPy RK45) on the
  fast case of the tests and on configs/snare_closing.toml;
* free_floating: experiments/references/free_floating_reference.py (Pinocchio ABA on the same URDF, SciPy DOP853) on
  configs/free_floating.toml at the shipped tolerance and at rtol 1e-12;
* capture_snare: experiments/references/virtual_spring_reference.py (two-body virtual-spring impact by SciPy with events,
  elastic closed forms, the chain of experiments/references/rope_reference.py fitted independently) on
  configs/capture_snare_optimize.toml at the optimiser's nodes and three speeds, and with a virtual damper.

    python experiments/closing_reference.py            (about 30 min on 2 cores; --quick: fast cases, printed)

Writes ``experiments/results/closing_reference/``: ``summary.json``, ``table.md``.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
from references.closing_reference import FAST_CASE, ClosingCase, ClosingReference, compare, diffspace_closing
from references.free_floating_reference import FloatingCase, FloatingReference, diffspace_floating
from references.free_floating_reference import compare as compare_floating
from references.virtual_spring_reference import IMPACT_KEYS, SMALL_SNARE, diffspace_strikes, strike_deviations, write_configs

OUT = ROOT / "experiments" / "results" / "closing_reference"
CONFIGS = ROOT / "configs"
# name: (overrides, diffspace rtol, reference rtol, reference atol)
CLOSING_CASES = {"fast (8 sections, 0.2 s)": (FAST_CASE, 1e-10, 1e-9, 1e-13),
                 "shipped config (3.5 s)": ({}, 1e-6, 1e-8, 1e-11)}
FLOATING_CASES = {"shipped rtol 1e-9 (4 s)": {},
                  "rtol 1e-12 (4 s)": {"simulation.rtol": 1e-12, "simulation.atol": 1e-14}}
CAPTURE_CASES = {"elastic": ({}, [3, 5, 8, 10, 13, 16, 20, 25], [0.02, 0.05, 0.1]),
                 "damped c_v = 5 N s/m": ({"virtual_spring.damping_N_s_m": 5.0}, [16, 20], [0.05])}


def closing(quick: bool) -> dict:
    results = {}
    for name, (overrides, ds_rtol, rtol, atol) in list(CLOSING_CASES.items())[:1 if quick else None]:
        start = time.perf_counter()
        ours = diffspace_closing(CONFIGS / "snare_closing.toml", overrides)
        middle = time.perf_counter()
        case = ClosingCase.from_config(CONFIGS / "snare_closing.toml", overrides)
        ref = ClosingReference(case).simulate(ours["ts"], rtol=rtol, atol=atol)
        results[name] = {**compare(ours, ref, case), "diffspace_rtol": ds_rtol, "reference_rtol": rtol,
                         "diffspace_steps": ours["summary"]["solver_steps"],
                         "diffspace_peak_contact_force_N": ours["summary"]["peak_contact_force_N"],
                         "wall_s": {"diffspace": middle - start, "reference": time.perf_counter() - middle}}
    return results


def floating(quick: bool) -> dict:
    results = {}
    cases = {"first 0.5 s": {"simulation.t_final_s": 0.5}} if quick else FLOATING_CASES
    for name, overrides in cases.items():
        start = time.perf_counter()
        ours = diffspace_floating(CONFIGS / "free_floating.toml", overrides)
        reference = FloatingReference(FloatingCase.from_config(CONFIGS / "free_floating.toml", overrides))
        ref = reference.simulate(ours["ts"])
        results[name] = {**compare_floating(ours, ref), "diffspace_steps": ours["steps"],
                         "reference_evaluations": ref["nfev"], "wall_s": time.perf_counter() - start}
    return results


def _worst(rows: list[dict], key: str) -> dict:
    return {k: float(max(abs(r[key][k]) for r in rows)) for k in rows[0][key]}


def capture_snare(quick: bool) -> dict:
    results = {}
    cases = {"elastic, 6 sections": (SMALL_SNARE, [3, 4], [0.05])} if quick else CAPTURE_CASES
    for name, (snare_overrides, nodes, speeds) in cases.items():
        start = time.perf_counter()
        with tempfile.TemporaryDirectory() as tmp:
            config, _, snare = write_configs(Path(tmp), CONFIGS / "capture_snare_optimize.toml",
                                             {"snare_strike.node": nodes[0]}, snare_overrides)
            ours = diffspace_strikes(config, nodes, speeds)
        rows = strike_deviations(ours, None if ours["damping"] else snare)  # the fit is the elastic case's
        worst = {"diffspace_vs_reference": _worst(rows, "diffspace_vs_reference")}
        if "reference_vs_closed_form" in rows[0]:
            worst["reference_vs_closed_form"] = _worst(rows, "reference_vs_closed_form")
        if "fit" in rows[0]:
            worst["fit_peak_force_vs_diffspace"] = float(max(abs(r["fit"]["peak_force_vs_diffspace"]) for r in rows))
            worst["fit_limits_equal"] = all(r["fit"]["fit_limit_m"] == r["fit"]["diffspace_fit_limit_m"] for r in rows)
        results[name] = {"masses_kg": {"arm": ours["arm_mass"], "target": ours["target_mass"], "series": ours["mass"]},
                         "worst": worst, "strikes": rows, "wall_s": time.perf_counter() - start}
    return results


def table(summary: dict) -> str:
    lines = ["# Independent references: snare closing, free-floating arm, capture through the snare", "",
             "## snare_closing (planar NumPy ropes, same discretisation, SciPy RK45)", "",
             ("| case | initial shapes [m] | shaft path [m] | contact force [N] (peak) | peak time [s] "
              "| ring torque [N m] (peak) | impulse [N s] | drive work [J] | closing angle [rad] | closing time [s] "
              "| final offset [m] |"),
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, d in summary["snare_closing"].items():
        r = d["reference"]
        lines.append(f"| {name} | {d['initial_shape_m']:.1e} | {d['shaft_path_m']:.1e} | {d['contact_force_N']:.1e} "
                     f"({r['peak_contact_force_N']:.2f}) | {d['peak_time_s']:.1e} | {d['ring_torque_N_m']:.1e} "
                     f"({r['peak_ring_torque_N_m']:.3f}) | {d['impulse_N_s']:.1e} | {d['drive_work_J']:.1e} | "
                     f"{d['closing_angle_rad']:.1e} | {d['closing_time_s']:.1e} | {d['final_offset_m']:.1e} |")
    lines += ["", "## free_floating (Pinocchio ABA, SciPy DOP853 rtol 1e-11)", "",
              ("| case | base position [m] | base attitude [rad] | joint angles [rad] | velocities "
               "| end effector [m] (excursion) |"),
              "|---|---|---|---|---|---|"]
    for name, d in summary["free_floating"].items():
        lines.append(f"| {name} | {d['base_position_m']:.1e} | {d['base_attitude_rad']:.1e} | "
                     f"{d['joint_angles_rad']:.1e} | "
                     f"{d['velocities']:.1e} | {d['end_effector_m']:.1e} ({d['end_effector_excursion_m']:.3f}) |")
    lines += ["", "## capture_snare (two-body virtual-spring impact by SciPy; independent chain fit)", "",
              "Largest relative deviation over the strikes.", "",
              "| case | " + " | ".join(IMPACT_KEYS) + " | integration vs closed forms | independent fit: peak force |",
              "|---" * (len(IMPACT_KEYS) + 3) + "|"]
    for name, d in summary["capture_snare"].items():
        w = d["worst"]
        closed = f"{max(w['reference_vs_closed_form'].values()):.1e}" if "reference_vs_closed_form" in w else "- (c_v > 0)"
        fit = f"{w['fit_peak_force_vs_diffspace']:.1e}" if "fit_peak_force_vs_diffspace" in w else "- (same rope)"
        impact = " | ".join(f"{w['diffspace_vs_reference'][k]:.1e}" for k in IMPACT_KEYS)
        lines.append(f"| {name} ({len(d['strikes'])} strikes) | {impact} | {closed} | {fit} |")
    return "\n".join(lines) + "\n"


def _plain(value):
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value.tolist() if isinstance(value, np.ndarray) else value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the fast cases only, printed (nothing written)")
    args = parser.parse_args()
    summary = {"snare_closing": closing(args.quick), "free_floating": floating(args.quick),
               "capture_snare": capture_snare(args.quick)}
    print(table(summary))
    if not args.quick:
        OUT.mkdir(parents=True, exist_ok=True)
        (OUT / "summary.json").write_text(json.dumps(_plain(summary), indent=2) + "\n")
        (OUT / "table.md").write_text(table(summary))


if __name__ == "__main__":
    main()
