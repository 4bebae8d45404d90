"""Deployment of the replaceable-interface mast (paper: deployment_replaceable_mast; issue 11).

    python experiments/deployment_study.py [part ...]     parts: compare mesh solvers optimize bench (default: all)

Writes ``experiments/results/deployment/``: ``<part>.json`` and PNG figures.

* ``compare``: the paper's comparisons with the shell model (scheme 3 unless varied, 90 deg in 6.1 s):
  drive laws (trapezoid, cubic, quintic, cycloidal), schemes 1/2/3 (cubic law), shell thickness
  0.5/1.0/1.5 mm and inner diameter 85/90/100 mm (cubic law), and the beam-equivalent interface; per case
  the summary metrics and the vibration amplitude (peak |end relative angular acceleration|) in the first
  0.5 s and within 0.5 s of the motion's end (paper, cubic law: 23.24 and 24.10 deg/s^2);
* ``mesh``: residual vibration and wall time of scheme 3 over shell meshes (circumferential x axial);
* ``solvers``: the generalized-alpha integrator against Diffrax Tsit5 (explicit) and Kvaerno5 (implicit, both
  through the shared index-1 + Baumgarte + projection driver) on a 1 ms move of scheme 1: steps, wall time,
  steps per simulated second and the end module's rate against a fine generalized-alpha reference;
* ``optimize``: ``diffspace optimize configs/deployment_optimize.toml`` (beam interfaces, 5 ms step), its
  optimum re-run as a plain run with the beam and with the shell interfaces, against the cycloidal law;
* ``bench``: :func:`deployment_benchmark` (compile, forward and gradient wall times, steps; shell and beam).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import diffrax
import jax
import jax.numpy as jnp
import numpy as np

from diffspace.app.cli import main as cli_main
from diffspace.bodies import natural
from diffspace.integrate import SolverSettings, Stabilization, solve_constrained
from diffspace.io.packaged import DATA_DIR
from diffspace.io.results import plot_panels
from diffspace.scenarios import load_scenario
from diffspace.scenarios.deployment import Deployment, reference_coordinates

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "experiments" / "results" / "deployment"
SCHEME3 = DATA_DIR / "deployment_scheme3.toml"
SCHEME1 = DATA_DIR / "deployment_scheme1.toml"
SIMULATE = jax.jit(Deployment.simulate)
WINDOW = 0.5  # s: the start and end windows of the motion for the vibration amplitudes
METRICS = ("residual_vibration_peak_deg_s2", "residual_vibration_rms_deg_s2", "settling_time_s",
           "peak_end_angular_acceleration_deg_s2", "peak_joint_torque_N_m", "peak_joint_force_N",
           "constraint_drift_max_m", "energy_residual_J", "status")


def run_case(overrides: list[str], config=SCHEME3) -> tuple[dict, object]:
    s = load_scenario(config, overrides)
    start = time.perf_counter()
    out = jax.block_until_ready(SIMULATE(s, s.params))
    wall = time.perf_counter() - start
    summary = s.summary(out)
    t = np.asarray(out.t)
    relative = np.rad2deg(np.abs(np.asarray(out.end_acceleration) - np.asarray(out.theta_acceleration)))
    end = float(out.motion_end)
    row = {k: summary[k] for k in METRICS}
    row.update(start_amplitude_deg_s2=float(relative[t <= WINDOW].max()),
               end_amplitude_deg_s2=float(relative[(t >= end - WINDOW) & (t <= end + WINDOW)].max()),
               wall_s=wall, overrides=overrides)
    return row, out


def compare() -> dict:
    cases = {
        **{f"law={law}": [f'drive.law="{law}"'] for law in ("trapezoid", "cubic", "quintic", "cycloidal")},
        **{f"scheme={k}": [f"mast.scheme={k}", 'drive.law="cubic"'] for k in (1, 2)},
        **{f"thickness={t * 1e3:g}mm": ['drive.law="cubic"', f"interface.thickness_m={t}"] for t in (5e-4, 1e-3, 1.5e-3)},
        **{f"diameter={d * 1e3:g}mm": ['drive.law="cubic"', f"interface.inner_diameter_m={d}"] for d in (0.085, 0.09, 0.1)},
        "beam,law=cubic": ['drive.law="cubic"', 'interface.model="beam"'],
        "beam,law=trapezoid": ['interface.model="beam"'],
    }
    table, traces = {}, {}
    for name, overrides in cases.items():
        table[name], out = run_case(overrides)
        traces[name] = (np.asarray(out.t), np.rad2deg(np.asarray(out.end_acceleration)))
        np.savez(OUT / f"trace_{name.replace('=', '_').replace(',', '_')}.npz", t=traces[name][0],
                 end_acceleration_deg_s2=traces[name][1],
                 theta_acceleration_deg_s2=np.rad2deg(np.asarray(out.theta_acceleration)))
        print(name, {k: table[name][k] for k in ("residual_vibration_rms_deg_s2", "start_amplitude_deg_s2",
                                                 "end_amplitude_deg_s2", "wall_s")}, flush=True)
    table["scheme=3"] = table["law=cubic"]
    traces["scheme=3"] = traces["law=cubic"]
    for group, names in (("laws", [f"law={x}" for x in ("trapezoid", "cubic", "quintic", "cycloidal")]),
                         ("schemes", [f"scheme={k}" for k in (1, 2, 3)]),
                         ("thickness", [n for n in table if n.startswith("thickness")]),
                         ("diameter", [n for n in table if n.startswith("diameter")])):
        t = traces[names[0]][0]
        plot_panels(OUT / f"compare_{group}.png", t, [("end angular acceleration [deg/s^2]",
                                                        {n: traces[n][1] for n in names})])
    return table


def mesh_study(meshes=((8, 2), (12, 2), (16, 2), (8, 4), (12, 4), (8, 6), (8, 8))) -> dict:
    rows = {}
    for n_circ, n_axial in meshes:
        row, _ = run_case([f"mesh.n_circumferential={n_circ}", f"mesh.n_axial={n_axial}"])
        rows[f"{n_circ}x{n_axial}"] = row
        print(n_circ, n_axial, row["residual_vibration_rms_deg_s2"], row["wall_s"], flush=True)
    return rows


def solver_comparison(horizon: float = 0.001) -> dict:
    """Scheme 1, trapezoid law moving 0.3 deg x (horizon / 5 ms)^2 in ``horizon`` seconds (drive acceleration
    1.1e3 rad/s^2 whatever the horizon: a hard start that rings the shell's high modes): generalized-alpha at
    horizon/20 and at horizon/400 (the reference), Tsit5 (explicit) and Kvaerno5 (implicit) through the
    shared index-1 + Baumgarte + projection driver (rtol 1e-6, adaptive steps, at most 100,000). Reports
    steps, wall time (generalized-alpha: first call = compile + run, then a run; Diffrax: compile, then one
    run), steps per simulated second (what a full 8.1 s deployment would need) and the end module's rate
    error."""
    results = {}
    move = ["simulation.settle_s=0.0", f"drive.duration_s={horizon}", f"drive.ramp_s={horizon / 4}",
            f"drive.angle_deg={0.3 * (horizon / 0.005) ** 2}"]
    for label, step in (("alpha_fine", horizon / 400), ("alpha", horizon / 20)):
        s = load_scenario(SCHEME1, [f"simulation.step_s={step}", *move])
        start = time.perf_counter()
        out = jax.block_until_ready(SIMULATE(s, s.params))
        first = time.perf_counter() - start
        start = time.perf_counter()
        jax.block_until_ready(SIMULATE(s, s.params))
        steps = int(round(float(out.t[-1]) / step))
        results[label] = dict(steps=steps, first_call_s=first, run_s=time.perf_counter() - start,
                              end_rate_deg_s=float(np.rad2deg(out.end_rate[-1])),
                              drift_max_m=float(jnp.max(out.drift)))
        print(label, results[label], flush=True)
    mast = s.mast(s.params)
    y0 = reference_coordinates(mast)
    for name, solver in (("tsit5", diffrax.Tsit5()), ("kvaerno5", diffrax.Kvaerno5())):
        solve = jax.jit(lambda m, q: solve_constrained(m, q, jnp.zeros_like(q), horizon, Stabilization(),
                                                       solver=solver,
                                                       settings=SolverSettings(1e-6, 1e-9, n_save=2)))
        start = time.perf_counter()
        compiled = solve.lower(mast, y0).compile()
        compile_s = time.perf_counter() - start
        start = time.perf_counter()
        sol = jax.block_until_ready(compiled(mast, y0))
        run_s = time.perf_counter() - start
        end = slice(12 * (mast.n_modules - 1), 12 * mast.n_modules)
        rate = natural.angular_velocity(sol.q[-1][end], sol.w[-1][end])[2]
        results[name] = dict(steps=int(sol.num_steps), compile_s=compile_s, run_s=run_s,
                             status=int(sol.status), end_rate_deg_s=float(np.rad2deg(rate)),
                             drift_max_m=float(sol.position_violation.max()))
        print(name, results[name], flush=True)
    reference = results["alpha_fine"]["end_rate_deg_s"]
    for row in results.values():
        row["end_rate_error_deg_s"] = abs(row["end_rate_deg_s"] - reference)
        row["steps_per_simulated_s"] = row["steps"] / horizon
    return results


def optimize() -> dict:
    """The drive-law optimisation end to end, verified by plain runs (residual vibration RMS, deg/s^2)."""
    config = DATA_DIR / "deployment_optimize.toml"
    out = OUT / "optimize"
    assert cli_main(["optimize", str(config), "--out", str(out), "--overwrite", "--quiet"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    rows = {"optimizer_objective": summary["optimum_objective"], "spline_fit_of_cycloidal": summary["initial_objective"],
            "optimum": summary["optimum"]}
    for model in ("beam", "shell"):
        for label, path, overrides in (("optimum", out / "optimum.toml", []),
                                       ("cycloidal", config, ['drive.law="cycloidal"'])):
            row, _ = run_case([*overrides, f'interface.model="{model}"'], config=path)
            rows[f"{model},{label}"] = {k: row[k] for k in ("residual_vibration_rms_deg_s2", "peak_joint_torque_N_m",
                                                            "status", "wall_s")}
        rows[f"{model},improvement_over_cycloidal"] = (rows[f"{model},cycloidal"]["residual_vibration_rms_deg_s2"]
                                                      / rows[f"{model},optimum"]["residual_vibration_rms_deg_s2"])
        print(model, rows[f"{model},improvement_over_cycloidal"], flush=True)
    return rows


def deployment_benchmark(config: Path = SCHEME3, models=("shell", "beam")) -> dict:
    """Wall times of one full run (compile, then forward) and of the gradient of the residual vibration RMS
    with respect to the shell thickness (compile, then run), and the steps taken, per interface model."""
    rows = {}
    for model in models:
        s = load_scenario(config, [f'interface.model="{model}"'])
        forward = jax.jit(Deployment.simulate)
        start = time.perf_counter()
        compiled = forward.lower(s, s.params).compile()
        compile_s = time.perf_counter() - start
        start = time.perf_counter()
        out = jax.block_until_ready(compiled(s, s.params))
        forward_s = time.perf_counter() - start

        def metric(thickness):
            p = s.with_design(s.params, {"interface.thickness_m": thickness})
            return s.metrics(p)["residual_vibration_rms_deg_s2"]

        grad = jax.jit(jax.grad(metric))
        x = s.params.mast.thickness
        start = time.perf_counter()
        compiled_grad = grad.lower(x).compile()
        grad_compile_s = time.perf_counter() - start
        start = time.perf_counter()
        g = jax.block_until_ready(compiled_grad(x))
        gradient_s = time.perf_counter() - start
        rows[model] = dict(compile_s=compile_s, forward_s=forward_s, gradient_compile_s=grad_compile_s,
                           gradient_s=gradient_s, gradient_over_forward=gradient_s / forward_s,
                           steps=int(out.t.shape[0] - 1), status=s.summary(out)["status"],
                           d_rms_d_thickness=float(g))
        print(model, rows[model], flush=True)
    return rows


PARTS = {"compare": compare, "mesh": mesh_study, "solvers": solver_comparison, "optimize": optimize,
         "bench": deployment_benchmark}


def main(parts: list[str]) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for part in parts or list(PARTS):
        result = PARTS[part]()
        (OUT / f"{part}.json").write_text(json.dumps(result, indent=1, default=str))


if __name__ == "__main__":
    main(sys.argv[1:])
