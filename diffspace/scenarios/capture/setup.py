"""Build a :class:`~.scenario.Capture` from a validated config: robot, held joints, target placement, law."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from ...core.dynamics import center_of_mass, frame_pose
from ...core.restricted import BaseMotion
from ...core.spatial import quat_to_rotation, rotation_to_quat
from ...core.status import ConfigError
from ..robot_config import joint_values_from_config, robot_from_config, solver_settings
from . import placement as pl
from .model import CaptureModel
from ..declare import from_config as params_from_config
from .params import APPROACH_ANGLES, CaptureParams, approach_direction


def _target_rotation(t: dict, robot, q0, tip_frame: str, normal0) -> np.ndarray:
    tip_rot, tip_pos = (np.asarray(x) for x in frame_pose(robot, q0, tip_frame))
    if isinstance(t["orientation"], list):
        return np.asarray(quat_to_rotation(jnp.asarray(t["orientation"], float)))
    arm_com = np.asarray(center_of_mass(robot, q0))
    toward = tip_rot[:, 2] if t["orientation"] == "rod_axis" else pl.unit(tip_pos - arm_com)
    return pl.rotation_between(normal0, -toward)


def capture_fields(cfg: dict) -> dict:
    """The fields of a :class:`~.scenario.Capture` from a validated config."""
    robot = robot_from_config(cfg)
    arm, t, cap, sim = cfg["arm"], cfg["target"], cfg["capture"], cfg["simulation"]
    angles = joint_values_from_config(robot, arm["attitude"], "arm.attitude")
    try:
        robot.frame_index(arm["tip_frame"])
    except KeyError as err:
        raise ConfigError(f"arm.tip_frame: {err.args[0]}") from None
    q0 = robot.neutral().at[7:].set(jnp.asarray(angles))
    tip_pos = np.asarray(frame_pose(robot, q0, arm["tip_frame"])[1])
    inertia = pl.target_inertia(t)
    surface, point, basis, r_eff = pl.surface_from_config(t, arm["tip_radius_m"])
    rot = _target_rotation(t, robot, q0, arm["tip_frame"], basis[:, 0])
    standoff = point + (arm["tip_radius_m"] + cap["initial_gap_m"]) * basis[:, 0]
    x0 = tip_pos - rot @ standoff + rot @ np.asarray(t["com_m"], float)
    planar = arm["base"] == "planar"
    plane_normal = pl.unit(arm["plane_normal"])  # base frame = world at t = 0 (identity base attitude)
    approach = APPROACH_ANGLES.value(cfg)
    if planar and abs(float(plane_normal @ rot @ np.asarray(approach_direction(jnp.asarray(basis), approach)))) > 1e-9:
        raise ConfigError("capture.approach_angles_deg: the approach direction leaves the air-table plane "
                          "(normal arm.plane_normal); turn the target or the angles into the plane")
    free = pl.free_joints(arm, robot.n_joints)
    held = tuple(int(j) for j in np.flatnonzero(free == 0))
    merged = arm["hold_method"] == "merge" and bool(held)
    sim_robot = robot.lock(list(held), jnp.asarray(angles)[jnp.asarray(held, dtype=int)]) if merged else robot
    if merged:  # the reduced robot keeps the free joints, in order
        q0 = sim_robot.neutral().at[7:].set(jnp.asarray(angles)[jnp.asarray(np.flatnonzero(free), dtype=int)])
        free = np.ones(sim_robot.n_joints)
    law = pl.contact_law(cfg, r_eff)
    model = CaptureModel(
        robot=sim_robot, law=law.canonical(),
        base_motion=BaseMotion.planar(plane_normal) if planar else BaseMotion.free(),
        joint_free=jnp.asarray(free), target_mass=jnp.asarray(t["mass_kg"]),
        target_com=jnp.asarray(t["com_m"], float), target_inertia=jnp.asarray(inertia), surface=surface,
        tip_radius=jnp.asarray(arm["tip_radius_m"]), plane_normal=jnp.asarray(plane_normal),
        planar=jnp.asarray(1.0 if planar else 0.0), scales=jnp.ones(2), tip=sim_robot.frame_index(arm["tip_frame"]),
    )
    params = params_from_config(CaptureParams, cfg, stiffness=jnp.asarray(law.stiffness, dtype=float))
    return dict(params=params, model=model, robot=robot, angles=jnp.asarray(angles), q0=q0, target_x0=jnp.asarray(x0),
               target_quat0=rotation_to_quat(jnp.asarray(rot)), basis=jnp.asarray(basis),
               t_final=jnp.asarray(sim["t_final_s"], float), solver=solver_settings(sim),
               gap=jnp.asarray(cap["initial_gap_m"], float), capture_speed=jnp.asarray(cap["capture_speed_m_s"], float),
               moving_target=jnp.asarray(float(cap["moving"] == "target")),
               held=held, merged=merged,
               law_name=cfg["contact"]["law"], product_sign=1.0 if t["product_convention"] == "tensor" else -1.0)
