"""Ejection reports: the summary (SI, unit-suffixed keys), time series and plot, failure diagnosis."""

from __future__ import annotations

from pathlib import Path

import jax
import numpy as np

from ...core.dynamics import momentum
from ...io.results import Figure, Panel, Series, plot_figure, write_timeseries
from ...core.status import Status
from ..robot_config import joint_column, joint_columns, joint_panels, joint_scales
from .model import RAIL


def _float_or_none(x) -> float | None:
    x = float(x)
    return x if np.isfinite(x) else None


def summary(scenario, outcome) -> dict:
    """Stable quantities are ``None`` when the arm did not settle (never the values of a slipping arm)."""
    deg = np.rad2deg
    stable = bool(outcome.stable)
    omega = np.asarray(outcome.stable_angular_velocity)
    residual = float(outcome.spring_energy - outcome.kinetic_energy_final - outcome.friction_loss - outcome.stop_loss)
    out = {
        "status": Status(int(outcome.status)).label,
        "mode": scenario.mode,
        "friction_model": scenario.friction_model,
        "free_joints": [j + 1 for j in scenario.free],
        "equivalent_mass_kg": float(outcome.equivalent_mass),
        "equivalent_mass_space_frictionless_kg": float(outcome.equivalent_mass_space_frictionless),
        "equivalent_mass_plane_frictionless_kg": float(outcome.equivalent_mass_plane_frictionless),
        "separation_time_s": _float_or_none(outcome.separation_time),
        "separation_velocity_m_s": _float_or_none(outcome.separation_velocity),
        "stable": stable,
        "stable_time_s": _float_or_none(outcome.stable_time),
        "stable_velocity_m_s": _float_or_none(outcome.stable_velocity),
        "stable_angular_velocity_deg_s": float(deg(np.linalg.norm(omega))) if stable else None,
        "stable_angular_velocity_vector_deg_s": deg(omega).tolist() if stable else None,
        "spring_energy_J": float(outcome.spring_energy),
        "kinetic_energy_final_J": float(outcome.kinetic_energy_final),
        "friction_loss_J": float(outcome.friction_loss),
        "stop_impact_loss_J": float(outcome.stop_loss),
        "energy_residual_J": residual,
    }
    out.update(_joint_changes(scenario, outcome))
    crossings = np.asarray(outcome.limit_crossing_time)
    if scenario.limits == "flag":
        out["limit_crossings"] = {f"joint{j + 1}": float(t) for j, t in zip(scenario.free, crossings) if np.isfinite(t)}
    if outcome.paper is not None:
        out["paper_method"] = _paper_comparison(outcome.paper.summary(), out)
    return out


def _joint_changes(scenario, outcome) -> dict:
    """Each free joint's change at separation and at the end, in its config unit (degrees or metres)."""
    robot, scale = scenario.robot, joint_scales(scenario.robot)
    at_separation, final = np.asarray(outcome.joint_change_at_separation), np.asarray(outcome.joint_change_final)
    out = {}
    for k, j in enumerate(scenario.free):
        out[joint_column(robot, j, "_change_at_separation")] = _float_or_none(at_separation[k] / scale[j])
        out[joint_column(robot, j, "_change_final")] = float(final[k] / scale[j])
    return out


def _paper_comparison(paper: dict, full: dict) -> dict:
    """The paper's recursion on the same case and its relative difference to the full model."""
    diff = {}
    for key, value in paper.items():
        ref = full.get(key)
        if isinstance(value, float) and isinstance(ref, float) and ref != 0:
            diff[key] = (value - ref) / abs(ref)
    return {"results": paper, "relative_difference_to_full": diff}


def _title(scenario) -> str:
    attitude = np.asarray(scenario.params.attitude) / joint_scales(scenario.robot)  # config units
    free = ", ".join(str(j + 1) for j in scenario.free)
    return (f"ejection, {scenario.mode} mode, attitude [{', '.join(f'{a:.0f}' for a in attitude)}] (deg/m), "
            f"joints {free} free, {scenario.friction_model} friction")


def _events(outcome) -> tuple:
    return tuple((float(t), label) for t, label in ((outcome.separation_time, "separation"),
                                                    (outcome.stable_time, "stable")) if np.isfinite(float(t)))


def write(scenario, outcome, out: Path) -> None:
    """Time series (base travel/velocity, CoM speed, joint angles, angular rate, friction loss) and
    ``ejection.png`` (title naming the case, separation and stable-time markers, the stable CoM velocity)."""
    sol = outcome.solution
    q, v, loss = (np.asarray(x) for x in (sol.ys.q, sol.ys.v, sol.ys.dissipated))
    ts = np.asarray(sol.ts)
    axis = np.asarray(scenario.rail_axis) / np.linalg.norm(scenario.rail_axis)
    free = scenario.free
    robot = scenario.model_of(scenario.params)[0].robot
    com_velocity = np.asarray(jax.vmap(lambda qq, vv: momentum(robot, qq, vv)[0])(sol.ys.q, sol.ys.v))
    columns = {"t_s": ts, "base_travel_m": q[:, :3] @ axis, "base_velocity_m_s": v[:, :3] @ axis,
               "com_speed_m_s": np.linalg.norm(com_velocity, axis=1) / float(robot.total_mass)}
    joints = joint_columns(scenario.robot, q[:, 7:], free)
    columns.update(joints)
    columns.update({f"base_omega_{a}_deg_s": np.rad2deg(v[:, 3 + i]) for i, a in enumerate("xyz")})
    columns["friction_loss_J"] = loss
    columns["stop_impact_loss_J"] = np.asarray(sol.ys.stop_loss)
    write_timeseries(out, columns)
    stable = float(outcome.stable_velocity)
    velocity = Panel("velocity [m/s]", (Series("base, along the rail", columns["base_velocity_m_s"]),
                                        Series("arm's centre of mass (speed)", columns["com_speed_m_s"])),
                     ((stable, f"stable CoM velocity {stable:.4g} m/s"),) if np.isfinite(stable) else ())
    panels = [velocity] + [Panel(label, tuple(Series(k, y) for k, y in curves.items()))
                           for label, curves in joint_panels(scenario.robot, joints, free)]
    panels.append(Panel("base angular rate [deg/s]", tuple(Series(f"about {a}", columns[f"base_omega_{a}_deg_s"])
                                                           for a in "xyz")))
    plot_figure(out / "ejection.png", Figure(_title(scenario), tuple(panels), ts, events=_events(outcome)))


def diagnose(scenario, outcome) -> str:
    """One line naming the phase (rail or flight) and the time where the run failed."""
    sol = outcome.solution
    status = int(outcome.status)
    phase = "rail" if float(sol.final_mode.phase) == RAIL else "flight"
    events = np.asarray(sol.segment_event)
    t_last = float(np.asarray(sol.segment_end)[events].max()) if events.any() else 0.0
    if status == Status.SOLVER_FAILURE:
        return (f"phase '{phase}': the ODE solver failed after t = {t_last:.4g} s (simulation.max_steps = "
                f"{scenario.solver.max_steps} reached, or the step size collapsed)")
    if status == Status.EVENT_BUDGET:
        return (f"phase '{phase}': more stick/slip events than simulation.max_segments = "
                f"{scenario.solver.max_segments} by t = {t_last:.4g} s; raise it")
    if status == Status.NO_EVENT:
        return (f"phase 'rail': separation not reached within simulation.t_final_s = "
                f"{float(scenario.t_final):g} s")
    return Status(status).description
