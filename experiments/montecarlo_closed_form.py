"""A Monte-Carlo campaign of the rigid (locked) ejection, ``v = l sqrt(k/M)``, against its closed form and
against SALib on the same runs.

``k ~ N(812.7, 16) N/m``, ``l ~ U(0.085, 0.087) m``, Saltelli's scheme with ``N`` base samples
(``4 N`` runs) through ``diffspace montecarlo`` (the closed form and the config:
tests/test_montecarlo_ejection.py). Reported: every run's deviation from ``l sqrt(k/M)``; the campaign's mean
and standard deviation against the closed form in units of their standard errors; the Sobol indices with
their bootstrap intervals against the closed form; SALib's ``sobol.analyze`` on the same runs (its estimators
and bootstrap, run order A, AB_1 .. AB_d, B); the local sensitivities against the analytic derivatives.

Writes ``experiments/results/montecarlo/closed_form.{json,md}``.
Run: ``python experiments/montecarlo_closed_form.py [--samples 4096]``
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from references.locked_ejection import METRIC, closed_form, locked_campaign_config, locked_mass

from diffspace.app.cli import main

OUT = Path(__file__).resolve().parent / "results" / "montecarlo"
KEYS = ("ejection.spring_stiffness_N_m", "ejection.spring_compression_m")


def campaign(samples: int, work: Path) -> tuple[dict, np.ndarray, float]:
    config = work / "locked.toml"
    config.write_text(locked_campaign_config(samples, confidence=0.95))
    start = time.perf_counter()
    assert main(["montecarlo", str(config), "--out", str(work / "mc"), "--quiet"]) == 0
    elapsed = time.perf_counter() - start
    summary = json.loads((work / "mc" / "summary.json").read_text())
    rows = np.genfromtxt(work / "mc" / "results.csv", delimiter=",", names=True, dtype=None, encoding="utf-8")
    return summary, rows, elapsed


def salib(runs: np.ndarray, resamples: int) -> dict:
    from SALib.analyze import sobol

    problem = {"num_vars": 2, "names": list(KEYS), "bounds": [[0.0, 1.0]] * 2}
    layout = runs[:, [0, 2, 3, 1]].ravel()  # ours: A, B, AB_k, AB_l; SALib: A, AB_k, AB_l, B
    return sobol.analyze(problem, layout, calc_second_order=False, num_resamples=resamples, seed=1)


def compare(summary: dict, rows: np.ndarray, mass: float) -> dict:
    truth = closed_form(mass)
    v, k, l = rows[METRIC], rows["ejectionspring_stiffness_N_m"], rows["ejectionspring_compression_m"]
    draws = v[np.isin(rows["matrix"], ["A", "B"])]
    s = summary["outputs"][METRIC]
    m4 = np.mean((draws - draws.mean()) ** 4)
    theirs = salib(v.reshape(-1, 4), 1000)
    out = {"runs": int(v.size), "max_run_deviation_rel": float(np.max(np.abs(v / (l * np.sqrt(k / mass)) - 1))),
           "mass_kg": mass, "mean": {"campaign": s["mean"], "closed_form": truth["mean"],
                                     "standard_errors": (s["mean"] - truth["mean"]) / (s["std"] / np.sqrt(draws.size))},
           "std": {"campaign": s["std"], "closed_form": truth["std"],
                   "variance_standard_errors": (s["std"] ** 2 - truth["std"] ** 2) / np.sqrt((m4 - s["std"] ** 4)
                                                                                              / draws.size)},
           "3_sigma_band": [s["p0.135"], s["p99.865"]], "sobol": {}, "local_sensitivity": {}}
    for which, salib_key in (("first", "S1"), ("total", "ST")):
        for j, key in enumerate(KEYS):
            ours = summary[f"sobol_{which}"][METRIC][key]
            out["sobol"][f"{which}:{key}"] = {
                "campaign": ours, "ci95": summary[f"sobol_{which}_ci"][METRIC][key],
                "closed_form": truth[f"sobol_{which}"][key], "salib": float(theirs[salib_key][j]),
                "salib_conf95": float(theirs[salib_key + "_conf"][j]), "campaign_minus_salib": ours - theirs[salib_key][j]}
    for key in KEYS:
        ours = summary["local_sensitivity"][METRIC][key]
        out["local_sensitivity"][key] = {"campaign": ours, "closed_form": truth["local_sensitivity"][key],
                                         "relative_error": ours / truth["local_sensitivity"][key] - 1.0}
    return out


def markdown(result: dict) -> str:
    lines = [f"# Locked ejection Monte-Carlo vs closed form ({result['runs']} runs, {result['elapsed_s']:.0f} s)", "",
             f"- every run vs l sqrt(k/M): max relative deviation {result['max_run_deviation_rel']:.2e}",
             (f"- mean {result['mean']['campaign']:.6f} vs {result['mean']['closed_form']:.6f} m/s "
              f"({result['mean']['standard_errors']:+.2f} standard errors)"),
             (f"- std {result['std']['campaign']:.6f} vs {result['std']['closed_form']:.6f} m/s "
              f"(variance {result['std']['variance_standard_errors']:+.2f} standard errors)"), "",
             "| index | campaign | 95 % interval | closed form | SALib (same runs) | SALib conf |", "|---|---|---|---|---|---|"]
    for name, r in result["sobol"].items():
        lo, hi = r["ci95"]
        lines.append(f"| {name} | {r['campaign']:.4f} | [{lo:.4f}, {hi:.4f}] | {r['closed_form']:.4f} | "
                     f"{r['salib']:.4f} | {r['salib_conf95']:.4f} |")
    lines += ["", "| local sensitivity | campaign | closed form | relative error |", "|---|---|---|---|"]
    for key, r in result["local_sensitivity"].items():
        lines.append(f"| {key} | {r['campaign']:.6e} | {r['closed_form']:.6e} | {r['relative_error']:.1e} |")
    return "\n".join(lines) + "\n"


def main_cli() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=4096)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        summary, rows, elapsed = campaign(args.samples, Path(work))
    result = compare(summary, rows, locked_mass()) | {"elapsed_s": elapsed, "cases_per_s": summary["cases_per_s"]}
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "closed_form.json").write_text(json.dumps(result, indent=2, default=float) + "\n")
    (OUT / "closed_form.md").write_text(markdown(result))
    print(markdown(result))


if __name__ == "__main__":
    main_cli()
