"""Air-table impact validation (paper Section 4.1, Tables 1 and 3): measured vs fitted model vs the paper.

1. Fits of the Zhiying-Qishao contact (k and c) to the three train impacts
   ``experiments/data/impact_airtable_train.csv`` with two friction models: the paper's Eq. (10) (a constant
   force mu (m1 + m2) g on the relative motion during contact, mu = 0.00905, g = 10) and the physical one,
   Coulomb air-table friction mu m_i g on each body with stick (mu g = 0.0905 m/s^2 from the deceleration
   tests). The shipped impact config uses the paper-friction fit; the capture config the Coulomb fit.
2. Leave-one-out for each: refit on two impacts and predict the held-out one (prediction at another speed).
3. The paper's own model values (Table 1 without friction, Table 3 with friction) as published, and the
   paper's parameters (ZQ, c = 0.55) run in our solver with k calibrated to the paper's Table 1 peak force
   of experiment 1 (the paper does not give k).

Writes ``experiments/results/impact_validation.{json,md,png}``. Run: ``python experiments/impact_validation.py``
"""

from __future__ import annotations

import json
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from diffspace.design import run_fit
from diffspace.scenarios import FitData, load_scenario

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
DATA = HERE / "data" / "impact_airtable_train.csv"
CONFIG = HERE.parent / "configs" / "impact_airtable.toml"
FITTED = ("contact.stiffness_N_m_n", "contact.restitution_c")
FRICTION = {"paper": ["friction.model=\"paper\"", "friction.mu=0.00905", "friction.gravity_m_s2=10.0"],
            "coulomb": ["friction.model=\"coulomb\"", "friction.mu=0.00905", "friction.gravity_m_s2=10.0"]}

# Paper Tables 1 and 3 (model columns; speeds in mm/s, forces in N)
PAPER_T1 = {"v_out": [62.57, 82.54, 53.83], "f_peak": [201.5, 279.4, 167.3]}  # without friction
PAPER_T3 = {"v_out": [57.22, 79.21, 47.22], "f_peak": [220.1, 286.8, 185.5]}  # with friction, Eq. (10)


def predict(scenario, speeds, design: dict) -> dict:
    """Detached velocity [mm/s] and peak force [N] at first-touch ``speeds`` [m/s] with ``design`` applied."""
    def one(v):
        m = scenario.metrics(scenario.with_design(scenario.params, {**design, "impact.approach_speed_m_s": v,
                                                                    "impact.initial_gap_m": 0.0}))
        return m["detached_velocity_m_s"], m["peak_force_N"]

    v_out, f_peak = jax.jit(jax.vmap(one))(jnp.asarray(speeds, float))
    return {"v_out": 1e3 * np.asarray(v_out), "f_peak": np.asarray(f_peak)}


def fit(scenario, data: FitData, rows):
    sub = FitData({k: v[rows] for k, v in data.conditions.items()}, {k: v[rows] for k, v in data.measured.items()},
                  {k: v[rows] for k, v in data.sigma.items()}, data.absolute_sigma)
    params = [scenario.parameter(k) for k in FITTED]
    initial = {"contact.stiffness_N_m_n": float(scenario.params.stiffness),
               "contact.restitution_c": float(scenario.params.restitution)}
    result, _ = run_fit(scenario, sub, params, initial, {"initial_grid": False, "max_iter": 50})
    return result


def study(friction: str, data: FitData, speeds: np.ndarray) -> dict:
    scenario = load_scenario(CONFIG, FRICTION[friction])
    n = len(speeds)
    result = fit(scenario, data, np.arange(n))
    loo = {"v_out": np.zeros(n), "f_peak": np.zeros(n), "params": []}
    for held in range(n):
        r = fit(scenario, data, np.array([i for i in range(n) if i != held]))
        p = predict(scenario, speeds[held:held + 1], r.params)
        loo["v_out"][held], loo["f_peak"][held] = p["v_out"][0], p["f_peak"][0]
        loo["params"].append(r.params)
    return {"scenario": scenario, "fit": result, "fitted": predict(scenario, speeds, result.params), "loo": loo}


def _table(meas, columns) -> tuple[dict, list[str]]:
    table, lines = {}, ["| model | quantity | exp 1 | exp 2 | exp 3 | mean abs error % |", "|---|---|---|---|---|---|"]
    lines.append("| measured | v_out [mm/s] | " + " | ".join(f"{x:.2f}" for x in meas["v_out"]) + " | |")
    lines.append("| measured | F_peak [N] | " + " | ".join(f"{x:.1f}" for x in meas["f_peak"]) + " | |")
    for name, col in columns.items():
        entry = {}
        for q, unit, fmt in (("v_out", "mm/s", "{:.2f}"), ("f_peak", "N", "{:.1f}")):
            err = 100 * (np.asarray(col[q]) - meas[q]) / meas[q]
            entry[q], entry[f"{q}_error_percent"] = np.asarray(col[q]).tolist(), err.tolist()
            entry[f"{q}_mean_abs_error_percent"] = float(np.mean(np.abs(err)))
            lines.append(f"| {name} | {q} [{unit}] | " + " | ".join(
                f"{fmt.format(x)} ({e:+.1f}%)" for x, e in zip(col[q], err)) + f" | {np.mean(np.abs(err)):.2f} |")
        table[name] = entry
    return table, lines


def main() -> dict:
    base = load_scenario(CONFIG, [])
    data = base.read_data(DATA)
    speeds = data.conditions["impact.approach_speed_m_s"]
    meas = {"v_out": 1e3 * data.measured["detached_velocity_m_s"], "f_peak": data.measured["peak_force_N"]}
    runs = {friction: study(friction, data, speeds) for friction in FRICTION}
    # paper parameters in our solver: ZQ c = 0.55, k from the paper's frictionless peak force of experiment 1
    nofric = load_scenario(CONFIG, ['friction.model="none"'])
    f0 = predict(nofric, speeds[:1], {"contact.restitution_c": 0.55, "contact.stiffness_N_m_n": 1e7})["f_peak"][0]
    k_paper = 1.0e7 * (PAPER_T1["f_peak"][0] / f0) ** 2.5  # F_peak ~ k^(2/5) for this law family
    paper_design = {"contact.restitution_c": 0.55, "contact.stiffness_N_m_n": k_paper}
    columns = {}
    for friction, run in runs.items():
        columns[f"fitted, {friction} friction"] = run["fitted"]
        columns[f"leave-one-out, {friction} friction"] = run["loo"]
    columns["paper Table 3 (friction)"] = {k: np.asarray(v) for k, v in PAPER_T3.items()}
    columns["paper Table 1 (no friction)"] = {k: np.asarray(v) for k, v in PAPER_T1.items()}
    columns["paper params in diffspace (paper friction)"] = predict(runs["paper"]["scenario"], speeds, paper_design)
    columns["paper params in diffspace (no friction)"] = predict(nofric, speeds, paper_design)
    table, lines = _table(meas, columns)
    table["v_in_mm_s"] = (1e3 * speeds).tolist()
    summary = {f"fit_{friction}_friction": run["fit"].to_dict() for friction, run in runs.items()}
    summary.update({f"leave_one_out_parameters_{f}": run["loo"]["params"] for f, run in runs.items()})
    summary.update(paper_params_stiffness_N_m_n=k_paper, table=table)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "impact_validation.json").write_text(json.dumps(summary, indent=2, default=float) + "\n")
    header = ["# Air-table impact validation (train experiments)", ""]
    for friction, run in runs.items():
        r = run["fit"]
        header.append(f"Fitted (ZQ, {friction} friction): k = {r.params[FITTED[0]]:.4g} +- {r.std_errors[FITTED[0]]:.2g} "
                      f"N/m^1.5, c = {r.params[FITTED[1]]:.4f} +- {r.std_errors[FITTED[1]]:.2g}; rms relative "
                      f"residual {r.rms:.4f}.")
    header += [f"Paper parameters in diffspace: ZQ c = 0.55, k = {k_paper:.4g} N/m^1.5 (calibrated to Table 1 F = "
               "201.5 N).", ""]
    (RESULTS / "impact_validation.md").write_text("\n".join(header + lines) + "\n")
    _plot(speeds, meas, columns, runs["coulomb"])
    print("\n".join(header + lines))
    return summary


def _plot(speeds, meas, columns, run) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    v = np.linspace(0.06, 0.14, 9)
    curve = predict(run["scenario"], v, run["fit"].params)
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    markers = ["s", "^", "v", "<", ">", "D", "P", "X"]
    for ax, q, label in ((axes[0], "v_out", "detached velocity [mm/s]"), (axes[1], "f_peak", "peak force [N]")):
        ax.plot(1e3 * v, curve[q], "-", color="C0", lw=1, label="fitted model, Coulomb friction (curve)")
        ax.plot(1e3 * speeds, meas[q], "ko", ms=7, label="measured")
        for m, (name, col) in zip(markers, columns.items()):
            ax.plot(1e3 * speeds, col[q], m, ms=5, mfc="none", label=name)
        ax.set_xlabel("impact speed [mm/s]")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(RESULTS / "impact_validation.png", dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    main()
