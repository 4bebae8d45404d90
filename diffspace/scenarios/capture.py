"""``diffspace run|optimize`` for the manipulator-capture scenario (SPEC 5.2 "Capture", issue 4).

The rod at the end of the reference arm hits a free-floating target (paper Table 4) in one simulation:
multibody arm + rigid target + compliant contact (:mod:`diffspace.scenarios.capture_model`).

Config::

    [robot]      path
    [arm]        attitude, joints ("held" | "free" | 1-based list of free joints), base ("free" | "planar"),
                 plane_normal (base frame, planar only), tip_frame, tip_radius_m
    [target]     mass_kg, com_m, inertia_kg_m2 = [Ixx, Iyy, Izz, Ixy, Iyz, Izx], product_convention,
                 surface ("shaft" | "plane"), surface_point_m, surface_direction, shaft_radius_m, extent_m,
                 aim_point_m ("central" | [x, y, z]), orientation ("rod_axis" | "arm_com_line" | [x, y, z, w])
    [capture]    approach_speed_m_s, approach_angles_deg = [along t1, along t2], initial_gap_m, moving
    [contact]    law, stiffness_source, stiffness_N_m_n, exponent, restitution_c, Hertz material data
    [simulation] t_final_s, rtol, atol, n_save, max_steps, max_segments
    [optimize]   see :mod:`diffspace.scenarios.capture_design`

Target placement: the target is turned so that the surface normal at the aim point faces the arm
(``orientation``) and placed so that the tip sphere is ``initial_gap_m`` from the surface along that normal.
The approach direction (relative velocity of the arm w.r.t. the target) is
``d = normalise(-n0 + tan(a1) t1 + tan(a2) t2)`` in the target frame, ``t1`` = shaft axis (shaft) or a
tangent (plane), ``t2 = n0 x t1``. ``moving = "arm"``: the whole arm translates rigidly with ``v d``, the
target is at rest; ``"target"``: the target moves with ``-v d``.

Table 4 products of inertia: the paper lists ``Ixy, Iyz, Izx = 0.00353, 0.02253, -0.08852`` without a sign
convention. ``product_convention = "tensor"`` (default) reads them as the off-diagonal entries of the
inertia tensor (URDF/ADAMS style, ``I[0,1] = Ixy``); ``"negated"`` reads them as the product integrals
``int x y dm`` (CAD style), whose tensor entries are their negatives. Both give a positive-definite tensor;
the principal moments differ by less than 0.1 %.
"""

from __future__ import annotations

import time
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ..config import ConfigError, Field, Schema
from ..contact import LAWS, ContactLaw, hertz_stiffness
from ..dynamics import BaseMotion, center_of_mass, frame_jacobian, frame_pose, inverse_dynamics
from ..output import plot_panels, print_summary, write_summary, write_timeseries
from ..robot import validate_mass_properties
from ..simulate import SolverFailure
from ..spatial import quat_to_rotation, rotation_to_quat
from .capture_design import DESIGN_SECTIONS, optimize  # noqa: F401  (CLI entry point)
from .capture_model import (
    PHASE_NAMES, SEPARATED, CaptureModel, CaptureResult, ContactMode, Surface, capture_result, reference_scales, simulate_capture,
)
from .common import ROBOT_FIELDS, joint_angles_from_config, robot_from_config

TABLE4_COM = [-0.040931, 0.00137, 0.342138]
TABLE4_INERTIA = [3.40766, 3.15477, 1.61416, 0.00353, 0.02253, -0.08852]


def _nonzero(v):
    return None if np.linalg.norm(v) > 0 else "must be non-zero"


def _joints_check(v):
    if v in ("held", "free") or (isinstance(v, list) and all(isinstance(j, int) and not isinstance(j, bool) for j in v)):
        return None
    return "expected 'held', 'free' or a list of 1-based joint indices (the free joints)"


def _aim_check(v):
    ok = v == "central" or (isinstance(v, list) and len(v) == 3 and all(isinstance(x, (int, float)) for x in v))
    return None if ok else "expected 'central' or [x, y, z] in metres (target frame)"


def _orientation_check(v):
    if v in ("rod_axis", "arm_com_line"):
        return None
    if isinstance(v, list) and len(v) == 4 and all(isinstance(x, (int, float)) for x in v) and np.linalg.norm(v) > 0:
        return None
    return "expected 'rod_axis', 'arm_com_line' or a non-zero quaternion [x, y, z, w] (target -> world)"


def _angles_check(v):
    return None if all(abs(a) < 89.0 for a in v) else "angles must lie in (-89, 89) degrees"


def schema() -> Schema:
    pos = dict(gt=0.0)
    return Schema({
        "robot": ROBOT_FIELDS,
        "arm": {
            "attitude": Field("any", "attitude_1", help="named attitude or joint angles [deg]"),
            "joints": Field("any", "held", check=_joints_check),
            "hold_method": Field("str", "merge", choices=("merge", "mask"),
                                 help="held joints: merged into rigid links (fast) or masked constraints"),
            "base": Field("str", "free", choices=("free", "planar")),
            "plane_normal": Field("floats", [0.0, 1.0, 0.0], length=3, check=_nonzero),
            "tip_frame": Field("str", "rod_tip"),
            "tip_radius_m": Field("float", 0.015, **pos),
        },
        "target": {
            "mass_kg": Field("float", 41.7, **pos),
            "com_m": Field("floats", TABLE4_COM, length=3),
            "inertia_kg_m2": Field("floats", TABLE4_INERTIA, length=6),
            "product_convention": Field("str", "tensor", choices=("tensor", "negated")),
            "surface": Field("str", "shaft", choices=("shaft", "plane")),
            "surface_point_m": Field("floats", [0.0, 0.0, 0.0], length=3),
            "surface_direction": Field("floats", [0.0, 0.0, -1.0], length=3, check=_nonzero),
            "shaft_radius_m": Field("float", 0.03, **pos),
            "extent_m": Field("float", 0.15, **pos, help="shaft length or plane patch radius"),
            "aim_point_m": Field("any", [0.03, 0.0, -0.1], check=_aim_check),
            "orientation": Field("any", "rod_axis", check=_orientation_check),
        },
        "capture": {
            "approach_speed_m_s": Field("float", 0.05, **pos),
            "approach_angles_deg": Field("floats", [0.0, 0.0], length=2, check=_angles_check),
            "initial_gap_m": Field("float", 0.005, **pos),
            "moving": Field("str", "arm", choices=("arm", "target")),
        },
        "contact": {
            "law": Field("str", "zhiying_qishao", choices=LAWS),
            "stiffness_source": Field("str", "value", choices=("value", "hertz")),
            "stiffness_N_m_n": Field("float", 1.402e7, **pos),
            "exponent": Field("float", 1.5, gt=0.0, max=5.0),
            "restitution_c": Field("float", 0.632, gt=0.0, max=1.0),
            "youngs1_Pa": Field("float", 2.06e11, **pos),
            "poisson1": Field("float", 0.3, gt=-1.0, max=0.5),
            "youngs2_Pa": Field("float", 2.06e11, **pos),
            "poisson2": Field("float", 0.3, gt=-1.0, max=0.5),
        },
        "simulation": {
            "t_final_s": Field("float", 0.3, **pos),
            "rtol": Field("float", 1e-10, gt=0.0, max=1e-3),
            "atol": Field("float", 1e-12, gt=0.0, max=1e-3),
            "n_save": Field("int", 1201, min=2, max=100_000),
            "max_steps": Field("int", 20_000, min=64),
            "max_segments": Field("int", 8, min=4, max=64),
        },
        **DESIGN_SECTIONS,
    })


class Case(eqx.Module):
    """Everything one capture run needs: the model, the initial placement and the approach parameters."""

    model: CaptureModel  # its robot has the held joints merged (hold_method = "merge")
    robot: object  # the full robot (holding torques)
    angles: jax.Array  # full joint angles at t = 0 [rad]
    q0: jax.Array
    target_x0: jax.Array
    target_quat0: jax.Array
    basis: jax.Array  # columns n0, t1, t2 in the target frame
    params: jax.Array  # [speed, angle1, angle2] (m/s, rad)
    tolerances: jax.Array  # [t_final, rtol, atol]
    gap: jax.Array  # initial gap along the normal at the aim point [m]
    moving_target: jax.Array  # 1: the target moves, 0: the arm moves (data: one compiled program for both)
    held: tuple = eqx.field(static=True)  # 0-based joints held by their drives
    merged: bool = eqx.field(static=True)
    settings: tuple = eqx.field(static=True)  # (n_save, max_steps, max_segments)


def _unit(v):
    v = np.asarray(v, float)
    return v / np.linalg.norm(v)


def _rotation_between(a, b) -> np.ndarray:
    """Smallest rotation taking unit vector ``a`` to unit vector ``b``."""
    axis, c = np.cross(a, b), float(a @ b)
    if c < -1.0 + 1e-12:  # opposite: half turn about any perpendicular
        p = np.cross(a, [1.0, 0, 0] if abs(a[0]) < 0.9 else [0, 1.0, 0])
        p = p / np.linalg.norm(p)
        return 2.0 * np.outer(p, p) - np.eye(3)
    k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + k + k @ k / (1.0 + c)


def _target_inertia(t: dict) -> np.ndarray:
    ixx, iyy, izz, ixy, iyz, izx = t["inertia_kg_m2"]
    s = 1.0 if t["product_convention"] == "tensor" else -1.0
    inertia = np.array([[ixx, s * ixy, s * izx], [s * ixy, iyy, s * iyz], [s * izx, s * iyz, izz]])
    try:
        validate_mass_properties(t["mass_kg"], inertia, "target.inertia_kg_m2")
    except ValueError as err:
        raise ConfigError(str(err)) from None
    return inertia


def _surface(t: dict, tip_radius: float):
    """Surface module, aim point's surface point and normal, tangent basis, Hertz effective radius."""
    kind = "plane" if t["surface"] == "plane" else "cylinder"
    p0, u = np.asarray(t["surface_point_m"], float), _unit(t["surface_direction"])
    com = np.asarray(t["com_m"], float)
    radius = t["shaft_radius_m"] if kind == "cylinder" else 0.0
    surface = Surface(jnp.asarray(p0), jnp.asarray(u), jnp.asarray(radius), jnp.asarray(t["extent_m"]),
                      jnp.asarray(1.0 if kind == "plane" else 0.0))
    central = t["aim_point_m"] == "central"
    aim = com if central else np.asarray(t["aim_point_m"], float)
    w = aim - p0
    if kind == "plane":
        normal, point = u, aim - (w @ u) * u
        helper = np.array([1.0, 0, 0]) if abs(u[0]) < 0.9 else np.array([0, 1.0, 0])
        t1 = _unit(np.cross(u, helper))
        r_eff = tip_radius
    else:
        radial = w - (w @ u) * u
        if np.linalg.norm(radial) < 1e-9:
            raise ConfigError("target.aim_point_m: lies on the shaft axis (the side of the hit is undefined)")
        e = _unit(radial)
        normal = -e if central else e  # central: the far side, so the normal line runs through the CoM
        point = p0 + (w @ u) * u + radius * normal
        t1 = u
        r_eff = np.sqrt(1.0 / (1.0 / tip_radius + 1.0 / radius) * tip_radius)  # Hertz: sqrt(R' R'')
    if float(surface.margin(jnp.asarray(point))) < 0:
        raise ConfigError(f"target.aim_point_m: the aim point {np.round(point, 4).tolist()} is off the "
                          f"{'patch' if kind == 'plane' else 'shaft length'} (target.extent_m = {t['extent_m']:g})")
    basis = np.stack([normal, t1, np.cross(normal, t1)], axis=1)
    return surface, point, basis, r_eff


def _law(cfg: dict, r_eff: float):
    c = cfg["contact"]
    if c["law"] == "kelvin_voigt":
        raise ConfigError("contact.law: 'kelvin_voigt' is not supported for capture (its force jumps to D v0 at "
                          "first touch); use a Hunt-Crossley-family law")
    k = c["stiffness_N_m_n"] if c["stiffness_source"] == "value" else float(
        hertz_stiffness(c["youngs1_Pa"], c["poisson1"], r_eff, c["youngs2_Pa"], c["poisson2"]))
    return ContactLaw(k, c["exponent"], c["restitution_c"], law=c["law"]).canonical()


def _free_joints(arm: dict, n: int) -> np.ndarray:
    spec = arm["joints"]
    if spec in ("held", "free"):
        return np.full(n, 1.0 if spec == "free" else 0.0)
    bad = [j for j in spec if not 1 <= j <= n]
    if bad:
        raise ConfigError(f"arm.joints: indices {bad} out of range 1..{n}")
    return np.array([1.0 if j + 1 in spec else 0.0 for j in range(n)])


def case_from_config(cfg: dict) -> Case:
    robot = robot_from_config(cfg)
    arm, t, cap, sim = cfg["arm"], cfg["target"], cfg["capture"], cfg["simulation"]
    angles = joint_angles_from_config(robot, arm["attitude"], "arm.attitude")
    try:
        tip = robot.frame_index(arm["tip_frame"])
    except KeyError as err:
        raise ConfigError(f"arm.tip_frame: {err.args[0]}") from None
    q0 = robot.neutral().at[7:].set(jnp.asarray(angles))
    tip_rot, tip_pos = (np.asarray(x) for x in frame_pose(robot, q0, arm["tip_frame"]))
    inertia = _target_inertia(t)
    surface, point, basis, r_eff = _surface(t, arm["tip_radius_m"])
    normal0 = basis[:, 0]
    if isinstance(t["orientation"], list):
        rot = np.asarray(quat_to_rotation(jnp.asarray(t["orientation"], float)))
    else:
        toward = tip_rot[:, 2] if t["orientation"] == "rod_axis" else _unit(tip_pos - np.asarray(center_of_mass(robot, q0)))
        rot = _rotation_between(normal0, -toward)
    standoff = point + (arm["tip_radius_m"] + cap["initial_gap_m"]) * normal0
    origin = tip_pos - rot @ standoff
    x0 = origin + rot @ np.asarray(t["com_m"], float)
    planar = arm["base"] == "planar"
    plane_normal = _unit(arm["plane_normal"])  # base frame = world at t = 0 (identity base attitude)
    params = np.array([cap["approach_speed_m_s"], *np.deg2rad(cap["approach_angles_deg"])])
    if planar:
        d = _direction(jnp.asarray(basis), jnp.asarray(params[1:]))
        if abs(float(plane_normal @ rot @ np.asarray(d))) > 1e-9:
            raise ConfigError("capture.approach_angles_deg: the approach direction leaves the air-table plane "
                              "(normal arm.plane_normal); turn the target or the angles into the plane")
    free = _free_joints(arm, robot.n_joints)
    held = tuple(int(j) for j in np.flatnonzero(free == 0))
    merged = arm["hold_method"] == "merge" and bool(held)
    sim_robot = robot.lock(list(held), jnp.asarray(angles)[jnp.asarray(held, dtype=int)]) if merged else robot
    if merged:  # the reduced robot keeps the free joints, in order
        q0 = sim_robot.neutral().at[7:].set(jnp.asarray(angles)[jnp.asarray(np.flatnonzero(free), dtype=int)])
        free = np.ones(sim_robot.n_joints)
    model = CaptureModel(
        robot=sim_robot, law=_law(cfg, r_eff),
        base_motion=BaseMotion.planar(plane_normal) if planar else BaseMotion.free(),
        joint_free=jnp.asarray(free), target_mass=jnp.asarray(t["mass_kg"]),
        target_com=jnp.asarray(t["com_m"], float), target_inertia=jnp.asarray(inertia), surface=surface,
        tip_radius=jnp.asarray(arm["tip_radius_m"]), plane_normal=jnp.asarray(plane_normal),
        planar=jnp.asarray(1.0 if planar else 0.0), scales=jnp.ones(2), tip=sim_robot.frame_index(arm["tip_frame"]),
    )
    return Case(model, robot, jnp.asarray(angles), q0, jnp.asarray(x0), rotation_to_quat(jnp.asarray(rot)), jnp.asarray(basis), jnp.asarray(params),
                jnp.array([sim["t_final_s"], sim["rtol"], sim["atol"]]), jnp.asarray(cap["initial_gap_m"]),
                jnp.asarray(float(cap["moving"] == "target")), held, merged,
                (sim["n_save"], sim["max_steps"], sim["max_segments"]))


def _direction(basis, angles):
    d = -basis[:, 0] + jnp.tan(angles[0]) * basis[:, 1] + jnp.tan(angles[1]) * basis[:, 2]
    return d / jnp.linalg.norm(d)


def initial_state(case: Case, params):
    """``y0`` for approach ``params = [speed, angle1, angle2]`` and the nominal closing (normal) speed."""
    model = case.model
    rot = quat_to_rotation(case.target_quat0)
    direction = rot @ _direction(case.basis, params[1:])
    v_rel = params[0] * direction
    w = case.moving_target
    v_arm = model.base_motion.project(jnp.zeros(model.robot.nv).at[:3].set((1.0 - w) * v_rel))  # base attitude = I
    v_target = -w * v_rel
    v_target = v_target - model.planar * (v_target @ model.plane_normal) * model.plane_normal
    y0 = (case.q0, v_arm, case.target_x0, case.target_quat0, v_target, jnp.zeros(3), jnp.zeros(2))
    closing = -(rot @ case.basis[:, 0]) @ (v_arm[:3] - v_target)
    return y0, closing


def evaluate(case: Case, params=None, law=None) -> tuple[CaptureResult, object]:
    """One capture simulation; pure and differentiable in ``params`` and the ``law`` (e.g. its stiffness)."""
    params = case.params if params is None else params
    model = case.model if law is None else eqx.tree_at(lambda m: m.law, case.model, law)
    y0, closing = initial_state(case, params)
    closing = jax.lax.stop_gradient(jnp.maximum(closing, 1e-6))
    model = eqx.tree_at(lambda m: m.scales, model, reference_scales(model, y0, closing))
    t_final, rtol, atol = case.tolerances
    n_save, max_steps, max_segments = case.settings
    dtmax = jax.lax.stop_gradient(0.25 * case.gap / closing)
    sol = simulate_capture(model, y0, t_final, n_save, rtol, atol, max_steps, max_segments, dtmax)
    return capture_result(model, y0, sol), sol


evaluate_jit = jax.jit(evaluate)


def approach_metrics(case: Case):
    """``p -> (peak_force, impulse, closing_speed, valid)`` for the design commands (pure; jit/vmap/grad)."""
    from .capture_model import valid

    def metrics(params):
        result, _ = evaluate(case, params)
        return result.peak_force, result.impulse, result.closing_speed, valid(result)

    return metrics


def check_run(case: Case, result: CaptureResult, label: str = "capture") -> None:
    """Raise :class:`SolverFailure` naming what went wrong; never let such numbers be reported."""
    phase = PHASE_NAMES[int(result.final_phase)]
    t_final = float(case.tolerances[0])
    if int(result.status) == 1:
        raise SolverFailure(f"{label}: the ODE solver failed in phase '{phase}' (simulation.max_steps or step collapse)")
    if int(result.status) == 2:
        raise SolverFailure(f"{label}: more contact events than simulation.max_segments = {case.settings[2]}")
    if int(result.contacts) == 0:
        raise SolverFailure(
            f"{label}: no contact in phase 'approach': at capture.approach_speed_m_s = {float(case.params[0]):g} the rod "
            f"tip does not reach the target within simulation.t_final_s = {t_final:g} s")
    if float(result.final_phase) != SEPARATED:
        raise SolverFailure(f"{label}: the contact never separates: still in phase '{phase}' at simulation.t_final_s = "
                            f"{t_final:g} s")
    if float(result.min_margin) < 0:
        raise SolverFailure(f"{label}: the contact point leaves the target surface (off the shaft / patch by "
                            f"{-float(result.min_margin):.3g} m); the infinite-surface contact model is not valid")


@eqx.filter_jit
def _observe(case: Case, ys, phase, v0):
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


def summary_of(case: Case, result: CaptureResult) -> dict:
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
    elastic_left = float(law.elastic_force(max(float(result.release_delta), 0.0))) * max(float(result.release_delta), 0.0) / (float(law.exponent) + 1)
    free = [j for j in range(case.robot.n_joints) if j not in case.held]
    rates = v[6:] if case.merged else v[6:][free]
    deg = np.rad2deg
    return {
        "peak_force_N": float(result.peak_force),
        "impulse_N_s": float(result.impulse),
        "contact_duration_s": float(result.duration),
        "contact_start_time_s": float(result.first_touch),
        "release_time_s": float(result.release_time),
        "closing_speed_m_s": float(result.closing_speed),
        "separation_speed_m_s": float(result.separation_speed),
        "normal_restitution": float(result.separation_speed / result.closing_speed),
        "contacts": int(result.contacts),
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
        "angular_momentum_relative_change": float(np.linalg.norm(l1 - l0) / max(np.linalg.norm(l0), np.linalg.norm(p0))),
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


def run(cfg: dict, out: Path) -> dict:
    case = case_from_config(cfg)
    start = time.perf_counter()
    result, sol = evaluate_jit(case, case.params)
    jax.block_until_ready(result.peak_force)
    wall = time.perf_counter() - start
    check_run(case, result)
    summary = summary_of(case, result)
    m_arm, m_target = case.model.effective_masses(initial_state(case, case.params)[0])
    summary.update(arm_effective_mass_kg=float(m_arm), target_effective_mass_kg=float(m_target),
                   equivalent_mass_kg=float(m_arm * m_target / (m_arm + m_target)),
                   compile_and_run_time_s=wall, solver_steps=int(sol.num_steps))
    ts = np.asarray(sol.ts)
    phase, v0 = _grid_modes(sol, ts)
    obs = {k: np.asarray(a) for k, a in _observe(case, sol.ys, jnp.asarray(phase), jnp.asarray(v0)).items()}
    held = case.held
    if held:
        summary["max_holding_torque_N_m"] = {f"joint{j + 1}": float(np.max(np.abs(obs["holding"][:, k])))
                                             for k, j in enumerate(held)}
    summary["max_indentation_m"] = float(np.max(obs["delta"]))
    columns = {"t_s": ts, "phase": phase, "indentation_m": obs["delta"], "indentation_rate_m_s": obs["delta_dot"],
               "force_N": obs["force"]}
    for name, key in (("base_v", "base_v"), ("base_w", "base_w"), ("target_v", "target_v"), ("target_w", "target_w")):
        scale, unit = (1.0, "m_s") if name.endswith("_v") else (180 / np.pi, "deg_s")
        columns.update({f"{name}_{a}_{unit}": scale * obs[key][:, i] for i, a in enumerate("xyz")})
    for k, j in enumerate(held):
        columns[f"holding_joint{j + 1}_N_m"] = obs["holding"][:, k]
    write_timeseries(out, columns)
    plot_panels(out / "force_time.png", ts, [
        ("contact force [N]", {"F": obs["force"]}),
        ("indentation [mm]", {"delta": 1e3 * obs["delta"]}),
    ])
    plot_panels(out / "velocities.png", ts, [
        ("base velocity [m/s]", {a: columns[f"base_v_{a}_m_s"] for a in "xyz"}),
        ("target velocity [m/s]", {a: columns[f"target_v_{a}_m_s"] for a in "xyz"}),
        ("angular velocity [deg/s]", {**{f"base {a}": columns[f"base_w_{a}_deg_s"] for a in "xyz"},
                                      **{f"target {a}": columns[f"target_w_{a}_deg_s"] for a in "xyz"}}),
    ])
    write_summary(out, summary)
    print_summary(summary, f"capture ({cfg['target']['surface']}, {cfg['contact']['law']}, joints {cfg['arm']['joints']})")
    return summary
