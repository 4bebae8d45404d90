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
``int x y dm`` (CAD style), whose tensor entries are their negatives. Both tensors are positive definite
with principal moments equal to 3e-5 (1.6095, 3.1551, 3.4120 kg m^2); only the principal axes differ, by up
to 6 degrees.
"""

from __future__ import annotations

import time
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ..io.config import Field, Schema
from ..status import ConfigError
from ..contact import LAWS, ContactLaw, hertz_stiffness
from ..dynamics import BaseMotion, center_of_mass, frame_pose
from ..io.results import print_summary, write_summary
from ..robot import validate_mass_properties
from ..status import SolverFailure
from ..spatial import quat_to_rotation, rotation_to_quat
from .capture_design import DESIGN_SECTIONS, optimize  # noqa: F401  (CLI entry point)
from .capture_model import (
    PHASE_NAMES, SEPARATED, CaptureModel, CaptureResult, Surface, capture_result, reference_scales, simulate_capture,
)
from .capture_results import summary_of, write_outputs
from .common import ROBOT_FIELDS, joint_angles_from_config, robot_from_config

TABLE4_COM = [-0.040931, 0.00137, 0.342138]
TABLE4_INERTIA = [3.40766, 3.15477, 1.61416, 0.00353, 0.02253, -0.08852]


def _nonzero(v):
    return None if np.linalg.norm(v) > 0 else "must be non-zero"


def _joints_check(v):
    if v in ("held", "free") or (isinstance(v, list) and all(type(j) is int for j in v)):
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
        robot.frame_index(arm["tip_frame"])
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
        arm_com = np.asarray(center_of_mass(robot, q0))
        toward = tip_rot[:, 2] if t["orientation"] == "rod_axis" else _unit(tip_pos - arm_com)
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
    return Case(model, robot, jnp.asarray(angles), q0, jnp.asarray(x0), rotation_to_quat(jnp.asarray(rot)),
                jnp.asarray(basis), jnp.asarray(params),
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
        raise SolverFailure(f"{label}: the ODE solver failed in phase '{phase}' "
                            "(simulation.max_steps reached or the step size collapsed)")
    if int(result.status) == 2:
        raise SolverFailure(f"{label}: more contact events than simulation.max_segments = {case.settings[2]}")
    if int(result.contacts) == 0:
        raise SolverFailure(
            f"{label}: no contact in phase 'approach': at capture.approach_speed_m_s = {float(case.params[0]):g} "
            f"the rod tip does not reach the target within simulation.t_final_s = {t_final:g} s")
    if float(result.final_phase) != SEPARATED:
        raise SolverFailure(f"{label}: the contact never separates: still in phase '{phase}' at simulation.t_final_s = "
                            f"{t_final:g} s")
    if float(result.min_margin) < 0:
        raise SolverFailure(f"{label}: the contact point leaves the target surface (off the shaft / patch by "
                            f"{-float(result.min_margin):.3g} m); the infinite-surface contact model is not valid")


@eqx.filter_jit
def _effective_masses(case: Case):
    """Arm and target effective masses along the contact normal at t = 0 (the line of the first touch)."""
    return case.model.effective_masses(initial_state(case, case.params)[0])


def run(cfg: dict, out: Path) -> dict:
    """Simulate the configured capture; write summary.json, timeseries.csv/.npz and plots; return the summary."""
    case = case_from_config(cfg)
    start = time.perf_counter()
    result, sol = evaluate_jit(case, case.params)
    jax.block_until_ready(result.peak_force)
    first = time.perf_counter() - start
    check_run(case, result)
    start = time.perf_counter()
    jax.block_until_ready(evaluate_jit(case, case.params)[0].peak_force)
    again = time.perf_counter() - start
    summary = summary_of(case, result)
    m_arm, m_target = _effective_masses(case)
    summary.update(arm_effective_mass_kg=float(m_arm), target_effective_mass_kg=float(m_target),
                   equivalent_mass_kg=float(m_arm * m_target / (m_arm + m_target)),
                   first_call_time_s=first, run_time_s=again, solver_steps=int(sol.num_steps))
    write_outputs(case, sol, summary, out)
    write_summary(out, summary)
    print_summary(summary, f"capture ({cfg['target']['surface']}, {cfg['contact']['law']}, "
                           f"joints {cfg['arm']['joints']})")
    return summary
