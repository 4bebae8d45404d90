"""Snare-closing reports: headline numbers, closing time and balances (summary), series, capture zone and plots."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ...core.status import Status
from ...io.results import Figure, Panel, Series, plot_figure, write_timeseries
from .analysis import ENERGY_TOLERANCE, contact_episodes, energy_balance, time_of_angle


def _closing(out) -> tuple[float | None, float | None]:
    """Quasi-static closing angle [rad] and the time the drive reaches it [s] (None if the zone stays open)."""
    psi_c = float(out.zone.closing_angle)
    if not np.isfinite(psi_c):
        return None, None
    return psi_c, time_of_angle(out.model, psi_c, np.asarray(out.ts))


def _balances(out) -> dict:
    """Energy budget ``E - E(0) - W_drive + W_c + D_rope`` (solver error) and shaft momentum vs impulse."""
    ys = out.ys
    balance, relative = energy_balance(out.samples, ys)
    w = np.asarray(ys.w)[:, :2]
    impulse = np.asarray(ys.impulse)[-1, :2]
    momentum = np.linalg.norm(float(out.model.shaft_mass) * (w[-1] - w[0]) - impulse) / max(np.linalg.norm(impulse), 1e-300)
    balance = np.asarray(balance)
    return {"balance": balance, "energy": np.asarray(out.samples.energy),
            "energy_balance_error_J": float(np.abs(balance).max()),
            "energy_balance_relative_error": float(relative),
            "momentum_relative_error": float(momentum), "contact_impulse_N_s": float(np.linalg.norm(impulse))}


def summary(scenario, out) -> dict:
    """Headline numbers (SI, unit-suffixed keys), closing time, contact episodes and the balances."""
    ts, s, ys = np.asarray(out.ts), out.samples, out.ys
    p, w = np.asarray(ys.p)[:, :2], np.asarray(ys.w)[:, :2]
    force, torque = np.asarray(s.rope_force_norm), np.asarray(s.ring_torque)
    episodes = contact_episodes(force)
    touching = np.nonzero(force.max(axis=1) > 0.0)[0]
    end_time = float(out.model.drive.end_time)
    hold = ts >= end_time  # ring at rest: how far the caged shaft still wanders
    psi_c, t_close = _closing(out)
    bal = _balances(out)
    zone = np.asarray(out.zone.radius)
    return {
        "status": Status(int(out.status)).label,
        "outcome": scenario.outcome_label(out),
        "peak_contact_force_N": float(out.headline.peak_contact_force),
        "peak_ring_torque_N_m": float(out.headline.peak_ring_torque), "final_offset_m": float(out.headline.final_offset),
        "peak_contact_force_per_rope_N": force.max(axis=0),
        "peak_net_shaft_force_N": float(np.linalg.norm(np.asarray(s.shaft_force)[:, :2], axis=1).max()),
        "initial_ring_torque_N_m": float(torque[0]), "final_ring_torque_N_m": float(torque[-1]),
        "closing_time_s": t_close, "closing_angle_deg": None if psi_c is None else float(np.rad2deg(psi_c)),
        "final_angle_deg": float(np.rad2deg(np.asarray(s.psi)[-1])),
        "initial_zone_radius_m": float(zone[0]), "final_zone_radius_m": float(zone[-1]),
        "final_shaft_speed_m_s": float(np.linalg.norm(w[-1])), "max_offset_m": float(np.linalg.norm(p, axis=1).max()),
        "drive_end_time_s": end_time,
        "hold_max_offset_m": float(np.linalg.norm(p[hold], axis=1).max()) if hold.any() else None,
        "contact_episodes": int(episodes.sum()), "contact_episodes_per_rope": episodes,
        "first_contact_time_s": float(ts[touching[0]]) if touching.size else None,
        "contact_impulse_N_s": bal["contact_impulse_N_s"], "final_hold_force_per_rope_N": force[-1],
        "drive_work_J": float(np.asarray(ys.work_drive)[-1]), "rope_dissipated_J": float(np.asarray(ys.rope_dissipated)[-1]),
        "contact_dissipated_J": float(np.asarray(ys.work_contact)[-1] - np.asarray(s.contact_potential)[-1]),
        "energy_balance_error_J": bal["energy_balance_error_J"],
        "energy_balance_relative_error": bal["energy_balance_relative_error"],
        "momentum_relative_error": bal["momentum_relative_error"], "solver_steps": int(out.solver_steps),
    }


def _series(out) -> dict:
    ts, s, ys = np.asarray(out.ts), out.samples, out.ys
    p, w = np.asarray(ys.p)[:, :2], np.asarray(ys.w)[:, :2]
    force = np.asarray(s.rope_force_norm)
    balance = _balances(out)
    return {"time_s": ts, "ring_angle_deg": np.rad2deg(np.asarray(s.psi)),
            "ring_rate_deg_s": np.rad2deg(np.asarray(s.psi_rate)), "shaft_x_m": p[:, 0], "shaft_y_m": p[:, 1],
            "shaft_vx_m_s": w[:, 0], "shaft_vy_m_s": w[:, 1], "shaft_offset_m": np.linalg.norm(p, axis=1),
            **{f"contact_force_rope{k + 1}_N": force[:, k] for k in range(force.shape[1])},
            "net_shaft_force_N": np.linalg.norm(np.asarray(s.shaft_force)[:, :2], axis=1),
            "ring_torque_N_m": np.asarray(s.ring_torque), "drive_work_J": np.asarray(ys.work_drive),
            "mechanical_energy_J": balance["energy"], "energy_balance_error_J": balance["balance"]}


def _instants(ts, force, t_close) -> list[int]:
    """Sample indices drawn in the path plot: start, first contact, closing, end."""
    touching = np.nonzero(force.max(axis=1) > 0.0)[0]
    picks = [0, int(touching[0]) if touching.size else None,
             None if t_close is None else int(np.searchsorted(ts, t_close)), len(ts) - 1]
    return sorted({min(i, len(ts) - 1) for i in picks if i is not None})


def write(scenario, out, directory: Path) -> None:
    """``timeseries``, ``capture_zone`` (quasi-static zone radius vs ring angle), ``closing_forces.png`` (forces,
    torque, angle, offset vs time), ``capture_zone.png`` and ``closing_path.png`` (shaft path and rope shapes)."""
    se = _series(out)
    zone = out.zone
    write_timeseries(directory, se)
    write_timeseries(directory, {"ring_angle_deg": np.rad2deg(np.asarray(zone.psi)), "zone_radius_m": zone.radius},
                     name="capture_zone")
    forces = tuple(Series(f"rope {k.removeprefix('contact_force_rope').removesuffix('_N')}", v)
                   for k, v in se.items() if k.startswith("contact_force"))
    psi_c, t_close = _closing(out)
    case = _case(out, se)
    if int(out.status) != Status.OK:
        residual = _balances(out)["energy_balance_relative_error"]
        case = f"{case} [{Status(int(out.status)).label}; energy balance residual {residual:.2g}]"
    plot_figure(directory / "closing_forces.png", Figure(f"{case}: contact forces, drive torque and shaft offset", (
        Panel("rope-shaft contact force [N]", forces),
        Panel("ring drive torque [N m]", (Series("drive torque", se["ring_torque_N_m"]),)),
        Panel("ring angle psi [deg]", (Series("ring angle", se["ring_angle_deg"]),),
              ((float(np.rad2deg(psi_c)), "capture zone closes (quasi-static)"),) if psi_c is not None else ()),
        Panel("shaft offset |p| [mm]", (Series("distance of the shaft axis from the ring centre",
                                               1e3 * se["shaft_offset_m"]),))),
        se["time_s"], events=_events(out, se, t_close)))
    r_s = 1e3 * float(scenario.shaft.radius)
    psi = np.rad2deg(np.asarray(zone.psi))
    plot_figure(directory / "capture_zone.png", Figure(
        f"{case}: quasi-static capture zone (closes where its radius reaches the shaft's)",
        (Panel("capture zone radius [mm]", (Series("static ropes", 1e3 * np.asarray(zone.radius)),),
               ((r_s, f"shaft radius {r_s:.3g} mm"),)),), psi, xlabel="ring angle psi [deg]"))
    instants = _instants(se["time_s"], np.asarray(out.samples.rope_force_norm), t_close)
    _plot_path(directory / "closing_path.png", se, np.asarray(out.samples.nodes), instants,
               1e3 * float(scenario.rings.ring_radius), r_s, f"{case}: shaft path and rope shapes")


def _case(out, se: dict) -> str:
    """The run in words: the drive's angles and time."""
    angle = se["ring_angle_deg"]
    drive = out.model.drive
    return (f"snare closing, ring {angle[0]:.4g} to {angle[-1]:.4g} deg, drive ends at "
            f"t = {float(drive.end_time):.4g} s")


def _events(out, se: dict, t_close) -> tuple:
    force = np.asarray(out.samples.rope_force_norm)
    touching = np.nonzero(force.max(axis=1) > 0.0)[0]
    events = [(float(out.model.drive.end_time), "drive ends")]
    if touching.size:
        events.append((float(se["time_s"][touching[0]]), "first contact"))
    if t_close is not None:
        events.append((float(t_close), "zone closed"))
    return tuple((t, label) for t, label in events if se["time_s"][0] <= t <= se["time_s"][-1])


def _plot_path(path: Path, se: dict, nodes: np.ndarray, instants: list[int], ring: float, r_s: float,
               title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 6))
    phi = np.linspace(0.0, 2 * np.pi, 300)
    ax.plot(ring * np.cos(phi), ring * np.sin(phi), "k:", lw=0.8)
    ax.plot(1e3 * se["shaft_x_m"], 1e3 * se["shaft_y_m"], "k-", lw=0.8, label="shaft path")
    colors = plt.cm.viridis(np.linspace(0.0, 0.9, len(instants)))
    for i, c in zip(instants, colors):
        for rope in 1e3 * nodes[i]:
            ax.plot(rope[:, 0], rope[:, 1], ".-", color=c, ms=2, lw=1)
        ax.add_patch(plt.Circle((1e3 * se["shaft_x_m"][i], 1e3 * se["shaft_y_m"][i]), r_s, fill=False, color=c,
                                label=f"t = {se['time_s'][i]:.3f} s, psi = {se['ring_angle_deg'][i]:.1f} deg"))
    ax.set_aspect("equal"), ax.set_xlabel("x [mm]"), ax.set_ylabel("y [mm]"), ax.legend(fontsize=7, loc="upper right")
    ax.set_title(title, fontsize=9, wrap=True)
    fig.tight_layout(), fig.savefig(path, dpi=110), plt.close(fig)


def diagnose(scenario, out) -> str:
    """One line naming the failing phase: initial or capture-zone statics, or the closing dynamics."""
    status = int(out.status)
    if status == Status.NOT_CONVERGED:
        return ("phase 'statics': the initial rope shapes or the capture-zone static solves (Newton on Eqs. "
                "(35)-(36)) did not converge")
    if status == Status.SOLVER_FAILURE:
        relative = float(energy_balance(out.samples, out.ys)[1])
        if not relative <= ENERGY_TOLERANCE and np.isfinite(relative):
            return (f"phase 'closing dynamics': the energy balance is off by {relative:.2g} of the energy exchanged "
                    f"(tolerance {ENERGY_TOLERANCE:g}): the solve went wrong on a contact; lower simulation.step_s "
                    "(semi_implicit) or simulation.rtol (tsit5)")
        if scenario.scheme == "semi_implicit":
            return (f"phase 'closing dynamics': the fixed-step solve ({float(scenario.step_length):.3g} s) "
                    "cannot follow this rope (its bending springs and dashpots need a shorter step, or the state "
                    "diverged): lower simulation.step_s")
        return (f"phase 'closing dynamics': the ODE solver stopped after {int(out.solver_steps)} steps "
                "(raise simulation.max_steps)")
    return Status(status).description
