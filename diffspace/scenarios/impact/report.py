"""Impact reports: summary (SI, unit-suffixed keys), time series, force-time and force-indentation plots."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ...io.results import plot_panels, write_timeseries
from ...core.status import Status


def summary(scenario, out) -> dict:
    params = scenario.params
    m1, m2 = float(params.mass1), float(params.mass2)
    law = scenario.contact_law(params)
    v_out = np.asarray(out.velocity_out)
    ke_in = 0.5 * m1 * float(params.approach_speed) ** 2
    ke_out = 0.5 * m1 * v_out[0] ** 2 + 0.5 * m2 * v_out[1] ** 2
    balance = ke_in + float(out.friction_work) - ke_out - float(out.damping_energy) - float(out.elastic_energy_at_release)
    return {
        "status": Status(int(out.status)).label,
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


def write(scenario, out, directory: Path) -> None:
    t = np.asarray(out.series_time)
    series = {"time_s": t, "indentation_m": np.asarray(out.series_indentation),
              "velocity_m_s": np.asarray(out.series_velocity), "force_N": np.asarray(out.series_force)}
    write_timeseries(directory, series)
    plot_panels(directory / "force_time.png", t, [
        ("force [N]", {"contact force": series["force_N"]}),
        ("indentation [mm]", {"delta": 1e3 * series["indentation_m"]}),
        ("rel. velocity [mm/s]", {"d delta/dt": 1e3 * series["velocity_m_s"]}),
    ])
    contact = series["indentation_m"] > 0
    plot_panels(directory / "force_indentation.png", 1e3 * series["indentation_m"][contact],
                [("force [N]", {scenario.law: series["force_N"][contact]})], xlabel="indentation [mm]")
