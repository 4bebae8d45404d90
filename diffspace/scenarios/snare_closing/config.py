"""Snare-closing config: the schema (rope and contact keys shared with the one-rope scenario), cross-key checks
and the ring drive (host side)."""

from __future__ import annotations

import dataclasses

import numpy as np

from ...actuation.drive import Drive, RestToRest, Tabulated
from ...io.config import Field
from ...core.status import ConfigError
from ...integrate import SolverSettings
from ..robot_config import simulation_fields
from ..snare.config import config_fields as snare_config_fields
from ..snare.config import ring_problems

DRIVES = ("rest_to_rest", "tabulated")
SCHEMES = ("semi_implicit", "tsit5")
SOLVER = SolverSettings(rtol=1e-6, atol=1e-9, n_save=2000, max_steps=2_000_000)
"""Defaults of ``[simulation]`` (the tolerances and the step budget serve ``scheme = "tsit5"``)."""


def config_fields() -> dict:
    """The config keys other than the declared parameters (:class:`.scenario.ClosingParams`); ``[rope]`` and the
    law keys of ``[contact]`` are the one-rope scenario's fields (the ropes' ends are pinned here:
    ``rope.end_condition`` is not offered; the bending spring is given as the rigidity ``EI``,
    ``k_tor = EI / l_0``, so that ``n_sections`` only refines the same rope)."""
    base = snare_config_fields()
    pos = dict(gt=0.0)
    return {
        "closing": {
            "ring_radius_m": Field("float", 0.15, **pos, help="R_cm of both rings"),
            "open_end_distance_m": Field("float", 0.26, **pos, help="d_se at psi = 0: 2 R sin(gamma_0)"),
            "n_ropes": Field("int", 3, min=3, max=12),
            "end_time_s": Field("float", 2.5, **pos, help="simulated time (drive and hold)"),
        },
        "drive": {
            "kind": Field("str", "rest_to_rest", choices=DRIVES),
            "start_angle_deg": Field("float", 0.0, min=0.0, help="rest_to_rest: psi at the start"),
            "final_angle_deg": Field("float", 59.85, min=0.0, help="rest_to_rest: psi at the end (<= psi_max)"),
            "duration_s": Field("float", 2.0, **pos, help="rest_to_rest: duration of the move"),
            "start_time_s": Field("float", 0.0, min=0.0, help="rest_to_rest: the ring rests until then"),
            "knot_times_s": Field("floats", [0.0, 1.0, 2.0], help="tabulated: strictly increasing, >= 0"),
            "knot_angles_deg": Field("floats", [0.0, 40.0, 59.85], help="tabulated: psi at the knots"),
        },
        "rope": {**{k: f for k, f in base["rope"].items() if k != "end_condition"},
                 "n_sections": dataclasses.replace(base["rope"]["n_sections"], default=20)},
        "shaft": {"radius_m": base["shaft"]["radius_m"]},
        "contact": {**base["contact"],
                    "points_per_section": Field("int", 4, min=1, max=32, help="1 = contact at the nodes only")},
        "simulation": simulation_fields(
            SOLVER, min_save=10,
            scheme=Field("str", "semi_implicit", choices=SCHEMES, help="semi_implicit: fixed step, axial and "
                         "contact springs and dashpots implicit; tsit5: adaptive explicit (rtol, atol, max_steps)"),
            step_s=Field("float", 2e-5, gt=0.0, max=1e-3, help="semi_implicit: largest step (equal steps "
                         "between saved times; the bending forces need h c_b + (h omega_b)^2 / 4 < 0.9)")),
    }


def max_ring_angle(cfg: dict) -> float:
    """``psi_max = pi - 2 gamma_0`` [rad]: ring angle at which ``d_se = 2 R`` (beyond it the ropes slacken)."""
    c = cfg["closing"]
    return np.pi - 2.0 * np.arcsin(min(c["open_end_distance_m"] / (2.0 * c["ring_radius_m"]), 1.0))


def _drive_problems(d: dict, psi_max: float) -> list[str]:
    if d["kind"] == "rest_to_rest":
        return [f"drive.{key}: must be <= psi_max = {psi_max:.4g} deg (d_se = 2 R)"
                for key in ("start_angle_deg", "final_angle_deg") if d[key] > psi_max + 1e-9]
    problems = []
    times, angles = d["knot_times_s"], d["knot_angles_deg"]
    if len(times) < 2 or len(times) != len(angles):
        problems.append("drive.knot_times_s: needs >= 2 knots, as many as drive.knot_angles_deg")
    elif times[0] < 0.0 or np.any(np.diff(times) <= 0.0):
        problems.append("drive.knot_times_s: must start at >= 0 and increase strictly")
    if any(not 0.0 <= a <= psi_max + 1e-9 for a in angles):
        problems.append(f"drive.knot_angles_deg: must lie in [0, psi_max = {psi_max:.4g}] deg")
    return problems


def check_config(cfg: dict) -> None:
    """Cross-key checks the field ranges cannot express; raises ConfigError naming the key."""
    c, r, d, s = cfg["closing"], cfg["rope"], cfg["drive"], cfg["shaft"]
    problems = ring_problems(c["open_end_distance_m"], c["ring_radius_m"], r["length_m"],
                             "closing.open_end_distance_m", "closing.ring_radius_m")
    gap = r["length_m"] / (r["n_sections"] * cfg["contact"]["points_per_section"])
    if gap >= 2.0 * s["radius_m"] + r["diameter_m"]:
        problems.append(f"rope.n_sections: contact points {gap:g} m apart let the shaft (contact diameter "
                        f"{2 * s['radius_m'] + r['diameter_m']:g} m) slip through a rope; use more sections or "
                        "contact.points_per_section")
    psi_max = np.rad2deg(max_ring_angle(cfg))
    problems += _drive_problems(d, psi_max)
    start_key = "start_angle_deg" if d["kind"] == "rest_to_rest" else "knot_angles_deg"
    psi0 = np.deg2rad(d["start_angle_deg"] if d["kind"] == "rest_to_rest" else (d["knot_angles_deg"] or [0.0])[0])
    gamma0 = 0.5 * (np.pi - max_ring_angle(cfg))
    if 2.0 * c["ring_radius_m"] * np.sin(gamma0 + 0.5 * psi0) >= r["length_m"]:  # d_se(psi(0))
        problems.append(f"drive.{start_key}: the ropes must be slack at the start (d_se < rope.length_m)")
    if np.hypot(*s["initial_position_m"]) + s["radius_m"] >= c["ring_radius_m"]:
        problems.append("shaft.initial_position_m: the shaft must start inside the ring")
    if problems:
        raise ConfigError("\n".join(problems))


def steps_per_save(end_time: float, n_save: int, step: float) -> int:
    """The semi-implicit scheme's equal steps between two saved times: the fewest that keep the step at most ``step`` [s]."""
    return max(1, int(np.ceil(end_time / (n_save - 1) / step * (1.0 - 1e-12))))


def build_drive(d: dict) -> Drive:
    """The ring-angle profile of the ``[drive]`` section (angles in rad)."""
    if d["kind"] == "tabulated":
        return Tabulated(d["knot_times_s"], np.deg2rad(d["knot_angles_deg"]))
    return RestToRest(np.deg2rad(d["start_angle_deg"]), np.deg2rad(d["final_angle_deg"]), d["duration_s"],
                      d["start_time_s"])
