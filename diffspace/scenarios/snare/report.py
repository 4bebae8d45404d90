"""Snare reports: the summary (SI, unit-suffixed keys), time series and plots, failure diagnosis (host side)."""

from __future__ import annotations

from pathlib import Path

import jax.numpy as jnp
import numpy as np

from ...bodies import VirtualSpring
from ...bodies.rope import assemble, bend_vectors, static_residual
from ...contact import VirtualSpringLaw
from ...io.results import Figure, Panel, Series, plot_figure, plot_panels, write_timeseries
from ...core.status import Status

PAPER_EQ46 = {"a_N_m2": -4.13e4, "b_N_m": 2089.0, "c_N": -8.79e-4}  # signs: see experiments/snare_comparison.py


def _fitted(spring: VirtualSpring, depths) -> tuple[np.ndarray, np.ndarray]:
    """The polynomial at the pressing depths and the mask of the fitted range."""
    fitted = np.asarray(VirtualSpringLaw(spring.coefficients, 0.0, 1.0).elastic_force(depths))
    return fitted, np.asarray(depths) <= float(spring.fit_limit)


def _shape_summary(scenario, out) -> dict:
    model, x_eq = out.model, out.shape
    first, last = x_eq[0], x_eq[-1]
    beta = np.asarray(bend_vectors(x_eq))[:, 2]
    tension = np.asarray(model.rope.tensions(x_eq, jnp.zeros_like(x_eq)))
    chord = (last - first) / jnp.linalg.norm(last - first)
    sag = np.asarray(jnp.abs((x_eq - first) @ jnp.array([-chord[1], chord[0], 0.0])))
    attach = model.rings.attachments(0.0)
    residual = float(jnp.max(jnp.abs(static_residual(model.rope, x_eq[1:-1], first, last, attach=attach))))
    spec = scenario.rope
    return {
        "end_distance_m": float(jnp.linalg.norm(last - first)),
        "rest_bend_total_deg": float(spec.rest_bend_total_deg),
        "installed_bend_total_deg": float(np.rad2deg(abs(beta.sum()))),
        "min_bend_for_end_distance_deg": float(np.rad2deg(2 * np.arccos(float(scenario.rings.end_distance) / spec.length))),
        "sag_m": float(sag.max()), "section_force_min_N": float(tension.min()), "section_force_max_N": float(tension.max()),
        "static_residual_max_N": residual, "end_condition": spec.end_condition,
        "clamp_attach_angles_deg": np.rad2deg(np.asarray(model.rings.attach_angles)),
        "end_moments_N_m": np.asarray(model.rope.end_moments(x_eq, attach))[:, 2],
        "k_tes_N_m": float(model.rope.axial_stiffness[0]), "k_tor_N_m_rad": float(model.rope.bending_stiffness),
        "c_tes_N_s_m": float(model.rope.axial_damping), "c_tor_N_m_s_rad": float(model.rope.bending_damping),
        "node_mass_kg": float(model.rope.masses[1]),
    }


def _mass_summary(scenario, out) -> dict:
    masses = {"striking_mass_kg": float(out.model.mass)}
    arm = dict(scenario.arm_masses)
    if arm:
        masses["arm_effective_mass_kg"] = arm["selected"]
        masses.update({f"arm_mass_{k}_kg": v for k, v in arm.items() if k != "selected"})
    return masses


def _spring_summary(scenario, out) -> dict:
    spring, surface = out.spring, out.surface
    depths = np.asarray(scenario.fit_depths)
    fitted, kept = _fitted(spring, scenario.fit_depths)
    forces = np.asarray(spring.forces)
    quad = np.polyfit(depths[kept], forces[kept], 2)
    return {
        "virtual_k_v0_N_m": float(spring.coefficients[0]), "virtual_poly_coefficients": np.asarray(spring.coefficients),
        "virtual_fit_max_force_N": float(scenario.fit_max_force), "virtual_fit_limit_depth_m": float(spring.fit_limit),
        "virtual_poly_rms_error_N": float(np.sqrt(np.mean((fitted - forces)[kept] ** 2))),
        "paper_form_fit_a_N_m2": float(quad[0]), "paper_form_fit_b_N_m": float(quad[1]), "paper_form_fit_c_N": float(quad[2]),
        "surface_rms_error_N": float(surface.rms_error), "surface_solves_ok": bool(surface.converged),
        "surface_coefficients": np.asarray(surface.coefficients),
        "surface_end_distances_m": np.asarray(scenario.end_distances),
    }


def _impact_summary(scenario, out) -> dict:
    virt, dyn = out.virtual, out.dynamic
    return {
        "virtual_peak_force_N": float(virt.peak_force), "virtual_impulse_N_s": float(virt.impulse),
        "virtual_contact_duration_s": float(virt.contact_duration),
        "virtual_max_indentation_m": float(virt.max_indentation),
        "virtual_within_fit_range": bool(virt.max_indentation <= out.spring.fit_limit),
        "virtual_restitution": float(virt.restitution),
        "dynamic_peak_force_N": float(dyn.peak_force), "dynamic_impulse_N_s": float(dyn.impulse),
        "dynamic_rebound_speed_m_s": float(dyn.rebound_speed), "dynamic_restitution": float(dyn.restitution),
        "dynamic_max_node_displacement_m": float(dyn.max_node_displacement),
        "dynamic_max_shaft_travel_m": float(dyn.max_travel), "dynamic_horizon_s": float(out.horizon),
        "dynamic_scheme": scenario.scheme, "dynamic_solver_steps": int(dyn.num_steps),
        "peak_force_difference_virtual_vs_dynamic": float(virt.peak_force / dyn.peak_force - 1.0),
    }


def summary(scenario, out) -> dict:
    """Everything ``run`` reports: installed shape, virtual spring, both impacts, k_v(0) profile, masses."""
    params = scenario.params
    return {
        "status": Status(int(out.status)).label,
        "contact_node": int(params.node), "approach_speed_m_s": float(params.approach_speed),
        "approach": scenario.approach, "design_metric_method": scenario.method,
        **_shape_summary(scenario, out), **_spring_summary(scenario, out), **_impact_summary(scenario, out),
        "profile_nodes": np.arange(2, scenario.rope.n_sections + 1), "profile_k_v0_N_m": np.asarray(out.profile),
        **_mass_summary(scenario, out),
    }


def write(scenario, out, directory: Path) -> None:
    """``timeseries`` (dynamic impact), ``virtual_timeseries``, ``pressing_curve`` and four plots."""
    dyn, virt = out.dynamic, out.virtual
    dyn_series = {"time_s": dyn.series_time, "force_N": dyn.series_force, "shaft_travel_m": dyn.series_travel}
    virt_series = {"time_s": virt.series_time, "force_N": virt.series_force, "indentation_m": virt.series_indentation}
    fitted, kept = _fitted(out.spring, scenario.fit_depths)
    write_timeseries(directory, dyn_series)
    write_timeseries(directory, virt_series, name="virtual_timeseries")
    write_timeseries(directory, {"depth_m": scenario.fit_depths, "force_N": out.spring.forces, "fit_N": fitted,
                                 "in_fit_range": kept.astype(float)}, name="pressing_curve")
    node, case = int(scenario.params.node), _case(scenario)
    dyn_t, dyn_f = np.asarray(dyn.series_time), np.asarray(dyn.series_force)
    vt = np.interp(dyn_t, np.asarray(virt.series_time), np.asarray(virt.series_force), right=0.0)
    i_peak = int(np.argmax(dyn_f))
    plot_figure(directory / "force_time.png", Figure(
        f"{case}: full dynamic rope against its virtual spring (peak {float(dyn.peak_force):.4g} N and "
        f"{float(virt.peak_force):.4g} N)",
        (Panel("contact force [N]", (Series("full dynamic rope", dyn_f), Series("virtual spring (Eq. 43)", vt))),
         Panel("shaft travel [mm]", (Series("full dynamic rope", 1e3 * np.asarray(dyn.series_travel)),))),
        dyn_t, events=((float(dyn_t[i_peak]), "dynamic peak force"),)))
    dm = np.asarray(scenario.fit_depths)[kept]
    paper = PAPER_EQ46["a_N_m2"] * dm**2 + PAPER_EQ46["b_N_m"] * dm + PAPER_EQ46["c_N"]
    plot_panels(directory / "pressing_curve.png", 1e3 * dm, [("static pressing force F_c [N]", {
        "static solves": np.asarray(out.spring.forces)[kept], "polynomial fit": fitted[kept],
        "paper Eq. (46) (a < 0)": paper})], xlabel="pressing depth delta_v [mm] (fitted range)",
        title=f"{case}: static pressing curve of rope node {node}")
    plot_panels(directory / "stiffness_profile.png", np.arange(2, scenario.rope.n_sections + 1),
                [("k_v(0) [N/m]", {"linearised static stiffness": out.profile})],
                xlabel="rope node (counted from 1; nodes 1 and the last are the clamps)",
                title=f"{case}: linearised static stiffness of every interior rope node")
    x_peak = assemble(dyn.series_inner_nodes[i_peak], out.shape[0], out.shape[-1])
    _plot_shape(directory / "rope_shape.png", np.asarray(out.shape), np.asarray(x_peak),
                f"{case}: rope shape, installed and at the peak force")


def _case(scenario) -> str:
    """The run in words: node, speed, approach."""
    params = scenario.params
    return (f"snare, rope node {int(params.node)} struck at {float(params.approach_speed):.4g} m/s "
            f"({scenario.approach} approach)")


def _plot_shape(path: Path, x_eq: np.ndarray, x_peak: np.ndarray, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    x0, xp = 1e3 * x_eq, 1e3 * x_peak
    ax.plot(x0[:, 0], x0[:, 1], "o-", ms=3, label="initial equilibrium")
    ax.plot(xp[:, 0], xp[:, 1], "-", label="at peak force")
    phi = np.linspace(-np.pi, np.pi, 200)
    r = 1e3 * np.linalg.norm(x_eq[0])
    ax.plot(r * np.cos(phi), r * np.sin(phi), "k:", lw=0.8, label="ring")
    ax.set_aspect("equal"), ax.set_xlabel("x [mm]"), ax.set_ylabel("y [mm]"), ax.legend(fontsize=7)
    ax.set_title(title, fontsize=9, wrap=True)
    fig.tight_layout(), fig.savefig(path, dpi=110), plt.close(fig)


def diagnose(scenario, out) -> str:
    """One line naming the failing phase: statics, virtual-spring impact or dynamic impact."""
    if not bool(out.shape_converged) or not bool(out.spring.converged):
        return (f"phase 'statics': the static shape or pressing solves at node {int(scenario.params.node)} did not "
                "converge (reduce virtual_spring.max_depth_m)")
    if int(out.virtual.status) != Status.OK:
        return "phase 'virtual spring impact': no rebound within 20 linearised contact times"
    dyn = out.dynamic
    if int(dyn.status) == Status.SOLVER_FAILURE:
        if not np.all(np.isfinite(np.asarray(dyn.series_force))):
            return (f"phase 'dynamic impact': the rope's state diverged (scheme '{scenario.scheme}'; lower "
                    "simulation.max_step_s or use simulation.scheme = 'tsit5')")
        if scenario.scheme == "semi_implicit":
            return (f"phase 'dynamic impact': the horizon needs more stable steps than simulation.max_steps = "
                    f"{scenario.solver.max_steps} (raise it)")
        return (f"phase 'dynamic impact': the ODE solver stopped after {int(dyn.num_steps)} steps "
                "(raise simulation.max_steps)")
    if int(dyn.status) == Status.NO_EVENT:
        return (f"phase 'dynamic impact': the shaft is still in contact at the horizon {float(out.horizon):.4g} s "
                "(raise simulation.horizon_factor)")
    return Status(int(out.status)).description
