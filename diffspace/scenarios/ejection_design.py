"""Ejection design commands: attitude optimisation, friction identification and batched sweeps.

* ``optimize``: the attitude (free joints' angles within their limits) maximising the stable ejection
  velocity (``objective = "velocity"``), minimising the tumbling rate (``"tumbling"``), a weighted mix
  ``J = v_stable - w |omega_stable|``, or maximising the base's separation velocity
  (``"separation_velocity"``, the paper's "ejection velocity", highest for the lowest equivalent mass).
  The stable CoM velocity is bounded by energy, ``v <= l sqrt(k/M)``, reached by any attitude whose
  joints never slip, so the velocity objective has a flat optimum; the others are sharper. A batched random sweep samples the box; the best sweep points and
  random points seed a multi-start Adam (Optax) whose gradients go through the whole hybrid simulation.
* ``fit``: viscous ``B`` (and Coulomb torque) from measured ejection velocities of several attitudes by
  Levenberg-Marquardt (:mod:`diffspace.identify`), replacing the paper's grid search over B.
* ``sweep``: random attitudes, chunked and resumable (:mod:`diffspace.sweep`).
"""

from __future__ import annotations

import csv
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from ..io.config import Field
from ..status import ConfigError
from ..spatial import safe_norm
from ..io.results import plot_panels, print_summary, write_summary, write_timeseries

DESIGN_SECTIONS = {
    "optimize": {
        "objective": Field("str", "velocity", choices=("velocity", "tumbling", "mix", "separation_velocity")),
        "tumbling_weight_m_s_per_deg_s": Field("float", 0.01, min=0.0, help="mix: J = v - w |omega|"),
        "n_starts": Field("int", 4, min=1, max=256),
        "steps": Field("int", 30, min=1, max=10_000),
        "learning_rate": Field("float", 0.1, gt=0.0),
        "sweep_samples": Field("int", 128, min=1, max=1_000_000),
        "chunk_size": Field("int", 64, min=1),
        "seed": Field("int", 0),
    },
    "fit": {
        "parameters": Field("any", ["viscous"], check=lambda v: None if isinstance(v, list) and v and set(v) <= {"viscous", "coulomb"} else "expected a non-empty list from: viscous, coulomb"),
        "initial_viscous_N_m_s_rad": Field("float", 4.8, gt=0.0),
        "initial_coulomb_N_m": Field("float", 1.5, gt=0.0),
        "velocity_std_m_s": Field("float", 1e-3, gt=0.0, help="measurement noise, scales the residuals"),
        "angular_rate_std_deg_s": Field("float", 0.1, gt=0.0),
        "angle_std_deg": Field("float", 0.05, gt=0.0, help="encoder noise of joint{j}_change_final_deg columns"),
        "initial_grid": Field("bool", True, help="start from the best point of a coarse batched grid"),
    },
    "sweep": {
        "samples": Field("int", 256, min=1),
        "chunk_size": Field("int", 64, min=1),
        "seed": Field("int", 0),
    },
}


def _study():
    from . import ejection_study

    return ejection_study


def _bounds(case) -> tuple[np.ndarray, np.ndarray]:
    free = np.array(case.free)
    lo, hi = np.asarray(case.robot.lower)[free], np.asarray(case.robot.upper)[free]
    return np.where(np.isfinite(lo), lo, -np.pi), np.where(np.isfinite(hi), hi, np.pi)


def _metrics(case, free_angles):
    """Stable velocity, tumbling rate [deg/s] and validity of the ejection at the given free-joint angles."""
    angles = case.angles.at[jnp.asarray(case.free)].set(free_angles)
    result, _ = _study().evaluate(case, angles, case.params)
    rate = jnp.rad2deg(safe_norm(result.stable_angular_velocity))
    valid = (result.status == 0) & result.separated
    return {"stable_velocity_m_s": result.stable_velocity, "tumbling_rate_deg_s": rate,
            "stable": result.stable, "valid": valid, "separation_velocity_m_s": result.separation_velocity}


def _objective(metrics, objective: str, weight: float):
    if objective == "velocity":
        value = metrics["stable_velocity_m_s"]
    elif objective == "separation_velocity":
        value = metrics["separation_velocity_m_s"]
    elif objective == "tumbling":
        value = -metrics["tumbling_rate_deg_s"]
    else:
        value = metrics["stable_velocity_m_s"] - weight * metrics["tumbling_rate_deg_s"]
    return jnp.where(metrics["valid"], value, -jnp.inf)


def _random_attitudes(case, samples: int, seed: int) -> np.ndarray:
    lo, hi = _bounds(case)
    return np.random.default_rng(seed).uniform(lo, hi, size=(samples, len(lo)))


def optimize(cfg: dict, out: Path) -> dict:
    import optax
    from tqdm import tqdm

    from ..design.sweep import run_chunked

    study = _study()
    case = study.case_from_config(cfg)
    opt = cfg["optimize"]
    objective, weight = opt["objective"], opt["tumbling_weight_m_s_per_deg_s"]
    lo, hi = (jnp.asarray(b) for b in _bounds(case))

    batch = jax.jit(jax.vmap(lambda a: {**_metrics(case, a), "objective": _objective(_metrics(case, a), objective, weight)}))
    samples = _random_attitudes(case, opt["sweep_samples"], opt["seed"])
    swept = run_chunked(batch, samples, opt["chunk_size"], store=out / "sweep_chunks", label="sweep")
    order = np.argsort(-swept["objective"])
    n_seeded = min(opt["n_starts"] // 2 + opt["n_starts"] % 2, len(samples))
    starts = np.concatenate([samples[order[:n_seeded]], _random_attitudes(case, opt["n_starts"] - n_seeded, opt["seed"] + 1)])
    span = hi - lo
    to_x = lambda a: jnp.log((a - lo) / (hi - a))  # noqa: E731  (inverse of the sigmoid box map)
    to_angles = lambda x: lo + span * jax.nn.sigmoid(x)  # noqa: E731
    starts = np.clip(starts, np.asarray(lo + 1e-6 * span), np.asarray(hi - 1e-6 * span))

    def loss(x):
        value = _objective(_metrics(case, to_angles(x)), objective, weight)
        return -jnp.where(jnp.isfinite(value), value, -1e3)

    optimizer = optax.adam(opt["learning_rate"])
    value_and_grad = jax.jit(jax.vmap(jax.value_and_grad(loss)))
    x = jax.vmap(to_x)(jnp.asarray(starts))
    state = jax.vmap(optimizer.init)(x)
    best_x, best_value = x, jnp.full(x.shape[0], jnp.inf)
    history = []
    for _ in tqdm(range(opt["steps"]), desc="optimize", unit="step"):
        values, grads = value_and_grad(x)
        improved = values < best_value
        best_x = jnp.where(improved[:, None], x, best_x)
        best_value = jnp.where(improved, values, best_value)
        history.append(np.asarray(values))
        updates, state = jax.vmap(optimizer.update)(grads, state)
        x = optax.apply_updates(x, updates)
    final_values, _ = value_and_grad(x)
    improved = final_values < best_value
    best_x = jnp.where(improved[:, None], x, best_x)
    best_value = jnp.where(improved, final_values, best_value)
    history.append(np.asarray(final_values))
    k = int(jnp.argmin(best_value))
    optimum = np.asarray(to_angles(best_x[k]))
    metrics = {key: float(v) for key, v in jax.jit(lambda a: _metrics(case, a))(jnp.asarray(optimum)).items()}
    sweep_best = int(order[0])
    free = [j + 1 for j in case.free]
    summary = {
        "objective": objective,
        "free_joints": free,
        "optimum_joint_angles_deg": np.rad2deg(optimum).tolist(),
        "optimum_objective": float(-best_value[k]),
        "optimum_stable_velocity_m_s": metrics["stable_velocity_m_s"],
        "optimum_tumbling_rate_deg_s": metrics["tumbling_rate_deg_s"],
        "optimum_stable": bool(metrics["stable"]),
        "sweep_samples": len(samples),
        "sweep_best_objective": float(swept["objective"][sweep_best]),
        "sweep_best_joint_angles_deg": np.rad2deg(samples[sweep_best]).tolist(),
        "optimizer_not_beaten_by_sweep": bool(-best_value[k] >= swept["objective"][sweep_best] - 1e-12),
        "initial_attitude_objective": float(_objective(jax.jit(lambda a: _metrics(case, a))(case.angles[jnp.asarray(case.free)]), objective, weight)),
    }
    history = -np.stack(history)
    write_timeseries(out, {"step": np.arange(len(history)), **{f"start{s}_objective": history[:, s] for s in range(history.shape[1])}})
    plot_panels(out / "optimize.png", np.arange(len(history)), [("objective", {f"start {s}": history[:, s] for s in range(history.shape[1])})], xlabel="Adam step")
    write_summary(out, summary)
    print_summary(summary, f"ejection attitude optimisation ({objective})")
    return summary


def read_ejection_data(path: Path, robot, free: list[int]) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Rows of ``attitude`` (a name of the robot) or ``q1_deg..qn_deg``, and the measured quantities.

    Measured columns: ``separation_velocity_m_s`` (required), ``stable_angular_velocity_deg_s`` and
    ``joint{j}_change_final_deg`` for free joints ``j`` (1-based; the encoder reading after the ejection).
    """
    if not path.is_file():
        raise ConfigError(f"data file not found: {path}")
    with path.open(newline="") as fh:
        rows = [r for r in csv.DictReader(fh)]
    if not rows:
        raise ConfigError(f"{path}: no data rows")
    header = list(rows[0])
    if "separation_velocity_m_s" not in header:
        raise ConfigError(f"{path}: missing column separation_velocity_m_s (found: {', '.join(header)})")
    names = dict(robot.attitudes)
    angles = []
    measured = {"separation_velocity_m_s": [], "stable_angular_velocity_deg_s": []}
    measured.update({f"joint{j + 1}_change_final_deg": [] for j in free})
    for r, row in enumerate(rows, start=1):
        if "attitude" in row:
            if row["attitude"] not in names:
                raise ConfigError(f"{path}: row {r}, column attitude: unknown attitude {row['attitude']!r}")
            angles.append(np.asarray(names[row["attitude"]]))
        else:
            try:
                angles.append(np.deg2rad([float(row[f"q{j + 1}_deg"]) for j in range(robot.n_joints)]))
            except (KeyError, ValueError, TypeError):
                raise ConfigError(f"{path}: row {r}: need an 'attitude' column or numeric q1_deg..q{robot.n_joints}_deg") from None
        for key in measured:
            if key in row and row[key].strip():
                try:
                    measured[key].append(float(row[key]))
                except ValueError:
                    raise ConfigError(f"{path}: row {r}, column {key}: not a number: {row[key]!r}") from None
            elif key in header:
                raise ConfigError(f"{path}: row {r}, column {key}: empty cell")
    measured = {k: np.asarray(v) for k, v in measured.items() if v}
    return np.asarray(angles), measured


def fit(cfg: dict, data_path: Path, out: Path) -> dict:
    from ..design.least_squares import least_squares
    from ..io.tables import dump_toml

    study = _study()
    case = study.case_from_config(cfg)
    if case.friction_model != "hybrid":
        raise ConfigError("friction.model: the friction fit needs the hybrid model")
    spec = cfg["fit"]
    angles, measured = read_ejection_data(data_path, case.robot, case.free)
    scales = {"separation_velocity_m_s": spec["velocity_std_m_s"], "stable_angular_velocity_deg_s": spec["angular_rate_std_deg_s"]}
    scales.update({f"joint{j + 1}_change_final_deg": spec["angle_std_deg"] for j in case.free})
    index = {"viscous": 4, "coulomb": 3}
    initial = {name: spec[f"initial_{name}_{'N_m_s_rad' if name == 'viscous' else 'N_m'}"] for name in spec["parameters"]}

    def predict(params, a):
        p = case.params
        for name, value in params.items():
            p = p.at[index[name]].set(value)
        result, _ = study.evaluate(case, a, p)
        changes = jnp.rad2deg(result.joint_change_final)
        return {"separation_velocity_m_s": result.separation_velocity,
                "stable_angular_velocity_deg_s": jnp.rad2deg(safe_norm(result.stable_angular_velocity)),
                **{f"joint{j + 1}_change_final_deg": changes[k] for k, j in enumerate(case.free)}}

    rows = jnp.asarray(angles)
    keys = list(measured)

    def residuals(params):
        predicted = jax.vmap(lambda a: predict(params, a))(rows)
        return jnp.concatenate([(predicted[k] - measured[k]) / scales[k] for k in keys])

    def jacobian(params):
        # rows are independent ejections: one reverse pass per measured quantity, batched over the rows
        per_row = jax.vmap(jax.jacrev(lambda p, a: predict(p, a)), in_axes=(None, 0))(params, rows)
        return jnp.concatenate([jnp.stack([per_row[k][name] for name in initial], axis=1) / scales[k] for k in keys])

    if spec["initial_grid"]:
        initial = _best_grid_point(residuals, initial, case)
    result = least_squares(residuals, initial, absolute_sigma=True, max_iter=30, jacobian=jacobian)
    fitted = dict(result.params)
    report = result.to_dict()
    report["data"] = str(data_path)
    report["measured_columns"] = list(measured)
    (out).mkdir(parents=True, exist_ok=True)
    import json

    (out / "fit_report.json").write_text(json.dumps(report, indent=2) + "\n")
    config = {section: dict(values) for section, values in cfg.items()}
    config["robot"] = {"path": str(Path(cfg["robot"]["path"]).resolve())}
    config.pop("fit", None), config.pop("optimize", None), config.pop("sweep", None)
    if "viscous" in fitted:
        config["friction"]["viscous_N_m_s_rad"] = fitted["viscous"]
    if "coulomb" in fitted:
        config["friction"]["coulomb_N_m"] = fitted["coulomb"]
    (out / "fitted.toml").write_text(dump_toml(config, header=f"fitted by diffspace fit from {data_path}"))
    predicted = jax.vmap(lambda a: predict(fitted, a))(rows)
    summary = {
        **{f"fitted_{k}": v for k, v in fitted.items()},
        **{f"std_error_{k}": v for k, v in result.std_errors.items()},
        "rms_normalised_residual": result.rms,
        "iterations": result.n_iter,
        "converged": result.converged,
    }
    write_timeseries(out, {"row": np.arange(len(rows)), **{f"measured_{k}": v for k, v in measured.items()},
                           **{f"fitted_{k}": np.asarray(predicted[k]) for k in measured}}, "fit_rows")
    plot_panels(out / "fit.png", np.arange(len(rows)), [(k, {"measured": measured[k], "fitted": np.asarray(predicted[k])}) for k in measured], xlabel="data row")
    write_summary(out, summary)
    print_summary(summary, "ejection friction identification")
    return summary


def _best_grid_point(residuals, initial: dict, case) -> dict:
    """Stick/slip makes the cost landscape rugged (mode sequences change with the parameters), so LM starts
    from the best point of a coarse grid evaluated in one batched call: the paper's grid search, coarse,
    followed by a local Gauss-Newton refinement instead of a fine grid."""
    static = float(case.params[2])
    axes = {"viscous": np.geomspace(1.0, 20.0, 7), "coulomb": np.linspace(0.2, 0.95, 4) * static}
    names = list(initial)
    mesh = np.stack([m.ravel() for m in np.meshgrid(*(axes[n] for n in names), indexing="ij")], axis=1)
    costs = jax.jit(jax.vmap(lambda x: jnp.sum(residuals(dict(zip(names, x))) ** 2)))(jnp.asarray(mesh))
    costs = np.where(np.isfinite(costs), costs, np.inf)
    best = mesh[int(np.argmin(costs))]
    return {n: float(v) for n, v in zip(names, best)}


def sweep(cfg: dict, out: Path) -> dict:
    from ..design.sweep import run_chunked

    study = _study()
    case = study.case_from_config(cfg)
    spec = cfg["sweep"]
    samples = _random_attitudes(case, spec["samples"], spec["seed"])
    batch = jax.jit(jax.vmap(lambda a: _metrics(case, a)))
    results = run_chunked(batch, samples, spec["chunk_size"], store=out / "chunks", label="sweep")
    columns = {f"joint{j + 1}_deg": np.rad2deg(samples[:, k]) for k, j in enumerate(case.free)}
    columns.update({k: v.astype(float) for k, v in results.items()})
    write_timeseries(out, columns, "sweep")
    valid = results["valid"].astype(bool)
    best = int(np.argmax(np.where(valid, results["stable_velocity_m_s"], -np.inf)))
    summary = {
        "samples": len(samples),
        "valid_samples": int(valid.sum()),
        "stable_velocity_max_m_s": float(results["stable_velocity_m_s"][best]),
        "stable_velocity_min_m_s": float(np.min(results["stable_velocity_m_s"][valid])),
        "best_joint_angles_deg": np.rad2deg(samples[best]).tolist(),
        "tumbling_rate_median_deg_s": float(np.median(results["tumbling_rate_deg_s"][valid])),
    }
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 4))
    ax.scatter(results["stable_velocity_m_s"][valid], results["tumbling_rate_deg_s"][valid], s=8)
    ax.set_xlabel("stable velocity [m/s]")
    ax.set_ylabel("tumbling rate [deg/s]")
    fig.tight_layout()
    fig.savefig(out / "sweep.png", dpi=110)
    plt.close(fig)
    write_summary(out, summary)
    print_summary(summary, "ejection attitude sweep")
    return summary
