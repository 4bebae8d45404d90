"""Host-side results of the unilateral-contact scenario: summary, time series and the paper-like plots
(Fig. 4/5 inputs, Fig. 6 joint angles, Figs. 7/8 normal and tangential forces, Fig. 9 configurations)."""

from __future__ import annotations

from pathlib import Path

import equinox as eqx
import jax
import numpy as np

from ...contact.unilateral import MODE_LABELS
from ...io.results import Figure, Panel, Series, name_and_unit, plot_figure, plot_panels, write_timeseries
from ...core.status import Status
from .config import PROFILE_KEYS
from .model import PlanarArm
from .stepping import StepOptions, ContactTrajectory

MODE_KEYS = ("separated_s", "stick_s", "slip_positive_s", "slip_negative_s")


def mode_intervals(t: np.ndarray, mode: np.ndarray, dt: float) -> list[dict]:
    """Maximal runs of one contact mode: ``[{"mode", "start_s", "end_s"}, ...]`` (step k covers
    ``[t_k, t_k + dt]``)."""
    edges = np.flatnonzero(np.diff(mode)) + 1
    starts = np.concatenate([[0], edges])
    ends = np.concatenate([edges, [mode.size]])
    return [
        {"mode": MODE_LABELS[int(mode[a])], "start_s": float(t[a]), "end_s": float(t[b - 1] + dt)}
        for a, b in zip(starts, ends)
    ]


@eqx.filter_jit
def _along(arm: PlanarArm, q, u):
    """Linear momentum and the plotted body points at every sample (one compiled pass for both)."""
    return jax.vmap(arm.linear_momentum)(q, u), jax.vmap(arm.body_points)(q)


def momentum_balance(arm: PlanarArm, traj: ContactTrajectory, dt: float) -> dict:
    """Linear momentum change of the whole system vs the impulses of the base inputs and the contact (forces
    times the step plus the impact impulses)."""
    momentum = np.asarray(_along(arm, traj.q, traj.u)[0])
    applied = dt * np.asarray(traj.inputs[:, :2]).sum(axis=0)
    contact = dt * np.array([np.sum(traj.tangent_force), np.sum(traj.normal_force)])
    contact = contact + np.asarray(traj.impact_impulse).sum(axis=0)
    change = momentum[-1] - momentum[0]
    return {
        "momentum_change_N_s": change.tolist(),
        "applied_impulse_N_s": applied.tolist(),
        "contact_impulse_N_s": contact.tolist(),
        "momentum_balance_error_N_s": float(np.max(np.abs(change - applied - contact))),
    }


def contact_checks(options: StepOptions, traj: ContactTrajectory, singular_manipulability: float) -> dict:
    """Penetration, impacts and the controller's singular-pose time (what the warnings are about)."""
    penetration = max(-float(np.min(traj.tip[:, 1])), 0.0)
    manipulability = np.asarray(traj.manipulability)
    impulses = np.asarray(traj.impact_impulse)
    return {
        "max_penetration_m": penetration,
        "penetration_tolerance_m": options.penetration_tolerance,
        "penetration_exceeded": penetration > options.penetration_tolerance,
        "max_closing_speed_m_s": float(np.max(traj.closing_speed)),
        "impacts": int(np.sum(np.any(impulses != 0.0, axis=1))),
        "impact_impulse_N_s": impulses.sum(axis=0).tolist(),
        "min_manipulability_m2": float(manipulability.min()),
        "singular_s": float(options.dt * np.sum(manipulability < singular_manipulability)),
    }


def summary(arm: PlanarArm, options: StepOptions, traj: ContactTrajectory, status: int,
            singular_manipulability: float) -> dict:
    t, mode = np.asarray(traj.t), np.asarray(traj.mode)
    tip, q = np.asarray(traj.tip), np.asarray(traj.q)
    lam_n, lam_t = np.asarray(traj.normal_force), np.asarray(traj.tangent_force)
    out = {
        "status": Status(status).label,
        "formulation": options.formulation,
        "t_final_s": float(t[-1]),
        "dt_s": options.dt,
        "steps": options.n_steps,
        "contact_intervals": mode_intervals(t[:-1], mode, options.dt),
    }
    out.update({key: float(options.dt * np.sum(mode == m)) for m, key in enumerate(MODE_KEYS)})
    out.update({
        "peak_normal_force_N": float(lam_n.max()),
        "peak_tangential_force_N": float(np.abs(lam_t).max()),
        "max_separation_m": float(max(tip[:, 1].max(), 0.0)),
        "tip_travel_m": float(tip[-1, 0] - tip[0, 0]),
        "tip_range_m": float(tip[:, 0].max() - tip[:, 0].min()),
        "base_displacement_m": float(np.linalg.norm(q[-1, :2] - q[0, :2])),
        "base_rotation_deg": float(np.rad2deg(q[-1, 2] - q[0, 2])),
        "final_joint_angles_deg": np.rad2deg(q[-1, 3:]).tolist(),
        "lcp_max_pivots": int(np.max(traj.lcp_pivots)),
        "lcp_failures": int(np.sum(~np.asarray(traj.lcp_converged) | ~np.asarray(traj.impact_converged))),
    })
    out.update(contact_checks(options, traj, singular_manipulability))
    out.update(momentum_balance(arm, traj, options.dt))
    return out


def write(arm: PlanarArm, traj: ContactTrajectory, mu, out: Path) -> None:
    t, q, tip = np.asarray(traj.t), np.asarray(traj.q), np.asarray(traj.tip)
    ts = t[:-1]
    lam_n, lam_t, mode = np.asarray(traj.normal_force), np.asarray(traj.tangent_force), np.asarray(traj.mode)
    names = ("x0_m", "y0_m", "theta0_rad", "theta1_rad", "theta2_rad", "theta3_rad")
    columns = {"t_s": t}
    columns.update({f"q_{n}": q[:, i] for i, n in enumerate(names)})
    columns.update({f"u_{n}_s": np.asarray(traj.u)[:, i] for i, n in enumerate(names)})
    columns.update({"tip_x_m": tip[:, 0], "tip_y_m": tip[:, 1], "penetration_m": np.maximum(-tip[:, 1], 0.0)})
    write_timeseries(out, columns, "states")
    impulse = np.asarray(traj.impact_impulse)
    steps = {"t_s": ts, "normal_force_N": lam_n, "tangential_force_N": lam_t, "mode": mode,
             "impact_normal_impulse_N_s": impulse[:, 1], "impact_tangential_impulse_N_s": impulse[:, 0],
             "closing_speed_m_s": np.asarray(traj.closing_speed), "manipulability_m2": np.asarray(traj.manipulability),
             "lcp_pivots": np.asarray(traj.lcp_pivots)}
    steps.update({key: np.asarray(traj.inputs)[:, i] for i, key in enumerate(PROFILE_KEYS)})
    write_timeseries(out, steps, "steps")
    deg = np.rad2deg(q)
    case = f"unilateral contact of the planar arm's tip (mu = {float(mu):g})"
    plot_panels(out / "joint_angles.png", t, [
        ("joint angle [deg]", {f"joint {j}": deg[:, 2 + j] for j in (1, 2, 3)}),
        ("base position [m]", {"x": q[:, 0], "y - y(0)": q[:, 1] - q[0, 1]}),
        ("base angle [deg]", {"base angle": deg[:, 2]}),
    ], title=f"{case}: joint angles and base motion")
    friction_limit = float(mu) * lam_n
    plot_figure(out / "contact_forces.png", Figure(
        f"{case}: tip forces and contact mode", (
            Panel("normal force [N]", (Series("normal force lambda_N", lam_n),)),
            Panel("tangential force [N]", (Series("friction force lambda_T", lam_t),
                                           Series("friction limit +mu lambda_N", friction_limit),
                                           Series("friction limit -mu lambda_N", -friction_limit))),
            Panel("contact mode", (Series("mode", mode, style="step"),), categories=dict(enumerate(MODE_LABELS))),
            Panel("tip x - x(0) [m]", (Series("tip travel along the plane", tip[:-1, 0] - tip[0, 0]),)),
            Panel("tip gap y [mm]", (Series("tip height above the plane", 1e3 * tip[:-1, 1]),))), ts))
    inputs = np.asarray(traj.inputs)
    plot_panels(out / "inputs.png", ts, [
        ("base force [N]", {name_and_unit(key)[0]: inputs[:, i] for i, key in enumerate(PROFILE_KEYS[:2])}),
        ("base torque [N m]", {name_and_unit(PROFILE_KEYS[2])[0]: inputs[:, 2]}),
        ("joint torque [N m]", {name_and_unit(key)[0]: inputs[:, i] for i, key in enumerate(PROFILE_KEYS[3:], 3)}),
    ], title=f"{case}: the controller's base force and torques")
    plot_configurations(arm, traj, out / "configurations.png")


def plot_configurations(arm: PlanarArm, traj: ContactTrajectory, path: Path, snapshots: int = 6) -> Path:
    """Arm snapshots, base centre path and tip path over the plane (paper Fig. 9)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    q, t = np.asarray(traj.q), np.asarray(traj.t)
    picks = np.linspace(0, len(t) - 1, snapshots).astype(int)
    points = np.asarray(_along(arm, traj.q, traj.u)[1])[picks]
    tip = np.asarray(traj.tip)
    fig, (ax, zoom) = plt.subplots(1, 2, figsize=(10, 4.5), gridspec_kw={"width_ratios": [1.2, 1]})
    colors = plt.cm.viridis(np.linspace(0, 1, snapshots))
    for k, pts in enumerate(points):
        ax.plot(pts[1:, 0], pts[1:, 1], "-o", color=colors[k], ms=3, label=f"t = {t[picks[k]]:.2f} s")
        ax.plot([pts[0, 0], pts[1, 0]], [pts[0, 1], pts[1, 1]], ":", color=colors[k])
        ax.plot(pts[0, 0], pts[0, 1], "s", color=colors[k], ms=8)
    ax.plot(q[:, 0], q[:, 1], "k-", lw=1, label="base centre path")
    ax.axhline(0.0, color="0.3", lw=2)
    ax.set_aspect("equal")
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.legend(fontsize=7)
    modes = np.asarray(traj.mode)
    for m, label in enumerate(MODE_LABELS):
        sel = np.concatenate([modes == m, [False]])
        zoom.plot(tip[sel, 0], tip[sel, 1] * 1e3, ".", ms=3, label=label)
    zoom.set_xlabel("tip x [m]")
    zoom.set_ylabel("tip y (gap) [mm]")
    zoom.set_title("tip path by contact mode")
    zoom.legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


__all__ = ["MODE_KEYS", "contact_checks", "mode_intervals", "momentum_balance", "plot_configurations", "summary",
           "write"]
