"""Capture-through-snare reports: summary (SI, unit-suffixed keys), force and indentation series and plots."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ...io.results import plot_figure, write_timeseries
from ...core.status import Status
from ..impact.report import contact_figure


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
    title = (f"capture through the snare: rod tip on rope node {int(out.node)} at {float(out.closing_speed):.4g} m/s "
             f"closing speed: peak {float(impact.peak_force):.4g} N, contact "
             f"{1e3 * float(impact.release_time - impact.contact_start_time):.4g} ms")
    plot_figure(directory / "force_time.png", contact_figure(
        impact, title, f"virtual spring of rope node {int(out.node)}",
        (float(out.fit_limit), f"end of the node's fitted depth range {1e3 * float(out.fit_limit):.3g} mm")))
