"""Capture reports: summary dict, per-sample observables, time-series files and plots, failure diagnosis."""

from __future__ import annotations

from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ...core.dynamics import frame_jacobian, inverse_dynamics, momentum
from ...io.results import plot_panels, write_timeseries
from ...io.units import key_suffix, to_si
from ...core.spatial import quat_to_rotation
from ...core.status import Status
from .model import PHASE_NAMES, ContactMode


@eqx.filter_jit
def _observe(case, ys, phase, v0):
    """Per saved time: indentation, its rate, force, holding torques of the held joints, velocities (world).

    Merged held joints: the holding torques are the held rows of ``H a + b - J^T f`` of the full robot with
    the held joints at rest (exact: the merged robot has the same motion)."""
    model = case.model
    held = jnp.asarray(case.held, dtype=int)
    free = jnp.asarray([j for j in range(case.robot.n_joints) if j not in case.held], dtype=int)

    def one(y, ph, speed):
        mode = eqx.tree_at(lambda m: (m.phase, m.impact_speed), ContactMode.initial(), (ph, speed))
        dy, c, accel, constraint = model.dynamics(y, mode)
        f = dy[6][0]
        q, v, x, quat, vel, omega, _ = y
        if case.merged:
            n = case.robot.n_joints
            q_full = jnp.concatenate([q[:7], case.angles.at[free].set(q[7:])])
            v_full = jnp.concatenate([v[:6], jnp.zeros(n).at[free].set(v[6:])])
            a_full = jnp.concatenate([accel[:6], jnp.zeros(n).at[free].set(accel[6:])])
            jac = frame_jacobian(case.robot, q_full, model.robot.frame_names[model.tip])[:3]
            holding = (inverse_dynamics(case.robot, q_full, v_full, a_full) - jac.T @ (f * c["normal"]))[6:][held]
        else:
            holding = constraint[6:][held]
        rb = quat_to_rotation(q[3:7])
        return dict(delta=c["delta"], delta_dot=c["delta_dot"], force=f, holding=holding,
                    base_v=rb @ v[:3], base_w=rb @ v[3:6], target_v=vel, target_w=quat_to_rotation(quat) @ omega)

    return jax.vmap(one)(ys, phase, v0)


def _grid_modes(sol, ts):
    """Phase and impact speed at each saved time from the segment log (segment i covers [end_{i-1}, end_i))."""
    ends = np.asarray(sol.segment_end)
    k = np.clip(np.searchsorted(ends, np.asarray(ts), side="right"), 0, len(ends) - 1)
    return np.asarray(sol.segment_mode_before.phase)[k], np.asarray(sol.segment_mode_before.impact_speed)[k]


def _observations(case, sol) -> tuple[np.ndarray, dict]:
    ts = np.asarray(sol.ts)
    phase, v0 = _grid_modes(sol, ts)
    obs = _observe(case, sol.ys, jnp.asarray(phase), jnp.asarray(v0))
    return phase, {k: np.asarray(a) for k, a in obs.items()}


def summary(case, result) -> dict:
    """JSON-ready summary (SI, unit suffixes). Post-impact quantities are taken at the first release;
    holding torques and the maximum indentation on the output grid (not at the exact maximum)."""
    out = _summary(case, result)
    _, obs = _observations(case, result.solution)
    if case.held:
        out["max_holding_torque_N_m"] = {f"joint{j + 1}": float(np.max(np.abs(obs["holding"][:, k])))
                                         for k, j in enumerate(case.held)}
    out["max_indentation_m"] = float(np.max(obs["delta"])) if int(result.contacts) > 0 else None
    out["solver_steps"] = int(result.solution.num_steps)
    return out


def _summary(case, result) -> dict:
    model = case.model
    q, v, x, quat, vel, omega, _ = (np.asarray(a) for a in result.y_release)
    rb, rt = np.asarray(quat_to_rotation(jnp.asarray(q[3:7]))), np.asarray(quat_to_rotation(jnp.asarray(quat)))
    p0, l0 = (np.asarray(a) for a in result.momentum_before)
    p1, l1 = (np.asarray(a) for a in result.momentum_after)
    planar = float(model.planar) > 0.5
    if planar:  # the air table reacts out of the plane: only in-plane p and the normal part of L are conserved
        nrm = np.asarray(model.plane_normal)
        p0, p1 = p0 - (p0 @ nrm) * nrm, p1 - (p1 @ nrm) * nrm
        l0, l1 = (l0 @ nrm) * nrm, (l1 @ nrm) * nrm
    e0, e1, loss = float(result.energy_before), float(result.energy_after), float(result.damping_loss)
    law = model.law
    delta_r = max(float(result.release_delta), 0.0)  # > 0 only after a force release
    elastic_left = float(law.elastic_force(delta_r)) * delta_r / (float(law.exponent) + 1)
    free = [j for j in range(case.robot.n_joints) if j not in case.held]
    rates = v[6:] if case.merged else v[6:][free]
    deg = np.rad2deg
    return {
        "status": Status(int(result.status)).label,
        "outcome": case.outcome_label(result),
        "peak_force_N": float(result.peak_force),
        "impulse_N_s": float(result.impulse),
        "contact_duration_s": float(result.duration),
        "contact_start_time_s": float(result.first_touch),
        "release_time_s": float(result.release_time),
        "closing_speed_m_s": float(result.closing_speed),
        "separation_speed_m_s": float(result.separation_speed),
        "normal_restitution": float(result.separation_speed / result.closing_speed),
        "contacts": int(result.contacts),
        "post_arm_com_velocity_m_s": (np.asarray(momentum(model.robot, jnp.asarray(q), jnp.asarray(v))[0])
                                      / float(model.robot.total_mass)).tolist(),
        "post_base_velocity_m_s": (rb @ v[:3]).tolist(),
        "post_base_angular_velocity_deg_s": deg(rb @ v[3:6]).tolist(),
        "post_target_velocity_m_s": vel.tolist(),
        "post_target_angular_velocity_deg_s": deg(rt @ omega).tolist(),
        "post_joint_rates_deg_s": {f"joint{j + 1}": float(deg(r)) for j, r in zip(free, rates)},
        "linear_momentum_before_N_s": p0.tolist(),
        "linear_momentum_after_N_s": p1.tolist(),
        "linear_momentum_relative_change": float(np.linalg.norm(p1 - p0) / np.linalg.norm(p0)),
        "angular_momentum_before_N_m_s": l0.tolist(),
        "angular_momentum_after_N_m_s": l1.tolist(),
        # |dL| / max(|L0|, |p0| * 1 m): L about the world origin may vanish for a motion through it
        "angular_momentum_relative_change": float(np.linalg.norm(l1 - l0)
                                                  / max(np.linalg.norm(l0), np.linalg.norm(p0))),
        "kinetic_energy_before_J": e0,
        "kinetic_energy_after_J": e1,
        "damping_loss_J": loss,
        "energy_balance_error_J": e0 - e1 - loss - elastic_left,
        "stiffness_N_m_n": float(law.stiffness),
        "exponent": float(law.exponent),
        "damping_chi": float(law.chi),
        "free_joints": [j + 1 for j in free],
        "base_motion": "planar" if planar else "free",
    }




def write(case, result, out: Path) -> None:
    """Time series on the output grid (``timeseries.csv``/``.npz``) and three plots."""
    sol = result.solution
    ts = np.asarray(sol.ts)
    phase, obs = _observations(case, sol)
    held = case.held
    columns = {"t_s": ts, "phase": phase, "indentation_m": obs["delta"], "indentation_rate_m_s": obs["delta_dot"],
               "force_N": obs["force"]}
    for name in ("base_v", "base_w", "target_v", "target_w"):
        unit = "m/s" if name.endswith("_v") else "deg/s"
        scale = 1.0 / to_si(unit)  # from SI
        columns.update({f"{name}_{a}{key_suffix(unit)}": scale * obs[name][:, i] for i, a in enumerate("xyz")})
    for k, j in enumerate(held):
        columns[f"holding_joint{j + 1}_N_m"] = obs["holding"][:, k]
    write_timeseries(out, columns)
    t0, t1 = float(result.first_touch), float(result.release_time)
    events = tuple((t, label) for t, label in ((t0, "first touch"), (t1, "release")) if np.isfinite(t) and t >= 0)
    pad = 0.5 * (t1 - t0) if np.isfinite(t1 - t0) and t1 > t0 else None
    plot_panels(out / "force_time.png", ts, [
        ("contact force [N]", {"contact force": obs["force"]}),
        ("indentation [mm]", {"indentation": 1e3 * obs["delta"]}),
    ], title=f"capture: contact force over the contact ({1e3 * (t1 - t0):.3g} ms) at "
             f"{float(result.closing_speed):.3g} m/s closing speed", events=events,
        xlim=(t0 - pad, t1 + pad) if pad else None)
    window = (ts >= t0 - 0.1 * (t1 - t0)) & (ts <= t1 + 0.1 * (t1 - t0))
    if window.sum() >= 2:
        plot_panels(out / "force_contact.png", 1e3 * (ts[window] - t0), [
            ("contact force [N]", {"contact force": obs["force"][window]}),
            ("indentation [mm]", {"indentation": 1e3 * obs["delta"][window]}),
        ], xlabel="time since first touch [ms]", title="capture: the contact, from first touch")
    plot_panels(out / "velocities.png", ts, [
        ("base velocity [m/s]", {f"base {a}": columns[f"base_v_{a}_m_s"] for a in "xyz"}),
        ("target velocity [m/s]", {f"target {a}": columns[f"target_v_{a}_m_s"] for a in "xyz"}),
        ("angular velocity [deg/s]", {**{f"base {a}": columns[f"base_w_{a}_deg_s"] for a in "xyz"},
                                      **{f"target {a}": columns[f"target_w_{a}_deg_s"] for a in "xyz"}}),
    ], title="capture: base and target velocities (world axes)", events=events)


def diagnose(case, result) -> str:
    """One line naming the phase where the run failed."""
    phase = PHASE_NAMES[int(result.final_phase)]
    status = int(result.status)
    t_final = float(case.t_final)
    if status == Status.SOLVER_FAILURE:
        return f"the ODE solver failed in phase '{phase}' (simulation.max_steps reached or the step size collapsed)"
    if status == Status.EVENT_BUDGET:
        return f"more contact events than simulation.max_segments = {case.solver.max_segments} (in phase '{phase}')"
    if status == Status.NO_EVENT:
        return f"the contact never separates: still in phase '{phase}' at simulation.t_final_s = {t_final:g} s"
    if status == Status.OUT_OF_RANGE and float(result.min_margin) >= 0:
        return ("target.mass_kg / target.inertia_kg_m2: not a physical rigid body (mass > 0, principal moments > 0, "
                "each at most the sum of the other two)")
    if status == Status.OUT_OF_RANGE:
        return (f"the contact point leaves the target surface (off the shaft / patch by {-float(result.min_margin):.3g} "
                "m); the infinite-surface contact model is not valid")
    return Status(status).description
