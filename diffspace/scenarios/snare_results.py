"""Snare scenario results: the ``run`` analysis and plots, the ``optimize`` report and the ``fit`` of the
bending stiffness (split from :mod:`diffspace.scenarios.snare` to keep files short)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ..status import ConfigError
from ..bodies.rope import assemble, bend_vectors, static_residual
from ..io.results import plot_panels, write_summary, write_timeseries
from ..status import SolverFailure
from . import snare_design as sd

PAPER_EQ46 = {"a_N_m2": -4.13e4, "b_N_m": 2089.0, "c_N": -8.79e-4}  # signs: see experiments/snare_comparison.py


def stiffness_profile(model: sd.SnareModel, x_eq):
    """Linearised virtual-spring stiffness ``k_v(0) = 1 / (u^T K^-1 u)`` [N/m] at every interior node, with
    ``K`` the Hessian of the elastic energy at the initial shape and ``u`` the node's approach direction."""
    first, last = x_eq[0], x_eq[-1]
    n = model.rope.n_sections - 1
    attach = model.snare.attachments(0.0)
    hess = jax.hessian(lambda xi: model.rope.elastic_energy(assemble(xi, first, last), attach))(x_eq[1:-1])
    compliance = jnp.linalg.inv(hess.reshape(3 * n, 3 * n))

    def k_at(node):
        u = sd.contact_direction(x_eq, node, model.approach)
        e = jnp.zeros((n, 3)).at[node - 1].set(u).ravel()
        return 1.0 / (e @ compliance @ e)

    return jax.vmap(k_at)(jnp.arange(1, n + 1))


@eqx.filter_jit
def _statics(model, node):
    x_eq, ok = sd.initial_shape(model)
    coef, forces, limit, ok_fit = sd.virtual_spring(model, x_eq, node)
    return x_eq, ok, coef, forces, limit, ok_fit, stiffness_profile(model, x_eq)


@eqx.filter_jit
def _surface_forces(model, node, distances):
    def one(d):
        m = eqx.tree_at(lambda t: t.snare.end_distance, model, d)
        x, ok = sd.initial_shape(m)
        f, ok_f = sd.pressing_curve(m, x, node)
        return f, ok & ok_f

    return jax.vmap(one)(distances)


def analyse(model: sd.SnareModel, cfg: dict) -> dict:
    """Everything ``run`` reports (see :func:`diffspace.scenarios.snare.run`)."""
    imp, vs, sim = cfg["strike"], cfg["virtual_spring"], cfg["simulation"]
    n0, speed = imp["node"] - 1, imp["approach_speed_m_s"]
    x_eq, ok, coef, forces, fit_limit, ok_fit, k_profile = _statics(model, n0)
    if not bool(ok):
        raise SolverFailure("initial static shape (Newton on Eqs. (35)-(36)) did not converge")
    if not bool(ok_fit):
        raise SolverFailure(f"static pressing solves at node {imp['node']} did not converge "
                            "(reduce virtual_spring.max_depth_m)")
    depths = model.fit_depths
    kept = np.asarray(depths) <= float(fit_limit)
    fitted = jax.vmap(lambda d: sd.VirtualSpringLaw(coef, 0.0, 1.0).elastic_force(d))(depths)
    quad = np.polyfit(np.asarray(depths)[kept], np.asarray(forces)[kept], 2)
    dists = jnp.asarray(vs["end_distances_m"])
    surf_f, surf_ok = _surface_forces(model, n0, dists)
    surf_w = jnp.cumprod(surf_f <= vs["max_force_N"], axis=1)
    surf = sd.fit_surface(depths, dists, surf_f, model.degree, min(2, len(vs["end_distances_m"]) - 1),
                          float(model.snare.end_distance), surf_w)
    surf_pred = jax.vmap(lambda d: jax.vmap(lambda x: sd.eval_surface(surf, x, d, float(model.snare.end_distance)))(depths))(dists)
    surf_rms = float(jnp.sqrt(jnp.sum(surf_w * (surf_pred - surf_f) ** 2) / jnp.sum(surf_w)))

    t_lin = float(sd.linear_contact_time(model, coef[0]))
    virt = jax.jit(lambda c, v: sd.virtual_impact(model, c, v, t_max=20.0 * t_lin, n_save=200))(coef, speed)
    if not bool(virt["separated"]):
        raise SolverFailure("virtual-spring impact did not separate within 20 linearised contact times")
    t_end = sim["horizon_factor"] * max(float(virt["contact_duration_s"]), t_lin) + imp["initial_gap_m"] / speed
    dyn = eqx.filter_jit(sd.dynamic_impact)(model, x_eq, n0, speed, t_end, gap=imp["initial_gap_m"],
                                            rtol=sim["rtol"], atol=sim["atol"], n_save=sim["n_save"],
                                            max_steps=sim["max_steps"])
    if not bool(dyn["ok"]):
        raise SolverFailure(f"full dynamic rope impact failed (solver, {int(dyn['num_steps'])} steps; "
                            "raise simulation.max_steps)")
    if not bool(dyn["separated"]):
        raise SolverFailure("full dynamic impact: the shaft is still in contact at the horizon "
                            f"{t_end:.4g} s (raise simulation.horizon_factor)")

    first, last = x_eq[0], x_eq[-1]
    beta = np.asarray(bend_vectors(x_eq))[:, 2]
    tension = np.asarray(model.rope.tensions(x_eq, jnp.zeros_like(x_eq)))
    chord = (last - first) / jnp.linalg.norm(last - first)
    sag = np.asarray(jnp.abs((x_eq - first) @ jnp.array([-chord[1], chord[0], 0.0])))
    attach = model.snare.attachments(0.0)
    residual = float(jnp.max(jnp.abs(static_residual(model.rope, x_eq[1:-1], first, last, attach=attach))))
    moments = np.asarray(model.rope.end_moments(x_eq, attach))[:, 2]
    nodes = np.arange(2, model.rope.n_sections + 1)
    kp = np.asarray(k_profile)
    summary = {
        "contact_node": imp["node"], "approach_speed_m_s": speed, "approach": model.approach,
        "end_distance_m": float(jnp.linalg.norm(last - first)),
        "rest_bend_total_deg": cfg["rope"]["rest_bend_total_deg"],
        "installed_bend_total_deg": float(np.rad2deg(abs(beta.sum()))),
        "min_bend_for_end_distance_deg": float(np.rad2deg(2 * np.arccos(cfg["snare"]["end_distance_m"] / model.length))),
        "sag_m": float(sag.max()), "section_force_min_N": float(tension.min()), "section_force_max_N": float(tension.max()),
        "static_residual_max_N": residual, "end_condition": model.rope.end_condition,
        "clamp_attach_angles_deg": np.rad2deg(np.asarray(model.snare.attach_angles)), "end_moments_N_m": moments,
        "k_tes_N_m": float(model.rope.axial_stiffness[0]), "k_tor_N_m_rad": float(model.rope.bending_stiffness),
        "c_tes_N_s_m": float(model.rope.axial_damping), "c_tor_N_m_s_rad": float(model.rope.bending_damping),
        "node_mass_kg": float(model.rope.masses[1]),
        "virtual_k_v0_N_m": float(coef[0]), "virtual_poly_coefficients": np.asarray(coef),
        "virtual_fit_max_force_N": vs["max_force_N"], "virtual_fit_limit_depth_m": float(fit_limit),
        "virtual_poly_rms_error_N": float(np.sqrt(np.mean((np.asarray(fitted) - np.asarray(forces))[kept] ** 2))),
        "paper_form_fit_a_N_m2": float(quad[0]), "paper_form_fit_b_N_m": float(quad[1]), "paper_form_fit_c_N": float(quad[2]),
        "surface_rms_error_N": surf_rms, "surface_solves_ok": bool(jnp.all(surf_ok)),
        "surface_coefficients": np.asarray(surf), "surface_end_distances_m": vs["end_distances_m"],
        "virtual_peak_force_N": float(virt["peak_force_N"]), "virtual_impulse_N_s": float(virt["impulse_N_s"]),
        "virtual_contact_duration_s": float(virt["contact_duration_s"]),
        "virtual_max_indentation_m": float(virt["max_indentation_m"]),
        "virtual_within_fit_range": bool(virt["max_indentation_m"] <= fit_limit),
        "virtual_restitution": float(virt["restitution"]),
        "dynamic_peak_force_N": float(dyn["peak_force_N"]), "dynamic_impulse_N_s": float(dyn["impulse_N_s"]),
        "dynamic_rebound_speed_m_s": float(dyn["rebound_speed_m_s"]), "dynamic_restitution": float(dyn["restitution"]),
        "dynamic_max_node_displacement_m": float(dyn["max_node_displacement_m"]),
        "dynamic_max_shaft_travel_m": float(dyn["max_travel_m"]), "dynamic_horizon_s": t_end,
        "dynamic_solver_steps": int(dyn["num_steps"]),
        "peak_force_difference_virtual_vs_dynamic": float(virt["peak_force_N"] / dyn["peak_force_N"] - 1.0),
        "profile_nodes": nodes, "profile_k_v0_N_m": kp,
    }
    dyn_series = {"time_s": dyn["series_time_s"], "force_N": dyn["series_force_N"], "shaft_travel_m": dyn["series_travel_m"]}
    virt_series = {"time_s": virt["series_time_s"], "force_N": virt["series_force_N"],
                   "indentation_m": virt["series_indentation_m"]}
    i_peak = int(jnp.argmax(dyn["series_force_N"]))
    return {"summary": summary, "dynamic_series": dyn_series, "virtual_series": virt_series,
            "pressing": {"depth_m": depths, "force_N": forces, "fit_N": fitted, "in_fit_range": kept.astype(float)},
            "x_eq": np.asarray(x_eq),
            "x_peak": np.asarray(assemble(dyn["series_inner_nodes"][i_peak], first, last)), "depths": depths}


def write_plots(out: Path, res: dict) -> None:
    s = res["summary"]
    d, v = res["dynamic_series"], res["virtual_series"]
    vt = np.interp(np.asarray(d["time_s"]), np.asarray(v["time_s"]), np.asarray(v["force_N"]), right=0.0)
    plot_panels(out / "force_time.png", d["time_s"], [
        ("contact force [N]", {"full dynamic rope": d["force_N"], "virtual spring (Eq. 43)": vt}),
        ("shaft travel [mm]", {"full dynamic": 1e3 * np.asarray(d["shaft_travel_m"])})])
    kept = np.asarray(res["pressing"]["in_fit_range"]) > 0
    dm = np.asarray(res["depths"])[kept]
    paper = PAPER_EQ46["a_N_m2"] * dm**2 + PAPER_EQ46["b_N_m"] * dm + PAPER_EQ46["c_N"]
    plot_panels(out / "pressing_curve.png", 1e3 * dm, [("static F_c [N]", {
        "static solves": np.asarray(res["pressing"]["force_N"])[kept], "polynomial fit": np.asarray(res["pressing"]["fit_N"])[kept],
        "paper Eq. (46) (a < 0)": paper})], xlabel="pressing depth delta_v [mm] (fitted range)")
    plot_panels(out / "stiffness_profile.png", s["profile_nodes"],
                [("k_v(0) [N/m]", {"linearised static stiffness": s["profile_k_v0_N_m"]})], xlabel="node (1-based)")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    x0, xp = 1e3 * res["x_eq"], 1e3 * res["x_peak"]
    ax.plot(x0[:, 0], x0[:, 1], "o-", ms=3, label="initial equilibrium")
    ax.plot(xp[:, 0], xp[:, 1], "-", label="at peak force")
    phi = np.linspace(-np.pi, np.pi, 200)
    r = 1e3 * np.linalg.norm(res["x_eq"][0])
    ax.plot(r * np.cos(phi), r * np.sin(phi), "k:", lw=0.8, label="ring")
    ax.set_aspect("equal"), ax.set_xlabel("x [mm]"), ax.set_ylabel("y [mm]"), ax.legend(fontsize=7)
    fig.tight_layout(), fig.savefig(out / "rope_shape.png", dpi=110), plt.close(fig)


def optimize_report(cfg, model, mass, nodes, speeds, final, history, out, settings, extra=None) -> dict:
    """Summary, series and plot of ``optimize``; the best node is re-run with the full dynamic model."""
    opt = cfg["optimize"]
    peaks = np.asarray(final["peak_force_N"])
    feasible = (peaks <= opt["force_limit_N"] * (1 + 1e-4)) & np.asarray(final["ok"]) & np.asarray(final["within_fit_range"])
    if not feasible.any():
        raise SolverFailure("optimize: no node keeps the peak force under the limit within the speed bounds")
    best = int(np.argmax(np.where(feasible, speeds, -np.inf)))
    summary = {"force_limit_N": opt["force_limit_N"], "best_node": int(nodes[best]),
               "best_speed_m_s": float(speeds[best]), "best_virtual_peak_force_N": float(peaks[best]),
               "best_impulse_N_s": float(final["impulse_N_s"][best]), **mass,
               "nodes": np.asarray(nodes), "max_speed_m_s": speeds, "peak_force_N": peaks,
               "impulse_N_s": np.asarray(final["impulse_N_s"]), "k_v0_N_m": np.asarray(final["k_v0_N_m"]),
               "within_fit_range": [bool(x) for x in np.asarray(final["within_fit_range"])], **(extra or {})}
    if opt["verify_dynamic"]:  # full rope dynamics at the best node; then two secant steps onto its limit
        dyn_fn = eqx.filter_jit(lambda n, v: sd.snare_contact(model, n, v, "dynamic", **settings))
        dyn = dyn_fn(nodes[best], jnp.asarray(speeds[best]))
        summary["best_dynamic_peak_force_N"] = float(dyn["peak_force_N"])
        summary["best_dynamic_ok"] = bool(dyn["ok"])
        v, f, slope = float(speeds[best]), float(dyn["peak_force_N"]), float((extra or {}).get("log_slope", [1.0] * len(nodes))[best])
        for _ in range(2):
            v = v * (opt["force_limit_N"] / f) ** (1.0 / max(slope, 0.1))
            res = dyn_fn(nodes[best], jnp.asarray(v))  # an array: no recompile per speed
            f, ok = float(res["peak_force_N"]), bool(res["ok"])
        summary.update({"best_node_dynamic_speed_m_s": v, "best_node_dynamic_peak_force_N": f, "best_node_dynamic_ok": ok})
    write_summary(out, summary)
    cols = {"step": np.arange(history.shape[0])}
    cols.update({f"speed_node_{int(n)}_m_s": history[:, i] for i, n in enumerate(nodes)})
    write_timeseries(out, cols)
    plot_panels(out / "optimize.png", np.asarray(nodes), [
        ("max speed [m/s]", {"virtual spring, peak <= limit": speeds}),
        ("k_v(0) [N/m]", {"static stiffness": summary["k_v0_N_m"]})], xlabel="contact node")
    plot_panels(out / "optimize_history.png", cols["step"],
                [("speed [m/s]", {f"node {int(n)}": history[:, i] for i, n in enumerate(nodes)})], xlabel="Adam step")
    return summary


def fit_bending_stiffness(cfg: dict, data_path: Path, out: Path) -> dict:
    """Least-squares k_tor from measured peak forces (relative residuals, forward-mode Jacobian)."""
    from ..design.least_squares import least_squares
    from ..io.tables import dump_toml, read_csv_columns
    from .snare import build_model, striking_mass

    cols = read_csv_columns(data_path, ["node", "speed_m_s", "peak_force_N"])
    nodes = cols["node"].astype(int)
    bad = [int(n) for n in nodes if not 2 <= n <= cfg["rope"]["n_sections"]]
    if bad or np.any(cols["speed_m_s"] <= 0) or np.any(cols["peak_force_N"] <= 0):
        raise ConfigError(f"{data_path}: nodes must be interior (2..{cfg['rope']['n_sections']}) and speeds/peaks > 0")
    mass = striking_mass(cfg)["striking_mass_kg"]
    method = cfg["fit"]["method"]
    sim = cfg["simulation"]
    extra = {"rtol": sim["rtol"], "atol": sim["atol"], "max_steps": sim["max_steps"]} if method == "dynamic" else {}

    def residuals(params):
        model = build_model(cfg, mass, params["bending_stiffness"])
        res = jax.vmap(lambda n, v: sd.snare_contact(model, n, v, method, adjoint="forward", **extra))(
            jnp.asarray(nodes), jnp.asarray(cols["speed_m_s"]))
        return res["peak_force_N"] / jnp.asarray(cols["peak_force_N"]) - 1.0

    result = least_squares(residuals, {"bending_stiffness": cfg["rope"]["bending_stiffness_N_m_rad"]},
                           max_iter=cfg["fit"]["max_iter"], jacobian="fwd")
    k = result.params["bending_stiffness"]
    fitted = {s: dict(t) for s, t in cfg.items()}
    fitted["rope"]["bending_stiffness_N_m_rad"] = k
    out.mkdir(parents=True, exist_ok=True)
    fitted["arm"]["robot"] = os.path.relpath(Path(cfg["arm"]["robot"]).resolve(), out.resolve())  # runnable from out
    (out / "fitted.toml").write_text(dump_toml(fitted, f"k_tor identified from {data_path} ({method} model)"))
    (out / "fit_report.json").write_text(json.dumps(result.to_dict(), indent=2) + "\n")
    pred = np.asarray(cols["peak_force_N"]) * (1.0 + np.asarray(result.residuals))
    summary = {"bending_stiffness_N_m_rad": k, "bending_stiffness_std_N_m_rad": result.std_errors["bending_stiffness"],
               "rms_relative_residual": result.rms, "method": method, "striking_mass_kg": mass,
               "measured_peak_force_N": cols["peak_force_N"], "predicted_peak_force_N": pred}
    write_summary(out, summary)
    plot_panels(out / "fit.png", cols["speed_m_s"], [("peak force [N]", {"measured": cols["peak_force_N"],
                                                                         "fitted model": pred})], xlabel="speed [m/s]")
    return summary
