r"""Deployment reports: the vibration metrics (pure, shared by ``metrics`` and ``summary``), summary, time
series, plots (end angular acceleration, joint reactions, energy, the deformed mast) and diagnosis.

Definitions (``alpha(t)``: the last module's absolute angular acceleration about the joint axis ``z``;
``t_e``: end of the motion):

* ``peak_end_angular_acceleration_deg_s2 = max |alpha|`` over the run;
* ``residual_vibration_peak_deg_s2 = max_{t > t_e} |alpha|`` and ``residual_vibration_rms_deg_s2`` its RMS
  over ``(t_e, t_end]`` (after the motion the drive is at rest, so absolute = relative acceleration);
* ``settling_time_s``: from ``t_e`` to the last sample with ``|alpha| > 2 %`` of the residual peak; NaN
  (``None`` in ``summary.json``, status ``not_settled``) if that sample is the last one of the run;
* ``peak_joint_torque_N_m = max |tau|`` (drive torque about ``z``), ``peak_joint_force_N = max |F|`` (force the
  rover exerts on the first module), ``constraint_drift_max_m`` (:meth:`.model.Mast.drift`),
  ``energy_residual_J`` (:mod:`.simulation`, largest over the stored frames).
"""

from __future__ import annotations

from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ...bodies import natural
from ...io.results import plot_panels, write_timeseries
from ...core.status import Status
from .model import reference_coordinates
from .simulation import Outcome

SETTLE_FRACTION = 0.02


def frame_indices(outcome: Outcome):
    """Step index of every stored frame (frames lie on the step grid)."""
    return jnp.round(outcome.frame_t / (outcome.t[1] - outcome.t[0])).astype(jnp.int32)


def vibration_metrics(outcome: Outcome) -> dict:
    """The scalar results of the module docstring (JAX scalars; pure, differentiable where defined)."""
    deg = jnp.rad2deg
    alpha = jnp.abs(outcome.end_acceleration)
    after = outcome.t > outcome.motion_end
    residual = jnp.where(after, alpha, 0.0)
    peak = jnp.max(residual)
    count = jnp.maximum(jnp.sum(after), 1)
    rms = jnp.sqrt(jnp.sum(residual**2) / count)
    exceed = residual > SETTLE_FRACTION * peak
    last = jnp.max(jnp.where(exceed, jnp.arange(alpha.shape[0]), 0))
    settled = last < alpha.shape[0] - 1
    settling = jnp.where(settled, outcome.t[last] - outcome.motion_end, jnp.nan)
    frames = frame_indices(outcome)
    balance = outcome.kinetic + outcome.internal_work[frames] - outcome.drive_work[frames]
    return {
        "peak_end_angular_acceleration_deg_s2": deg(jnp.max(alpha)),
        "residual_vibration_peak_deg_s2": deg(peak),
        "residual_vibration_rms_deg_s2": deg(rms),
        "settling_time_s": jax.lax.stop_gradient(settling),
        "peak_joint_torque_N_m": jnp.max(jnp.abs(outcome.drive_torque)),
        "peak_joint_force_N": jnp.max(jnp.linalg.norm(outcome.joint_force, axis=1)),
        "constraint_drift_max_m": jnp.max(outcome.drift),
        "energy_residual_J": jnp.max(jnp.abs(balance)),
    }


def _finite_or_none(x) -> float | None:
    x = float(x)
    return x if np.isfinite(x) else None


SUMMARY_KEYS = ("peak_end_angular_acceleration_deg_s2", "residual_vibration_peak_deg_s2",
                "residual_vibration_rms_deg_s2", "settling_time_s", "peak_joint_torque_N_m", "peak_joint_force_N",
                "constraint_drift_max_m", "energy_residual_J")


def summary(scenario, outcome: Outcome) -> dict:
    values = jax.jit(vibration_metrics)(outcome)
    metrics = {k: _finite_or_none(values[k]) for k in SUMMARY_KEYS}
    frames = np.asarray(frame_indices(outcome))
    loss = np.asarray(outcome.internal_work)[frames] - np.asarray(outcome.strain)
    return {
        "status": Status(int(outcome.status)).label,
        "scheme": scenario.n_modules - 1,
        "interface_model": scenario.interface_model,
        "drive_law": scenario.law,
        **metrics,
        "motion_end_s": float(outcome.motion_end),
        "simulated_time_s": float(outcome.t[-1]),
        "steps": int(outcome.t.shape[0] - 1),
        "step_s": float(outcome.t[1] - outcome.t[0]),
        "drive_work_J": float(outcome.drive_work[-1]),
        "damping_loss_J": float(loss[-1]),
        "final_vibration_energy_J": float(outcome.kinetic[-1] + outcome.strain[-1]),
        "max_newton_error": float(np.max(outcome.newton_error)),
        # shells only: the largest principal strain at a face, the largest axial compression of a mid-surface
        # and the knocked-down buckling strain of the thin tube (status buckling_risk beyond it)
        "peak_surface_strain_percent": _finite_or_none(100.0 * outcome.peak_strain),
        "peak_axial_compression_percent": _finite_or_none(100.0 * outcome.axial_compression),
        "buckling_strain_percent": _finite_or_none(100.0 * outcome.buckling_strain),
    }


def _columns(outcome: Outcome) -> dict:
    deg = np.rad2deg
    alpha = np.asarray(outcome.end_acceleration)
    force = np.asarray(outcome.joint_force)
    return {
        "t_s": np.asarray(outcome.t),
        "theta_deg": deg(np.asarray(outcome.theta)),
        "theta_acceleration_deg_s2": deg(np.asarray(outcome.theta_acceleration)),
        "end_angular_rate_deg_s": deg(np.asarray(outcome.end_rate)),
        "end_angular_acceleration_deg_s2": deg(alpha),
        "end_relative_angular_acceleration_deg_s2": deg(alpha - np.asarray(outcome.theta_acceleration)),
        "joint_force_N": np.linalg.norm(force, axis=1),
        **{f"joint_force_{a}_N": force[:, k] for k, a in enumerate("xyz")},
        "drive_torque_N_m": np.asarray(outcome.drive_torque),
        "drive_work_J": np.asarray(outcome.drive_work),
        "internal_work_J": np.asarray(outcome.internal_work),
        "constraint_drift_m": np.asarray(outcome.drift),
    }


def write(scenario, outcome: Outcome, out: Path) -> None:
    """``timeseries.csv/.npz`` (steps), ``energy.csv/.npz`` (frames) and the four plots."""
    c = _columns(outcome)
    write_timeseries(out, c)
    frames = np.asarray(frame_indices(outcome))
    kinetic, strain = np.asarray(outcome.kinetic), np.asarray(outcome.strain)
    energy = {"t_s": np.asarray(outcome.frame_t), "kinetic_J": kinetic, "strain_J": strain,
              "damping_loss_J": c["internal_work_J"][frames] - strain, "drive_work_J": c["drive_work_J"][frames]}
    energy["energy_residual_J"] = kinetic + strain + energy["damping_loss_J"] - energy["drive_work_J"]
    write_timeseries(out, energy, name="energy")
    t = c["t_s"]
    case = (f"deployment, scheme {scenario.n_modules - 1} ({scenario.n_modules} modules, {scenario.interface_model} "
            f"interfaces), {scenario.law} drive")
    events = ((float(outcome.motion_end), "drive stops"),)
    plot_panels(out / "angular_acceleration.png", t, [
        ("angular acceleration [deg/s²]", {"end module": c["end_angular_acceleration_deg_s2"],
                                           "drive (first module)": c["theta_acceleration_deg_s2"]}),
        ("end relative to drive [deg/s²]", {"end module - drive": c["end_relative_angular_acceleration_deg_s2"]}),
    ], title=f"{case}: angular acceleration of the end module (residual vibration after the drive stops)",
        events=events)
    plot_panels(out / "joint_reactions.png", t, [
        ("drive joint force [N]", {"magnitude": c["joint_force_N"], **{a: c[f"joint_force_{a}_N"] for a in "xy"}}),
        ("drive torque [N m]", {"drive torque": c["drive_torque_N_m"]}),
    ], title=f"{case}: reaction force and torque at the driven joint (rover on the first module)", events=events)
    plot_panels(out / "energy.png", energy["t_s"], [
        ("energy [J]", {k.replace("_", " "): energy[k + "_J"] for k in ("kinetic", "strain", "damping_loss",
                                                                         "drive_work")}),
        ("balance residual [J]", {"kinetic + strain + damping loss - drive work": energy["energy_residual_J"]}),
    ], title=f"{case}: energy balance", events=events)
    worst = int(np.argmax(strain))
    plot_deformed(scenario, outcome, worst, out / "deformed_mast.png")


def _outlines(scenario, y):
    """Top-view outlines of the modules and lines of the interfaces (tube generators or beam axes) at ``y``."""
    mast = scenario.mast(scenario.params)
    modules = mast.module_coordinates(y)
    half = 0.5 * scenario.params.mast.edge
    corners = jnp.array([[1, 1, 0], [-1, 1, 0], [-1, -1, 0], [1, -1, 0], [1, 1, 0]]) * half
    boxes = jax.vmap(lambda body: jax.vmap(lambda c: natural.point(body, c))(corners))(modules)
    if mast.shell is not None:  # generators of the tubes: (interface, circumferential, axial, xyz)
        nodes = mast.shell_coordinates(y)[:, :, 0].reshape(mast.n_interfaces, mast.n_axial + 1, mast.n_circ, 3)
        lines = jnp.swapaxes(nodes, 1, 2).reshape(-1, mast.n_axial + 1, 3)
    else:  # beam axes: face centre to face centre
        frames = mast.face_frames(y)
        lines = jnp.stack([frames[1], frames[3]], axis=1)
    return boxes, lines


def plot_deformed(scenario, outcome: Outcome, frame: int, path: Path) -> None:
    """Top view of the mast at ``frame``: the rigidly turned reference (grey) and the deformed mast with its
    elastic displacement magnified so that the largest one draws as 1/4 of a module edge."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    y = outcome.frame_y[frame]
    mast = scenario.mast(scenario.params)
    turned = eqx.filter_jit(_rigid_reference)(mast, outcome.frame_t[frame])
    rigid = eqx.filter_jit(_outlines)(scenario, turned)
    actual = eqx.filter_jit(_outlines)(scenario, y)
    largest = max(float(np.max(np.abs(np.asarray(a) - np.asarray(r)))) for a, r in zip(actual, rigid))
    scale = 0.25 * float(scenario.params.mast.edge) / max(largest, 1e-300)
    fig, ax = plt.subplots(figsize=(6.5, 6.5))
    for shapes, style, label in ((rigid, dict(color="0.7", lw=1.0), "rigid"), (actual, dict(color="C0", lw=1.4),
                                                                               f"deformed x {scale:.3g}")):
        boxes, nodes = (np.asarray(s) for s in shapes)
        if shapes is actual:
            boxes = np.asarray(rigid[0]) + scale * (boxes - np.asarray(rigid[0]))
            nodes = np.asarray(rigid[1]) + scale * (nodes - np.asarray(rigid[1]))
        for k, box in enumerate(boxes):
            ax.plot(box[:, 0], box[:, 1], label=label if k == 0 else None, **style)
        for line in nodes:
            ax.plot(line[:, 0], line[:, 1], "-", lw=0.6, color=style["color"])
    ax.plot([0.0], [0.0], "k^", ms=8, label="drive joint")
    ax.set_aspect("equal")
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.set_title(f"largest strain energy, t = {float(outcome.frame_t[frame]):.3f} s "
                 f"(U = {float(outcome.strain[frame]):.3g} J)")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _rigid_reference(mast, t):
    """Reference coordinates turned rigidly about ``z`` by the drive's progress ``theta(t) - theta(0)``."""
    y0 = reference_coordinates(mast)
    turn = mast.drive.angle(t) - mast.drive.angle(0.0)
    c, s = jnp.cos(turn), jnp.sin(turn)
    rot = jnp.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    return (y0.reshape(-1, 3) @ rot.T).reshape(-1)


def diagnose(scenario, outcome: Outcome) -> str:
    """One line naming what failed and when."""
    status = int(outcome.status)
    t = np.asarray(outcome.t)
    if status == Status.NON_FINITE:
        bad = ~np.isfinite(np.asarray(outcome.end_acceleration))
        when = f"t = {t[np.argmax(bad)]:.4g} s" if bad.any() else "the stored states"
        return f"phase 'deployment': non-finite state at {when} (reduce simulation.step_s)"
    if status == Status.NOT_CONVERGED:
        k = int(np.argmax(np.asarray(outcome.newton_error)))
        return (f"phase 'deployment': the generalized-alpha Newton iteration did not converge (relative error "
                f"{float(outcome.newton_error[k]):.2g} at t = {t[k]:.4g} s, drift "
                f"{float(np.max(outcome.drift)):.2g} m); raise simulation.newton_iterations or reduce step_s")
    if status == Status.NOT_SETTLED:
        return (f"phase 'settling': the residual vibration was still above {SETTLE_FRACTION:.0%} of its peak at the "
                f"end (t = {t[-1]:.4g} s); raise simulation.settle_s")
    return Status(status).description


__all__ = ["SETTLE_FRACTION", "diagnose", "frame_indices", "plot_deformed", "summary", "vibration_metrics", "write"]
