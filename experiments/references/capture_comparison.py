"""The capture scenario against its independent reference (:mod:`capture_reference_model`): the cases and
the same quantities read from both sides (SI, world axes, angular velocities in rad/s)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from .capture_reference_model import CaptureReference

from diffspace.design import simulate_default
from diffspace.core.dynamics import frame_jacobian
from diffspace.io.config import apply_overrides, read_toml
from diffspace.scenarios import load_scenario, resolve_config

CONFIG = Path(__file__).resolve().parents[2] / "configs" / "capture.toml"
CASES = {  # name -> config overrides (--set syntax) on configs/capture.toml
    "default": [],
    "fast_oblique": ["capture.approach_speed_m_s=0.2", "capture.approach_angles_deg=[20.0, -15.0]"],
    "slow_moving_target": ["capture.approach_speed_m_s=0.01", "capture.approach_angles_deg=[-10.0, 25.0]",
                           'capture.moving="target"', "capture.initial_gap_m=0.001"],
    "lankarani_nikravesh_c04": ['contact.law="lankarani_nikravesh"', "contact.restitution_c=0.4"],
    "free_joints_hertz": ['arm.joints="free"', 'contact.law="hertz"', "capture.approach_speed_m_s=0.1",
                          "capture.approach_angles_deg=[10.0, 10.0]"],
    "flores_c03_joints_246_free": ['contact.law="flores"', "contact.restitution_c=0.3", "arm.joints=[2, 4, 6]",
                                   "capture.approach_speed_m_s=0.1", "capture.approach_angles_deg=[-20.0, 0.0]"],
}
SCALARS = ("contact_start_time_s", "peak_force_N", "impulse_N_s", "contact_duration_s", "separation_speed_m_s")
VECTORS = ("target_velocity_m_s", "target_angular_velocity_rad_s", "tip_velocity_m_s", "base_velocity_m_s",
           "base_angular_velocity_rad_s")
TOLERANCE_KEYS = ("simulation.rtol", "simulation.atol")


def resolved_config(overrides: list[str]) -> dict:
    """The config's values with every default filled in (a plain dict)."""
    _, cfg = resolve_config(apply_overrides(read_toml(CONFIG), list(overrides)), CONFIG.parent, str(CONFIG))
    return cfg


def reference_numbers(overrides: list[str], rtol: float = 1e-12, atol: float = 1e-14) -> dict:
    r = CaptureReference(resolved_config(overrides)).simulate(rtol, atol)
    return {
        "contacts": r.contacts, "contact_start_time_s": r.contact_start_time, "peak_force_N": r.peak_force,
        "impulse_N_s": r.impulse, "contact_duration_s": r.duration, "separation_speed_m_s": r.separation_speed,
        "target_velocity_m_s": r.target_velocity, "target_angular_velocity_rad_s": r.target_angular_velocity,
        "tip_velocity_m_s": r.tip_velocity, "base_velocity_m_s": r.base_velocity,
        "base_angular_velocity_rad_s": r.base_angular_velocity, "axial_range_m": r.axial_range,
        "rhs_evaluations": r.evaluations,
    }


def diffspace_numbers(overrides: list[str], rtol: float | None = None, atol: float | None = None) -> dict:
    """diffspace's numbers through its public API (summary; the tip velocity from the release state)."""
    tolerances = [f"{k}={v!r}" for k, v in zip(TOLERANCE_KEYS, (rtol, atol)) if v is not None]
    scenario = load_scenario(CONFIG, list(overrides) + tolerances)
    outcome = simulate_default(scenario)
    s = scenario.summary(outcome)
    q, v = (np.asarray(a) for a in outcome.y_release[:2])
    tip_velocity = np.asarray(frame_jacobian(scenario.model.robot, q, "rod_tip"))[:3] @ v
    return {
        "status": s["status"], "contacts": s["contacts"], **{k: s[k] for k in SCALARS},
        "target_velocity_m_s": np.asarray(s["post_target_velocity_m_s"]),
        "target_angular_velocity_rad_s": np.deg2rad(s["post_target_angular_velocity_deg_s"]),
        "tip_velocity_m_s": tip_velocity, "base_velocity_m_s": np.asarray(s["post_base_velocity_m_s"]),
        "base_angular_velocity_rad_s": np.deg2rad(s["post_base_angular_velocity_deg_s"]),
        "solver_steps": s["solver_steps"],
    }


def relative_differences(value: dict, reference: dict) -> dict:
    """``|a - b| / |b|`` per quantity (Euclidean norm for vectors), ``b`` the reference."""
    return {k: float(np.linalg.norm(np.asarray(value[k]) - np.asarray(reference[k]))
                     / np.linalg.norm(np.asarray(reference[k]))) for k in SCALARS + VECTORS}
