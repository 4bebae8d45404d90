"""The unilateral-contact scene: the planar arm (posed by the core's kinematics) pressing on and sliding along the
contact plane y = 0, with the contact force (normal and friction) on the tip."""

from __future__ import annotations

import jax
import numpy as np

from ...io.scene import Arrows, Body, Scene, plate, sample_indices, static_pose
from ..robot_scene import robot_bodies


def scene(scenario, outcome) -> Scene:
    traj, arm = outcome.trajectory, scenario.arm
    t = np.asarray(traj.t)
    keep = sample_indices(t)
    q = jax.vmap(arm.free_flyer_configuration)(np.asarray(traj.q)[keep])
    bodies = robot_bodies(arm.robot, arm.robot, q)
    step = np.minimum(keep, len(t) - 2)  # forces act over steps k < N: the last state shows the last step's
    force = np.column_stack([np.asarray(traj.tangent_force)[step], np.asarray(traj.normal_force)[step],
                             np.zeros(len(keep))])
    tip = np.column_stack([np.asarray(traj.tip)[keep], np.zeros(len(keep))])
    reach = float(np.sum(np.linalg.norm(np.asarray(arm.robot.placement_pos), axis=1))) + 0.5
    wall = Body("contact plane y = 0", plate((0.0, 1.0, 0.0), 2.0 * reach, (float(tip[0, 0]), 0.0, 0.0)),
                *static_pose(len(keep)), color="#999999", opacity=0.35)
    arrows = Arrows("contact force on the tip", tip[:, None], force[:, None])
    return Scene(f"planar arm on a plane with friction (mu = {float(outcome.mu):g})", t[keep], bodies=bodies + (wall,),
                 arrows=(arrows,))
