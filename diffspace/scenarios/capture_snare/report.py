"""Capture-through-snare reports: summary (SI, unit-suffixed keys), force and indentation series and plots."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ...io.results import plot_panels, write_timeseries
from ...core.status import Status


def summary(scenario, out) -> dict:
    impact = out.impact
    row = int(out.node) - 2
    return {
        "status": Status(int(out.status)).label,
        "node": int(out.node),
        "closing_speed_m_s": float(out.closing_speed),
        "peak_force_N": float(impact.peak_force),
        "impulse_N_s": float(impact.impulse),
        "contact_duration_s": float(impact.contact_duration),
        "max_indentation_m": float(impact.max_indentation),
        "fit_limit_m": float(out.fit_limit),
        "rebound_speed_m_s": float(impact.detached_velocity),
        "arm_effective_mass_kg": float(scenario.arm_mass),
        "target_effective_mass_kg": float(scenario.target_mass),
        "striking_mass_kg": float(scenario.model.mass),
        "virtual_stiffness_k_v0_N_m": float(scenario.coefficients[row, 0]),
        "virtual_damping_N_s_m": float(scenario.model.virtual_damping),
        "snare_config": scenario.snare_config,
    }


def write(out, directory: Path) -> None:
    impact = out.impact
    t = np.asarray(impact.series_time)
    series = {"time_s": t, "indentation_m": np.asarray(impact.series_indentation),
              "velocity_m_s": np.asarray(impact.series_velocity), "force_N": np.asarray(impact.series_force)}
    write_timeseries(directory, series)
    plot_panels(directory / "force_time.png", t, [
        ("force [N]", {f"rope node {int(out.node)}": series["force_N"]}),
        ("indentation [mm]", {"delta": 1e3 * series["indentation_m"]}),
    ])
