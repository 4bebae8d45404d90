"""Two-body impact along a line (SPEC 5.2; seed: Cai et al. 2021, Aerospace 8:381, Sections 2 and 4.1).

Body 1 (``mass1_kg``) approaches body 2 (``mass2_kg``, at rest) with ``approach_speed_m_s`` across an
``initial_gap_m``; the contact force is a :class:`~diffspace.contact.ContactLaw` (paper Eq. (1), n = 1.5,
damping law by name, Zhiying-Qishao Eq. (2) by default) acting on the equivalent mass
``m = m1 m2 / (m1 + m2)`` (Eqs. (4)-(5)). Contact start and release are Diffrax events with differentiable
times (:func:`diffspace.contact.simulate_impact`).

Air-table friction (paper Section 4.1.2 and Eq. (10)). The six free-deceleration tests in
``airtable_friction_decel.csv`` give a = 0.088, 0.089, 0.095, 0.092, 0.090, 0.089 m/s^2, mean
``a = 0.0905 m/s^2`` (sample std 0.0026). Coulomb's law ``m a = mu m g`` gives ``mu = a / g``; the paper
quotes ``mu = 0.00905``, i.e. it used ``g = 10 m/s^2`` (its f1 = 3.3792 N, mu_1 = 0.0088 and
f = mu (m1 + m2) g = 5.4526 N all follow from g = 10). The data fix only the product ``mu g = a``, so
``configs/impact_airtable.toml`` keeps ``mu = 0.00905`` with ``gravity_m_s2 = 10`` and the friction force on
the relative motion is ``f = mu (m1 + m2) g = 5.4526 N`` as in the paper (with g = 9.80665 the consistent
value would be mu = 0.009228). :func:`friction_from_decelerations` reproduces this. ``friction.model``:
``paper`` = Eq. (10), constant ``+f`` during contact; ``coulomb`` = ``f`` opposing the relative motion in
every phase (it can stop the bodies before they touch); ``none``.
"""

from __future__ import annotations

from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from ..io.config import Field, Schema
from ..status import ConfigError
from ..contact import FRICTION_MODELS, LAWS, ContactLaw, hertz_stiffness, simulate_impact
from ..design.least_squares import least_squares
from ..io.tables import dump_toml, read_csv_columns
from ..io.results import plot_panels, print_summary, write_summary, write_timeseries
from ..status import SolverFailure

DATA_COLUMNS = ["v_in_mm_s", "v_out_measured_mm_s", "F_peak_measured_N"]
FIT_PARAMETERS = {  # name -> (config section, key, transform)
    "stiffness": ("contact", "stiffness_N_m_n", "log"),
    "restitution": ("contact", "restitution_c", ("logit", 0.0, 1.0)),
    "exponent": ("contact", "exponent", ("logit", 0.5, 3.0)),
    "mu": ("friction", "mu", "log"),
}


def _fit_parameters_check(value):
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        return "expected a non-empty list of parameter names"
    unknown = [v for v in value if v not in FIT_PARAMETERS]
    if unknown or len(set(value)) != len(value):
        return f"unknown or repeated parameter(s) {unknown or value}; choose from {', '.join(FIT_PARAMETERS)}"
    return None


def schema() -> Schema:
    pos = dict(gt=0.0)
    return Schema({
        "impact": {
            "mass1_kg": Field("float", 38.4, **pos, help="moving body (paper: passive simulator)"),
            "mass2_kg": Field("float", 21.85, **pos, help="body at rest (paper: active simulator)"),
            "approach_speed_m_s": Field("float", 0.09483, **pos, help="relative speed at t = 0"),
            "initial_gap_m": Field("float", 0.0, min=0.0, help="separation at t = 0 (0: start at first touch)"),
            "t_max_s": Field("float", 2.0, **pos, help="horizon for reaching contact and separating"),
        },
        "contact": {
            "law": Field("str", "zhiying_qishao", choices=LAWS),
            "stiffness_source": Field("str", "value", choices=("value", "hertz")),
            "stiffness_N_m_n": Field("float", 1.0e7, **pos, help="k in F = k d^n + ... [N/m^n]"),
            "exponent": Field("float", 1.5, gt=0.0, max=5.0, help="n"),
            "restitution_c": Field("float", 0.55, gt=0.0, max=1.0, help="input restitution c of the law, (0, 1]"),
            "geometry": Field("str", "sphere_plane", choices=("sphere_plane", "sphere_sphere")),
            "radius1_m": Field("float", 0.018, **pos),
            "radius2_m": Field("float", 0.018, **pos, help="sphere_sphere only"),
            "youngs1_Pa": Field("float", 2.06e11, **pos),
            "poisson1": Field("float", 0.3, gt=-1.0, max=0.5),
            "youngs2_Pa": Field("float", 2.06e11, **pos),
            "poisson2": Field("float", 0.3, gt=-1.0, max=0.5),
        },
        "friction": {
            "model": Field("str", "none", choices=FRICTION_MODELS),
            "mu": Field("float", 0.0, min=0.0),
            "gravity_m_s2": Field("float", 9.80665, **pos),
        },
        "simulation": {
            "rtol": Field("float", 1e-10, gt=0.0, max=1e-3),
            "atol": Field("float", 1e-12, gt=0.0, max=1e-3),
            "max_steps": Field("int", 4096, min=64),
            "n_save": Field("int", 200, min=2, max=100_000),
        },
        "fit": {
            "parameters": Field("any", ["stiffness", "restitution"], check=_fit_parameters_check),
            "max_iter": Field("int", 50, min=1),
        },
    })


def friction_from_decelerations(decelerations, gravity=10.0, mass_total=38.4 + 21.85) -> dict:
    """Paper Section 4.1.2: ``mu = mean(a) / g`` and ``f = mu m_total g`` from free-deceleration tests."""
    a = float(np.mean(decelerations))
    return {"mean_deceleration_m_s2": a, "mu": a / gravity, "friction_force_N": a * mass_total}


def equivalent_mass(cfg: dict) -> float:
    m1, m2 = cfg["impact"]["mass1_kg"], cfg["impact"]["mass2_kg"]
    return m1 * m2 / (m1 + m2)


def stiffness(cfg: dict) -> float:
    c = cfg["contact"]
    if c["stiffness_source"] == "value":
        return c["stiffness_N_m_n"]
    r2 = c["radius2_m"] if c["geometry"] == "sphere_sphere" else float("inf")
    return float(hertz_stiffness(c["youngs1_Pa"], c["poisson1"], c["radius1_m"], c["youngs2_Pa"], c["poisson2"], r2))


def build_law(cfg: dict, k=None, n=None, c=None) -> ContactLaw:
    """The config's contact law; ``k``, ``n``, ``c`` override (arrays allowed, for fitting)."""
    con = cfg["contact"]
    return ContactLaw(
        stiffness(cfg) if k is None else k,
        con["exponent"] if n is None else n,
        con["restitution_c"] if c is None else c,
        mass=equivalent_mass(cfg),
        law=con["law"],
    )


def friction_force(cfg: dict, mu=None):
    fr = cfg["friction"]
    if fr["model"] == "none":
        return 0.0
    mu = fr["mu"] if mu is None else mu
    return mu * (cfg["impact"]["mass1_kg"] + cfg["impact"]["mass2_kg"]) * fr["gravity_m_s2"]


def _simulate(cfg: dict, law, speed, f, n_save: int = 0, with_gap: bool = True, adjoint: str = "reverse") -> dict:
    sim, imp = cfg["simulation"], cfg["impact"]
    gap = imp["initial_gap_m"] if with_gap else 0.0
    return simulate_impact(
        law, jnp.asarray(equivalent_mass(cfg)), jnp.asarray(speed, float), jnp.asarray(f, float),
        jnp.asarray(gap), jnp.asarray(imp["t_max_s"]), friction_model=cfg["friction"]["model"],
        approach_phase=gap > 0.0, rtol=sim["rtol"], atol=sim["atol"], max_steps=sim["max_steps"], n_save=n_save,
        adjoint=adjoint,
    )


def check_outcome(cfg: dict, res: dict, speed: float) -> None:
    """Raise :class:`SolverFailure` if the bodies never touch or never separate within the horizon."""
    imp = cfg["impact"]
    if not bool(res["contact_made"]):
        raise SolverFailure(
            f"no contact: at impact.approach_speed_m_s = {speed:g} the bodies do not close the "
            f"impact.initial_gap_m = {imp['initial_gap_m']:g} m within impact.t_max_s = {imp['t_max_s']:g} s"
            + (" (friction stops them first)" if cfg["friction"]["model"] == "coulomb" else "")
        )
    if not bool(res["separated"]):
        raise SolverFailure(
            f"contact never separates within impact.t_max_s = {imp['t_max_s']:g} s "
            f"(or simulation.max_steps = {cfg['simulation']['max_steps']}): the rebound is too weak against "
            "the friction force, or the horizon is too short"
        )
    values = [float(v) for k, v in res.items() if not k.startswith("series_")]
    if not np.all(np.isfinite(values)):
        raise SolverFailure("impact simulation returned non-finite results")


def run(cfg: dict, out: Path) -> dict:
    """Simulate the configured impact; write summary.json, timeseries and plots; return the summary."""
    law = build_law(cfg)
    f = friction_force(cfg)
    speed = cfg["impact"]["approach_speed_m_s"]
    res = _simulate(cfg, law, speed, f, n_save=cfg["simulation"]["n_save"])
    check_outcome(cfg, res, speed)
    summary = _summary(cfg, law, f, res)
    write_summary(out, summary)
    t = np.asarray(res["series_time_s"])
    series = {
        "time_s": t,
        "indentation_m": np.asarray(res["series_indentation_m"]),
        "velocity_m_s": np.asarray(res["series_velocity_m_s"]),
        "force_N": np.asarray(res["series_force_N"]),
    }
    write_timeseries(out, series)
    plot_panels(out / "force_time.png", t, [
        ("force [N]", {"contact force": series["force_N"]}),
        ("indentation [mm]", {"delta": 1e3 * series["indentation_m"]}),
        ("rel. velocity [mm/s]", {"d delta/dt": 1e3 * series["velocity_m_s"]}),
    ])
    plot_panels(out / "force_indentation.png", 1e3 * series["indentation_m"],
                [("force [N]", {cfg["contact"]["law"]: series["force_N"]})], xlabel="indentation [mm]")
    print_summary(summary, f"impact ({cfg['contact']['law']})")
    return summary


def _summary(cfg: dict, law: ContactLaw, f: float, res: dict) -> dict:
    m, m1, m2 = equivalent_mass(cfg), cfg["impact"]["mass1_kg"], cfg["impact"]["mass2_kg"]
    r = {k: float(v) for k, v in res.items() if not k.startswith("series_") and k not in ("contact_made", "separated")}
    v_in, v_out, impulse = r["impact_speed_m_s"], r["detached_velocity_m_s"], r["impulse_N_s"]
    ke_in, ke_out = 0.5 * m * v_in**2, 0.5 * m * v_out**2
    balance = ke_in + r["friction_work_J"] - ke_out - r["damping_energy_J"] - r["elastic_energy_at_release_J"]
    return {
        "detached_velocity_m_s": v_out,
        "peak_force_N": r["peak_force_N"],
        "contact_duration_s": r["contact_duration_s"],
        "impulse_N_s": impulse,
        "restitution": r["restitution"],
        "impact_speed_m_s": v_in,
        "max_indentation_m": r["max_indentation_m"],
        "contact_start_time_s": r["contact_start_time_s"],
        "peak_force_time_s": r["peak_force_time_s"],
        "max_compression_time_s": r["max_compression_time_s"],
        "release_time_s": r["release_time_s"],
        "equivalent_mass_kg": m,
        "stiffness_N_m_n": float(law.stiffness),
        "exponent": float(law.exponent),
        "input_restitution_c": float(law.restitution),
        "damping_law": cfg["contact"]["law"],
        "damping_coefficient_SI": float(law.damping(v_in)),
        "friction_model": cfg["friction"]["model"],
        "friction_force_N": float(f),
        "kinetic_energy_in_J": ke_in,
        "kinetic_energy_out_J": ke_out,
        "damping_energy_J": r["damping_energy_J"],
        "friction_work_J": r["friction_work_J"],
        "elastic_energy_at_release_J": r["elastic_energy_at_release_J"],
        "energy_balance_error_J": balance,
        # from the contact impulse with body 2 at rest at first touch (exact without friction)
        "body1_velocity_out_m_s": v_in - impulse / m1,
        "body2_velocity_out_m_s": impulse / m2,
        "solver_steps": int(r["num_steps"]),
    }


# --------------------------------------------------------------------------------------------------
# identification
# --------------------------------------------------------------------------------------------------


def read_impact_data(path: Path) -> dict[str, np.ndarray]:
    """CSV with ``v_in_mm_s, v_out_measured_mm_s, F_peak_measured_N`` -> SI arrays (``ConfigError`` if bad)."""
    cols = read_csv_columns(path, DATA_COLUMNS)
    problems = [
        f"{path}: row {i + 1}, column {c}: must be > 0, got {x:g}"
        for c in DATA_COLUMNS for i, x in enumerate(cols[c]) if not x > 0
    ]
    if problems:
        raise ConfigError("\n".join(problems))
    return {"v_in": 1e-3 * cols["v_in_mm_s"], "v_out": 1e-3 * cols["v_out_measured_mm_s"],
            "f_peak": cols["F_peak_measured_N"]}


def predict(cfg: dict, speeds, params: dict | None = None, adjoint: str = "reverse") -> dict:
    """Detached velocity and peak force at first-touch ``speeds`` (vmapped), NaN where the run failed.

    ``params`` (optional) overrides ``stiffness``, ``restitution``, ``exponent``, ``mu`` (JAX-differentiable;
    ``adjoint="forward"`` for ``jax.jacfwd``).
    """
    p = params or {}
    law = build_law(cfg, p.get("stiffness"), p.get("exponent"), p.get("restitution"))
    f = friction_force(cfg, p.get("mu"))

    def one(v):
        res = _simulate(cfg, law, v, f, with_gap=False, adjoint=adjoint)
        ok = res["separated"]
        return (jnp.where(ok, res["detached_velocity_m_s"], jnp.nan), jnp.where(ok, res["peak_force_N"], jnp.nan))

    v_out, f_peak = jax.vmap(one)(jnp.asarray(speeds, float))
    return {"v_out": v_out, "f_peak": f_peak}


def fit(cfg: dict, data_path: Path, out: Path):
    """Identify ``[fit] parameters`` from measured detached velocities and peak forces (relative residuals).

    Writes ``fitted.toml`` (runnable config), ``fit_report.json``, ``summary.json`` and ``fit.png``.
    """
    import json

    data = read_impact_data(Path(data_path))
    names = cfg["fit"]["parameters"]
    if "mu" in names and cfg["friction"]["model"] == "none":
        raise ConfigError("fit.parameters: 'mu' needs friction.model = 'paper' or 'coulomb'")
    n_obs = 2 * len(data["v_in"])
    if n_obs < len(names):
        raise ConfigError(f"{data_path}: {n_obs} observations cannot identify {len(names)} parameters")
    cfg = {s: dict(t) for s, t in cfg.items()}
    if "stiffness" in names and cfg["contact"]["stiffness_source"] == "hertz":
        cfg["contact"].update(stiffness_source="value", stiffness_N_m_n=stiffness(cfg))
    initial = {}
    for name in names:
        section, key, _ = FIT_PARAMETERS[name]
        initial[name] = cfg[section][key] if not (name == "mu" and cfg[section][key] == 0) else 0.01
        if name == "restitution":
            initial[name] = min(initial[name], 0.999)
    v_meas, f_meas = jnp.asarray(data["v_out"]), jnp.asarray(data["f_peak"])

    def residuals(params):  # forward-mode Jacobian: few parameters, cheaper than reverse mode here
        pred = predict(cfg, data["v_in"], params, adjoint="forward")
        return jnp.concatenate([pred["v_out"] / v_meas - 1.0, pred["f_peak"] / f_meas - 1.0])

    try:
        result = least_squares(residuals, initial, {n: FIT_PARAMETERS[n][2] for n in names},
                               max_iter=cfg["fit"]["max_iter"], jacobian="fwd")
    except ValueError as err:  # start value outside a transform's range, or the start model fails
        raise ConfigError(f"fit: {err} (parameters {', '.join(names)}, start {initial})") from None
    fitted = {s: dict(t) for s, t in cfg.items()}
    for name, value in result.params.items():
        section, key, _ = FIT_PARAMETERS[name]
        fitted[section][key] = value
    n_rows = len(data["v_in"])
    pred = {"v_out": data["v_out"] * (1 + result.residuals[:n_rows]),
            "f_peak": data["f_peak"] * (1 + result.residuals[n_rows:])}
    if not np.all(np.isfinite(result.residuals)):
        raise SolverFailure("the fitted model does not separate for every measured impact")
    out.mkdir(parents=True, exist_ok=True)
    (out / "fitted.toml").write_text(dump_toml(fitted, header=(
        f"diffspace impact config fitted to {Path(data_path).name} by `diffspace fit`\n"
        f"fitted: {', '.join(names)}; rms relative residual {result.rms:.4g}")))
    report = result.to_dict()
    report["data"] = {k: np.asarray(v).tolist() for k, v in data.items()}
    report["prediction"] = {k: v.tolist() for k, v in pred.items()}
    report["residual_definition"] = "[v_out_model / v_out_measured - 1 (rows), F_model / F_measured - 1 (rows)]"
    (out / "fit_report.json").write_text(json.dumps(report, indent=2) + "\n")
    summary = {f"fitted_{FIT_PARAMETERS[n][1]}": v for n, v in result.params.items()}
    summary.update({f"std_error_{FIT_PARAMETERS[n][1]}": s for n, s in result.std_errors.items() if np.isfinite(s)})
    summary.update({
        "rms_relative_residual": result.rms,
        "max_abs_velocity_error_rel": float(np.max(np.abs(pred["v_out"] / data["v_out"] - 1))),
        "max_abs_force_error_rel": float(np.max(np.abs(pred["f_peak"] / data["f_peak"] - 1))),
        "iterations": result.n_iter,
        "converged": result.converged,
    })
    write_summary(out, summary)
    _plot_fit(out / "fit.png", fitted, data)
    print_summary(summary, "impact fit")
    return result


def _plot_fit(path: Path, cfg: dict, data: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    # model curve in chunks of the data's batch size, reusing the program compiled for the data
    batch = len(data["v_in"])
    n = batch * max(1, -(-40 // batch))
    v = np.linspace(0.5 * data["v_in"].min(), 1.5 * data["v_in"].max(), n)
    chunks = [predict(cfg, v[i:i + batch]) for i in range(0, n, batch)]
    pred = {k: np.concatenate([np.asarray(c[k]) for c in chunks]) for k in ("v_out", "f_peak")}
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6))
    for ax, key, scale, label in ((axes[0], "v_out", 1e3, "detached velocity [mm/s]"),
                                  (axes[1], "f_peak", 1.0, "peak force [N]")):
        ax.plot(1e3 * v, scale * pred[key], label="fitted model")
        ax.plot(1e3 * data["v_in"], scale * data[key], "o", label="measured")
        ax.set_xlabel("impact speed [mm/s]")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
