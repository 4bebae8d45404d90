"""Air-table impact validation (paper Section 4.1, Tables 1 and 3): measured vs fitted model vs the paper.

1. ``diffspace fit`` of the Zhiying-Qishao contact (k and c; friction of Eq. (10) with the paper's
   mu = 0.00905, g = 10) on the three train impacts ``experiments/data/impact_airtable_train.csv``.
2. Leave-one-out: refit on two impacts and predict the held-out one (a test of prediction at another speed).
3. The paper's own model values (Table 1 without friction, Table 3 with friction) as published, and the
   paper's parameters (ZQ, c = 0.55) run in our solver with k calibrated to the paper's Table 1 peak force
   of experiment 1 (the paper does not give k), which shows that c = 0.55 gives e = 0.53 in this law, not
   the 0.66 of the paper's Table 1.

Writes ``experiments/results/impact_validation.{json,md,png}`` and ``experiments/results/impact_fit/``.
Run: ``python experiments/impact_validation.py``
"""

from __future__ import annotations

import json
from pathlib import Path

import jax.numpy as jnp
import numpy as np

import diffspace  # noqa: F401
from diffspace.app.cli import load_scenario
from diffspace.design.least_squares import least_squares
from diffspace.scenarios import impact

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
DATA = HERE / "data" / "impact_airtable_train.csv"
CONFIG = ROOT / "configs" / "impact_airtable.toml"

# Paper Tables 1 and 3 (model columns; speeds in mm/s, forces in N)
PAPER_T1 = {"v_out": [62.57, 82.54, 53.83], "f_peak": [201.5, 279.4, 167.3]}  # without friction
PAPER_T3 = {"v_out": [57.22, 79.21, 47.22], "f_peak": [220.1, 286.8, 185.5]}  # with friction, Eq. (10)


def _fit_rows(cfg, data, rows):
    sub = {k: v[rows] for k, v in data.items()}

    def residuals(p):
        pred = impact.predict(cfg, sub["v_in"], p)
        return jnp.concatenate([pred["v_out"] / sub["v_out"] - 1.0, pred["f_peak"] / sub["f_peak"] - 1.0])

    init = {"stiffness": cfg["contact"]["stiffness_N_m_n"], "restitution": cfg["contact"]["restitution_c"]}
    return least_squares(residuals, init, {"stiffness": "log", "restitution": ("logit", 0.0, 1.0)})


def _with(cfg, **updates):
    new = {s: dict(t) for s, t in cfg.items()}
    for dotted, value in updates.items():
        section, key = dotted.split("__")
        new[section][key] = value
    return new


def main() -> dict:
    _, cfg = load_scenario(CONFIG, [])
    data = impact.read_impact_data(DATA)
    n = len(data["v_in"])
    result = impact.fit(cfg, DATA, RESULTS / "impact_fit")
    fitted = _with(cfg, contact__stiffness_N_m_n=result.params["stiffness"],
                   contact__restitution_c=result.params["restitution"])
    pred = {k: 1e3 ** (k == "v_out") * np.asarray(v) for k, v in impact.predict(fitted, data["v_in"]).items()}

    loo = {"v_out": np.zeros(n), "f_peak": np.zeros(n), "params": []}
    for held in range(n):
        rows = np.array([i for i in range(n) if i != held])
        r = _fit_rows(cfg, data, rows)
        p = impact.predict(_with(cfg, contact__stiffness_N_m_n=r.params["stiffness"],
                                 contact__restitution_c=r.params["restitution"]), data["v_in"][held:held + 1])
        loo["v_out"][held], loo["f_peak"][held] = 1e3 * float(p["v_out"][0]), float(p["f_peak"][0])
        loo["params"].append(r.params)

    # paper parameters in our solver: ZQ c = 0.55, k from the paper's frictionless peak force of experiment 1
    nofric = _with(cfg, friction__model="none", contact__restitution_c=0.55, contact__stiffness_N_m_n=1.0e7)
    f0 = float(impact.predict(nofric, data["v_in"][:1])["f_peak"][0])
    k_paper = 1.0e7 * (PAPER_T1["f_peak"][0] / f0) ** 2.5  # F_peak ~ k^(2/5) for this law family
    ours_t1 = impact.predict(_with(nofric, contact__stiffness_N_m_n=k_paper), data["v_in"])
    ours_t3 = impact.predict(_with(cfg, contact__restitution_c=0.55, contact__stiffness_N_m_n=k_paper), data["v_in"])

    meas = {"v_out": 1e3 * data["v_out"], "f_peak": data["f_peak"]}
    columns = {
        "fitted model": pred,
        "leave-one-out prediction": loo,
        "paper Table 3 (friction)": {k: np.asarray(v) for k, v in PAPER_T3.items()},
        "paper Table 1 (no friction)": {k: np.asarray(v) for k, v in PAPER_T1.items()},
        "paper params in diffspace (friction)": {"v_out": 1e3 * np.asarray(ours_t3["v_out"]),
                                                 "f_peak": np.asarray(ours_t3["f_peak"])},
        "paper params in diffspace (no friction)": {"v_out": 1e3 * np.asarray(ours_t1["v_out"]),
                                                    "f_peak": np.asarray(ours_t1["f_peak"])},
    }
    table = {"v_in_mm_s": (1e3 * data["v_in"]).tolist(), "measured": {k: v.tolist() for k, v in meas.items()}}
    lines = ["| model | quantity | exp 1 | exp 2 | exp 3 | mean abs error % |", "|---|---|---|---|---|---|"]
    lines.append("| measured | v_out [mm/s] | " + " | ".join(f"{x:.2f}" for x in meas["v_out"]) + " | |")
    lines.append("| measured | F_peak [N] | " + " | ".join(f"{x:.1f}" for x in meas["f_peak"]) + " | |")
    for name, col in columns.items():
        entry = {}
        for q, unit, fmt in (("v_out", "mm/s", "{:.2f}"), ("f_peak", "N", "{:.1f}")):
            err = 100 * (np.asarray(col[q]) - meas[q]) / meas[q]
            entry[q] = np.asarray(col[q]).tolist()
            entry[f"{q}_error_percent"] = err.tolist()
            entry[f"{q}_mean_abs_error_percent"] = float(np.mean(np.abs(err)))
            lines.append(f"| {name} | {q} [{unit}] | " + " | ".join(
                f"{fmt.format(x)} ({e:+.1f}%)" for x, e in zip(col[q], err)) + f" | {np.mean(np.abs(err)):.2f} |")
        table[name] = entry
    summary = {
        "fit": result.to_dict(),
        "leave_one_out_parameters": loo["params"],
        "paper_params_stiffness_N_m_n": k_paper,
        "table": table,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "impact_validation.json").write_text(json.dumps(summary, indent=2, default=float) + "\n")
    header = [
        "# Air-table impact validation (train experiments)",
        "",
        f"Fitted (ZQ + paper friction): k = {result.params['stiffness']:.4g} +- {result.std_errors['stiffness']:.2g} "
        f"N/m^1.5, c = {result.params['restitution']:.4f} +- {result.std_errors['restitution']:.2g}; "
        f"rms relative residual {result.rms:.4f}.",
        f"Paper parameters in diffspace: ZQ c = 0.55, k = {k_paper:.4g} N/m^1.5 (calibrated to Table 1 F = 201.5 N).",
        "",
    ]
    (RESULTS / "impact_validation.md").write_text("\n".join(header + lines) + "\n")
    _plot(data, meas, columns, fitted)
    print("\n".join(header + lines))
    return summary


def _plot(data, meas, columns, fitted) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    v = np.linspace(0.06, 0.14, 9)
    curve = {k: np.asarray(x) for k, x in impact.predict(fitted, v).items()}
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    markers = ["s", "^", "v", "<", ">", "D"]
    for ax, q, scale, label in ((axes[0], "v_out", 1e3, "detached velocity [mm/s]"),
                                (axes[1], "f_peak", 1.0, "peak force [N]")):
        ax.plot(1e3 * v, scale * curve[q], "-", color="C0", lw=1, label="fitted model (curve)")
        ax.plot(1e3 * data["v_in"], meas[q], "ko", ms=7, label="measured")
        for m, (name, col) in zip(markers, columns.items()):
            ax.plot(1e3 * data["v_in"], col[q], m, ms=5, mfc="none", label=name)
        ax.set_xlabel("impact speed [mm/s]")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(RESULTS / "impact_validation.png", dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    main()
