"""Impact reports: summary (SI, unit-suffixed keys), time series, force-time and force-indentation plots."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ...io.results import Figure, Panel, Series, plot_figure, write_timeseries
from ...core.status import Status


def summary(scenario, out) -> dict:
    """The run's numbers; what its outcome leaves undefined is ``null`` (the release of a pair that stuck
    together, every contact quantity of a pair that never touched). A stuck pair keeps the elastic energy of
    its frozen indentation, and the friction pair pressing it together did work on it."""
    params = scenario.params
    m1, m2 = float(params.mass1), float(params.mass2)
    law = scenario.contact_law(params)
    v_out = np.asarray(out.velocity_out)
    ke_in = 0.5 * m1 * float(params.approach_speed) ** 2
    ke_out = 0.5 * m1 * v_out[0] ** 2 + 0.5 * m2 * v_out[1] ** 2
    balance = ke_in + float(out.friction_work) - ke_out - float(out.damping_energy) - float(out.elastic_energy_at_release)
    return {
        "status": Status(int(out.status)).label,
        "outcome": scenario.outcome_label(out),
        "common_velocity_m_s": float(out.common_velocity),
        "binding_time_s": float(out.binding_time),
        "detached_velocity_m_s": float(out.detached_velocity),
        "peak_force_N": float(out.peak_force),
        "contact_duration_s": float(out.contact_duration),
        "impulse_N_s": float(out.impulse),
        "restitution": float(out.restitution),
        "impact_speed_m_s": float(out.impact_speed),
        "max_indentation_m": float(out.max_indentation),
        "contact_start_time_s": float(out.contact_start_time),
        "peak_force_time_s": float(out.peak_force_time),
        "max_compression_time_s": float(out.max_compression_time),
        "release_time_s": float(out.release_time),
        "equivalent_mass_kg": float(scenario.equivalent_mass(params)),
        "stiffness_N_m_n": float(law.stiffness),
        "exponent": float(law.exponent),
        "input_restitution_c": float(law.restitution),
        "damping_law": scenario.law,
        "damping_coefficient_SI": float(law.damping(out.impact_speed)),
        "friction_model": scenario.friction_model,
        "friction_force_N": float(scenario.friction(params).force) if scenario.friction_model == "paper" else 0.0,
        "kinetic_energy_in_J": ke_in,
        "kinetic_energy_out_J": ke_out,
        "damping_energy_J": float(out.damping_energy),
        "friction_work_J": float(out.friction_work),
        "elastic_energy_at_release_J": float(out.elastic_energy_at_release),
        "energy_balance_error_J": balance,
        "body1_velocity_out_m_s": float(v_out[0]),
        "body2_velocity_out_m_s": float(v_out[1]),
        "solver_steps": int(out.num_steps),
    }


def contact_figure(out, title: str, force_label: str = "contact force", indentation_limit=None) -> Figure:
    """Force, indentation and relative velocity of a two-body impact (:class:`~diffspace.contact.ImpactOutcome`),
    shown over the contact (first touch to release, padded by a quarter of it) with its events; the indentation
    panel carries the model's validity limit where there is one (``(value [m], label)``)."""
    t = np.asarray(out.series_time)
    t0, t1 = float(out.contact_start_time), float(out.release_time)
    events = tuple((float(x), label) for x, label in (
        (t0, "first touch"), (out.peak_force_time, "peak force"), (out.max_compression_time, "max compression"),
        (t1, "release")) if np.isfinite(float(x)))
    pad = 0.25 * (t1 - t0) if np.isfinite(t1 - t0) and t1 > t0 else None
    limits = ((1e3 * float(indentation_limit[0]), indentation_limit[1]),) if indentation_limit else ()
    panels = (Panel("contact force [N]", (Series(force_label, np.asarray(out.series_force)),)),
              Panel("indentation [mm] (negative: gap)", (Series("indentation", 1e3 * np.asarray(out.series_indentation)),),
                    limits),
              Panel("closing rate [mm/s]", (Series("d(indentation)/dt", 1e3 * np.asarray(out.series_velocity)),)))
    return Figure(title, panels, t, events=events,
                  xlim=(max(float(t[0]), t0 - pad), min(float(t[-1]), t1 + pad)) if pad else None)


def write(scenario, out, directory: Path) -> None:
    t = np.asarray(out.series_time)
    series = {"time_s": t, "indentation_m": np.asarray(out.series_indentation),
              "velocity_m_s": np.asarray(out.series_velocity), "force_N": np.asarray(out.series_force)}
    write_timeseries(directory, series)
    law = scenario.contact_law(scenario.params)
    case = (f"impact, {scenario.law} contact (n = {float(law.exponent):g}, c = {float(law.restitution):.3g}) at "
            f"{float(out.impact_speed):.4g} m/s")
    duration = float(out.release_time - out.contact_start_time)
    plot_figure(directory / "force_time.png", contact_figure(
        out, f"{case}: peak {float(out.peak_force):.4g} N, contact {1e3 * duration:.3g} ms, restitution "
             f"{float(out.restitution):.3g}", f"contact force ({scenario.law})"))
    contact = series["indentation_m"] > 0
    plot_figure(directory / "force_indentation.png", Figure(
        f"{case}: force against indentation (the loop's area is the energy lost)",
        (Panel("contact force [N]", (Series(f"{scenario.law} law along the run", series["force_N"][contact]),)),),
        1e3 * series["indentation_m"][contact], xlabel="indentation [mm]"))
