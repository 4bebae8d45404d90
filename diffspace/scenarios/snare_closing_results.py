"""Snare closing results: headline numbers, the quasi-static capture zone and closing time, series and plots
(split from :mod:`diffspace.scenarios.snare_closing` to keep files short)."""

from __future__ import annotations

from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from ..bodies.rope import assemble, equilibrium
from ..io.results import plot_panels
from .snare_closing import SnareClosing, sample
from .snare_design import parabolic_peak


def axis_distance(x: Float[Array, "N1 3"]) -> Float[Array, ""]:
    """Distance [m] from the ring axis (``z``) to the rope's centre line (the polyline through its nodes)."""
    a, d = x[:-1, :2], x[1:, :2] - x[:-1, :2]
    u = jnp.clip(-jnp.sum(a * d, axis=-1) / jnp.sum(d * d, axis=-1), 0.0, 1.0)
    return jnp.min(jnp.linalg.norm(a + u[:, None] * d, axis=-1))


@eqx.filter_jit
def static_rope(model: SnareClosing, psi, x_guess):
    """Rope 0 in static equilibrium (Eqs. (35)-(36)) at ring angle ``psi`` from interior nodes ``x_guess``:
    ``(all nodes, capture-zone radius = axis distance - rope radius, converged)``."""
    a, b = model.snare.ends(psi)
    xi, ok = equilibrium(model.rope, x_guess, a, b)
    x = assemble(xi, a, b)
    return x, axis_distance(x) - model.rope.radius, ok


def capture_zone(model: SnareClosing, x_start: Float[Array, "Nm1 3"], n_grid: int = 61, bisections: int = 40) -> dict:
    """Quasi-static capture zone: radius of the circle about the axis that the ropes' static shapes leave free,
    on a grid of ring angles from ``psi(0)`` to the drive's final angle (continuation, each Newton solve
    started from the previous shape), and the closing angle where it equals the shaft radius (bisection).
    The ropes are turned copies of rope 0, so rope 0 decides. ``closing_angle_rad`` is None if the zone
    stays wider than the shaft."""
    psi = np.linspace(float(model.drive.angle(0.0)), float(model.drive.angle(model.drive.end_time)), n_grid)
    radius, shapes, ok, xi = [], [], True, x_start
    for p in psi:
        x, r, conv = static_rope(model, p, xi)
        xi, ok = x[1:-1], ok and bool(conv)
        radius.append(float(r)), shapes.append(xi)
    radius = np.asarray(radius)
    target = float(model.shaft.radius)
    below = np.nonzero(radius <= target)[0]
    closing = None
    if below.size and below[0] > 0:
        j = below[0]
        lo, hi, xi = psi[j - 1], psi[j], shapes[j - 1]
        for _ in range(bisections):
            mid = 0.5 * (lo + hi)
            x, r, conv = static_rope(model, mid, xi)
            ok = ok and bool(conv)
            lo, hi = (mid, hi) if float(r) > target else (lo, mid)
        closing = 0.5 * (lo + hi)
    elif below.size:
        closing = psi[0]
    return {"psi_rad": psi, "radius_m": radius, "closing_angle_rad": closing, "converged": ok}


def time_of_angle(model: SnareClosing, psi_target: float, ts: np.ndarray, bisections: int = 60) -> float | None:
    """First time in ``ts`` at which the drive reaches ``psi_target`` (bisection between samples)."""
    angle = jax.jit(lambda t: model.drive.angle(t))
    psi = np.asarray(jax.vmap(angle)(jnp.asarray(ts)))
    hit = np.nonzero(psi >= psi_target)[0]
    if not hit.size:
        return None
    if hit[0] == 0:
        return float(ts[0])
    lo, hi = float(ts[hit[0] - 1]), float(ts[hit[0]])
    for _ in range(bisections):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if float(angle(mid)) < psi_target else (lo, mid)
    return 0.5 * (lo + hi)


def contact_episodes(force: np.ndarray) -> np.ndarray:
    """Distinct contact episodes (impacts) per rope: rising edges of ``force > 0`` over the samples ``(T, R)``
    (a contact already present at the first sample counts)."""
    on = np.asarray(force) > 0.0
    return on[0].astype(int) + np.sum(on[1:] & ~on[:-1], axis=0)


@eqx.filter_jit
def samples(model: SnareClosing, ts, ys) -> dict:
    """:func:`sample` at every saved state."""
    return jax.vmap(lambda t, y: sample(model, t, y))(ts, ys)


def headline(model: SnareClosing, sol) -> dict:
    """Differentiable headline numbers of one solve: ``peak_contact_force_N`` (largest force between one rope
    and the shaft, parabolic refinement over the samples), ``peak_ring_torque_N_m`` (largest ``|tau|``) and
    ``final_offset_m`` (shaft axis from the ring axis at the end)."""
    s = jax.vmap(lambda t, y: sample(model, t, y))(sol.ts, sol.ys)
    return {"peak_contact_force_N": parabolic_peak(jnp.max(s["rope_force_norm"], axis=1)),
            "peak_ring_torque_N_m": parabolic_peak(jnp.abs(s["ring_torque"])),
            "final_offset_m": jnp.linalg.norm(sol.ys[2][-1, :2])}


def analyse(model: SnareClosing, sol, zone: dict) -> dict:
    """Summary (SI, unit-suffixed keys), time series and plot data of a closing run."""
    ts = np.asarray(sol.ts)
    s = {k: np.asarray(v) for k, v in samples(model, sol.ts, sol.ys).items()}
    p, w = np.asarray(sol.ys[2])[:, :2], np.asarray(sol.ys[3])[:, :2]
    force, torque = s["rope_force_norm"], s["ring_torque"]
    peak = {k: float(v) for k, v in headline(model, sol).items()}
    energy = s["rope_kinetic"] + s["rope_elastic"] + s["shaft_kinetic"]
    balance = energy - energy[0] - s["work_drive"] + s["work_contact"] + s["rope_dissipated"]
    impulse = s["impulse"][-1, :2]
    momentum_error = np.linalg.norm(float(model.shaft_mass) * (w[-1] - w[0]) - impulse) / max(np.linalg.norm(impulse), 1e-300)
    episodes = contact_episodes(force)
    touching = np.nonzero(force.max(axis=1) > 0.0)[0]
    hold = ts >= float(model.drive.end_time)  # ring at rest: how far the caged shaft still wanders
    psi_c = zone["closing_angle_rad"]
    t_close = None if psi_c is None else time_of_angle(model, psi_c, ts)
    summary = {
        **peak,
        "peak_contact_force_per_rope_N": force.max(axis=0),
        "peak_net_shaft_force_N": float(np.linalg.norm(s["shaft_force"][:, :2], axis=1).max()),
        "initial_ring_torque_N_m": float(torque[0]), "final_ring_torque_N_m": float(torque[-1]),
        "closing_time_s": t_close, "closing_angle_deg": None if psi_c is None else float(np.rad2deg(psi_c)),
        "final_angle_deg": float(np.rad2deg(s["psi"][-1])),
        "initial_zone_radius_m": float(zone["radius_m"][0]), "final_zone_radius_m": float(zone["radius_m"][-1]),
        "final_offset_m": peak["final_offset_m"], "final_shaft_speed_m_s": float(np.linalg.norm(w[-1])),
        "max_offset_m": float(np.linalg.norm(p, axis=1).max()),
        "drive_end_time_s": float(model.drive.end_time),
        "hold_max_offset_m": float(np.linalg.norm(p[hold], axis=1).max()) if hold.any() else None,
        "contact_episodes": int(episodes.sum()), "contact_episodes_per_rope": episodes,
        "first_contact_time_s": float(ts[touching[0]]) if touching.size else None,
        "contact_impulse_N_s": float(np.linalg.norm(impulse)),
        "final_hold_force_per_rope_N": force[-1],
        "drive_work_J": float(s["work_drive"][-1]), "rope_dissipated_J": float(s["rope_dissipated"][-1]),
        "contact_dissipated_J": float(s["work_contact"][-1] - s["contact_potential"][-1]),
        "energy_balance_error_J": float(np.abs(balance).max()),
        "energy_balance_relative_error": float(np.abs(balance).max() / max(np.abs(s["work_drive"]).max(), np.ptp(energy), 1e-300)),
        "momentum_relative_error": float(momentum_error),
        "solver_steps": int(sol.stats["num_steps"]),
    }
    series = {"time_s": ts, "ring_angle_deg": np.rad2deg(s["psi"]), "ring_rate_deg_s": np.rad2deg(s["psi_rate"]),
              "shaft_x_m": p[:, 0], "shaft_y_m": p[:, 1], "shaft_vx_m_s": w[:, 0], "shaft_vy_m_s": w[:, 1],
              "shaft_offset_m": np.linalg.norm(p, axis=1),
              **{f"contact_force_rope{k + 1}_N": force[:, k] for k in range(force.shape[1])},
              "net_shaft_force_N": np.linalg.norm(s["shaft_force"][:, :2], axis=1), "ring_torque_N_m": torque,
              "drive_work_J": s["work_drive"], "mechanical_energy_J": energy, "energy_balance_error_J": balance}
    return {"summary": summary, "series": series, "nodes": s["nodes"], "zone": zone,
            "instants": _instants(ts, touching, t_close)}


def _instants(ts, touching, t_close) -> list[int]:
    """Sample indices drawn in the path plot: start, first contact, closing, end."""
    picks = [0, int(touching[0]) if touching.size else None,
             None if t_close is None else int(np.searchsorted(ts, t_close)), len(ts) - 1]
    return sorted({min(i, len(ts) - 1) for i in picks if i is not None})


def write_plots(out: Path, res: dict, model: SnareClosing) -> None:
    """``closing_forces.png`` (forces, torque, angle, offset vs time), ``capture_zone.png`` (quasi-static zone
    radius vs ring angle) and ``closing_path.png`` (shaft path and rope shapes in the ring plane)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    se, zone = res["series"], res["zone"]
    forces = {k.removeprefix("contact_force_").removesuffix("_N"): v for k, v in se.items() if k.startswith("contact_force")}
    plot_panels(out / "closing_forces.png", se["time_s"], [
        ("rope-shaft force [N]", forces), ("ring torque [N m]", {"drive torque": se["ring_torque_N_m"]}),
        ("ring angle [deg]", {"psi": se["ring_angle_deg"]}), ("shaft offset [mm]", {"|p|": 1e3 * se["shaft_offset_m"]})])
    r_s = 1e3 * float(model.shaft.radius)
    plot_panels(out / "capture_zone.png", np.rad2deg(zone["psi_rad"]), [(
        "zone radius [mm]", {"static ropes": 1e3 * zone["radius_m"], "shaft radius": np.full(len(zone["psi_rad"]), r_s)})],
        xlabel="ring angle psi [deg]")
    fig, ax = plt.subplots(figsize=(6, 6))
    ring = 1e3 * float(model.snare.ring_radius)
    phi = np.linspace(0.0, 2 * np.pi, 300)
    ax.plot(ring * np.cos(phi), ring * np.sin(phi), "k:", lw=0.8)
    ax.plot(1e3 * se["shaft_x_m"], 1e3 * se["shaft_y_m"], "k-", lw=0.8, label="shaft path")
    colors = plt.cm.viridis(np.linspace(0.0, 0.9, len(res["instants"])))
    for i, c in zip(res["instants"], colors):
        for rope in 1e3 * res["nodes"][i]:
            ax.plot(rope[:, 0], rope[:, 1], ".-", color=c, ms=2, lw=1)
        ax.add_patch(plt.Circle((1e3 * se["shaft_x_m"][i], 1e3 * se["shaft_y_m"][i]), r_s, fill=False, color=c,
                                label=f"t = {se['time_s'][i]:.3f} s, psi = {se['ring_angle_deg'][i]:.1f} deg"))
    ax.set_aspect("equal"), ax.set_xlabel("x [mm]"), ax.set_ylabel("y [mm]"), ax.legend(fontsize=7, loc="upper right")
    fig.tight_layout(), fig.savefig(out / "closing_path.png", dpi=110), plt.close(fig)
