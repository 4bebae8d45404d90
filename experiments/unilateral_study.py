"""Unilateral-contact study: the paper's acceleration-level LCP vs the velocity-level (impulse) time stepping
on the planar floating-base arm, both against the independent reference of experiments/references/unilateral_reference.py
(Pinocchio, NumPy controller, Stewart-Trinkle stepper by contact-mode enumeration), the landing impact's
penetration vs the step, gradient checks through the LCPs, first-order convergence of the momentum balance,
and the Lemke benchmark (experiments/lcp_benchmark.py).

Cases (the shipped config ``configs/unilateral_contact.toml`` plus overrides):

* ``press_slide``: the default task (tip pressed with 5 N, slid 0.3 m along +x, base held);
* ``free_base``: the same with the base uncontrolled (free floating): momentum balance;
* ``impact``: the tip starts 20 mm above the plane (joint 3 at 56 deg instead of 53.13) and is pressed down:
  it lands with speed, an impact;
* ``landing``: the base raised 5 cm (tip 50 mm above the plane) and a 0.2 m slide (within the 0.295 m
  reach): the pressing force lands the tip at ~77 mm/s, an impact;
* ``near_singular``: a 0.34 m slide, just within the arm's reach on the plane (0.343 m; a longer one is a
  config error): the stretched arm meets the singular pose (damped controller, status ``singular_pose``),
  lifts the tip off and lands it again.

Writes ``experiments/results/unilateral/unilateral_study.json`` and PNG plots there.
Run: ``python experiments/unilateral_study.py [--quick]``
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

import diffspace  # noqa: F401  (float64)
from diffspace.io.packaged import DATA_DIR
from diffspace.scenarios import load_scenario

from references import unilateral_reference as reference  # noqa: E402
from lcp_benchmark import benchmark  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "unilateral"
CONFIG = DATA_DIR / "unilateral_contact.toml"
FORMULATIONS = ("acceleration", "velocity")
FREE_BASE = ["controller.base_stiffness=[0,0,0]", "controller.base_damping=[0,0,0]"]
CASES = {
    "press_slide": [],
    "free_base": FREE_BASE,
    "impact": ["unilateral.initial_joint_angles_deg=[60.0, -60.0, 56.0]"],
    "landing": ["unilateral.initial_base_m=[0.0, 2.55]", "controller.slide_m=0.2"],
    "near_singular": ["controller.slide_m=0.34"],
}
REFERENCE_CASES = {"press_slide": {}, "landing": {"unilateral.initial_base_m": [0.0, 2.55], "controller.slide_m": 0.2},
                   "near_singular": {"controller.slide_m": 0.34}}
SUMMARY_KEYS = ("status", "separated_s", "stick_s", "slip_positive_s", "slip_negative_s", "peak_normal_force_N",
                "max_penetration_m", "max_separation_m", "max_closing_speed_m_s", "impacts", "singular_s",
                "min_manipulability_m2", "tip_travel_m", "momentum_balance_error_N_s", "lcp_max_pivots")


_SIMULATE = jax.jit(lambda scenario, params: scenario.simulate(params))  # one cache for every case


def _simulate(overrides):
    scenario = load_scenario(CONFIG, overrides)
    return scenario, _SIMULATE(scenario, scenario.params)


def compare_formulations() -> tuple[dict, dict]:
    """Every case in both formulations: summaries and the largest differences between them."""
    results, trajectories = {}, {}
    for case, overrides in CASES.items():
        runs = {f: _simulate(overrides + [f'unilateral.formulation="{f}"']) for f in FORMULATIONS}
        summaries = {f: {k: s.summary(o)[k] for k in SUMMARY_KEYS} for f, (s, o) in runs.items()}
        for f, (s, o) in runs.items():
            summaries[f]["contact_intervals"] = s.summary(o)["contact_intervals"]
        acc, vel = (runs[f][1].trajectory for f in FORMULATIONS)
        diff = {
            "max_normal_force_difference_N": float(jnp.max(jnp.abs(acc.normal_force - vel.normal_force))),
            "max_tangential_force_difference_N": float(jnp.max(jnp.abs(acc.tangent_force - vel.tangent_force))),
            "max_tip_x_difference_m": float(jnp.max(jnp.abs(acc.tip[:, 0] - vel.tip[:, 0]))),
            "max_tip_y_difference_m": float(jnp.max(jnp.abs(acc.tip[:, 1] - vel.tip[:, 1]))),
            "steps_with_different_mode": int(jnp.sum(acc.mode != vel.mode)),
        }
        results[case] = {"overrides": overrides, **summaries, "differences": diff}
        trajectories[case] = {f: runs[f][1].trajectory for f in FORMULATIONS}
        print(f"{case:12s} " + "  ".join(f"{k}={v:.3g}" for k, v in diff.items()))
    return results, trajectories


def gradient_checks(quick: bool) -> dict:
    """d(tip travel)/d(design) by reverse mode through every LCP vs central differences (two step sizes)."""
    keys = ("controller.stiffness_N_m", "contact.mu", "controller.press_force_N")
    out = {}
    for formulation in FORMULATIONS[: 1 if quick else 2]:
        scenario = load_scenario(CONFIG, [f'unilateral.formulation="{formulation}"'])
        x = jnp.array([float(scenario.params.controller.stiffness), float(scenario.params.mu),
                       float(scenario.params.controller.press_force)])

        def travel(values, scenario=scenario):
            params = scenario.with_design(scenario.params, dict(zip(keys, values)))
            return scenario.metrics(params)["tip_travel_m"]

        value_and_grad = jax.jit(jax.value_and_grad(travel))
        grad = np.asarray(value_and_grad(x)[1])
        rows = {}
        for i, key in enumerate(keys):
            fds = []
            for rel in (1e-4, 1e-6):
                e = np.zeros(3)
                e[i] = rel * float(x[i])
                fds.append(float((value_and_grad(x + e)[0] - value_and_grad(x - e)[0]) / (2 * e[i])))
            rows[key] = {"grad": float(grad[i]), "fd_rel_1e-4": fds[0], "fd_rel_1e-6": fds[1],
                         "rel_error_vs_fd_1e-6": abs(grad[i] - fds[1]) / max(abs(fds[1]), 1e-300)}
            print(f"{formulation:12s} d travel / d {key:26s} grad {grad[i]: .6e}  fd {fds[1]: .6e}  "
                  f"rel err {rows[key]['rel_error_vs_fd_1e-6']:.1e}")
        out[formulation] = rows
    return out


def momentum_convergence(quick: bool) -> dict:
    """Free base: |momentum change - contact impulse| for dt, dt/2, dt/4 (first order: halves with dt)."""
    out = {}
    for dt in (0.01, 0.005) if quick else (0.01, 0.005, 0.0025):
        scenario, outcome = _simulate(FREE_BASE + [f"unilateral.dt_s={dt}", 'unilateral.formulation="velocity"'])
        summary = scenario.summary(outcome)
        out[str(dt)] = {k: summary[k] for k in ("momentum_balance_error_N_s", "contact_impulse_N_s")}
        print(f"dt {dt}: momentum balance error {summary['momentum_balance_error_N_s']:.3e} N s")
    errors = [v["momentum_balance_error_N_s"] for v in out.values()]
    out["error_ratios"] = [a / b for a, b in zip(errors, errors[1:])]
    return out


def reference_agreement(quick: bool) -> dict:
    """Largest differences to the independent reference (experiments/references/unilateral_reference.py) per case, for the
    velocity level at 10 ms and the acceleration level at 10 and 5 ms."""
    out = {}
    for case, overrides in REFERENCE_CASES.items():
        out[case] = {}
        runs = (("velocity", 0.01), ("acceleration", 0.01), ("acceleration", 0.005))
        for formulation, dt in runs[: 2 if quick else 3]:
            settings = {**overrides, "unilateral.formulation": formulation, "unilateral.dt_s": dt}
            scenario, outcome = _simulate([f"{k}={json.dumps(v)}" for k, v in settings.items()])
            traj = outcome.trajectory
            run = {k: np.asarray(getattr(traj, k)) for k in ("tip", "normal_force", "tangent_force", "mode",
                                                              "impact_impulse")}
            ref = reference.simulate(reference.read_config(CONFIG, settings))
            row = reference.agreement(run, ref, dt)
            row["closing_speed_m_s"] = [float(np.max(traj.closing_speed)), float(ref["closing_speed"].max())]
            out[case][f"{formulation}_{dt:g}"] = row
            shown = (f"{k}={v:.2e}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items())
            print(f"reference {case:13s} {formulation:12s} dt {dt:g}: " + "  ".join(shown))
    return out


def landing_penetration(quick: bool) -> dict:
    """The landing case at the acceleration level: closing speed, the penetration of the impact (largest over
    the five steps from it) and its bound closing speed x step, for dt = 10, 5 (2.5) ms."""
    out = {}
    for dt in (0.01, 0.005) if quick else (0.01, 0.005, 0.0025):
        scenario, outcome = _simulate(CASES["landing"] + [f"unilateral.dt_s={dt}"])
        traj = outcome.trajectory
        k = int(np.flatnonzero(np.asarray(traj.closing_speed))[0])
        speed = float(traj.closing_speed[k])
        out[str(dt)] = {"closing_speed_m_s": speed, "landing_penetration_m": -float(np.min(traj.tip[k : k + 5, 1])),
                        "bound_speed_x_dt_m": speed * dt,
                        "max_penetration_m": scenario.summary(outcome)["max_penetration_m"]}
        print(f"landing dt {dt}: " + "  ".join(f"{k}={v:.3e}" for k, v in out[str(dt)].items()))
    return out


def plot_comparison(trajectories: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cases = list(trajectories)
    fig, axes = plt.subplots(3, len(cases), figsize=(4.2 * len(cases), 7.5), squeeze=False)
    for col, case in enumerate(cases):
        for f, style in zip(FORMULATIONS, ("-", "--")):
            traj = trajectories[case][f]
            t = np.asarray(traj.t)
            axes[0, col].plot(t[:-1], np.asarray(traj.normal_force), style, label=f)
            axes[1, col].plot(t[:-1], np.asarray(traj.tangent_force), style, label=f)
            axes[2, col].plot(t, 1e3 * np.asarray(traj.tip[:, 1]), style, label=f)
        axes[0, col].set_title(case)
        axes[2, col].set_xlabel("time [s]")
    for row, label in enumerate(("normal force [N]", "tangential force [N]", "tip gap [mm]")):
        axes[row, 0].set_ylabel(label)
        for ax in axes[row]:
            ax.grid(alpha=0.3)
    axes[0, 0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> dict:
    quick = "--quick" in sys.argv
    RESULTS.mkdir(parents=True, exist_ok=True)
    comparison, trajectories = compare_formulations()
    plot_comparison(trajectories, RESULTS / "formulations.png")
    for case in ("press_slide", "landing", "near_singular"):
        scenario, outcome = _simulate(CASES[case])
        scenario.write(outcome, RESULTS / case)
    out = {
        "formulations": comparison,
        "reference": reference_agreement(quick),
        "landing_penetration": landing_penetration(quick),
        "gradients": gradient_checks(quick),
        "momentum_convergence": momentum_convergence(quick),
        "lcp_benchmark": benchmark(batch=256 if quick else 1024, numpy_subset=32 if quick else 128),
    }
    (RESULTS / "unilateral_study.json").write_text(json.dumps(out, indent=2) + "\n")
    return out


if __name__ == "__main__":
    main()
