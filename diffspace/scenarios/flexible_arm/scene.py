"""The flexible arm's 3-D scene: the arm of the paper's (maximal) formulation posed by the core's kinematics from
its base pose and joint angles, its deflected last link (joint 2 to the end effector with the elastic deflection)
as a line, and the rigid minimal-coordinate reference as a ghost."""

from __future__ import annotations

import dataclasses

import numpy as np

from ...io.scene import Line, Scene, sample_indices
from ..robot_scene import robot_bodies


def _configurations(motion, keep) -> np.ndarray:
    angle = np.asarray(motion.base_angle)[keep]
    quat = np.column_stack([np.zeros((len(keep), 2)), np.sin(angle / 2), np.cos(angle / 2)])  # about z, xyzw
    return np.column_stack([np.asarray(motion.base_position)[keep], quat, np.asarray(motion.joint_angles)[keep]])


def scene(scenario, outcome) -> Scene:
    keep = sample_indices(np.asarray(outcome.ts))
    robot = scenario.robot
    arm = robot_bodies(robot, robot, _configurations(outcome.maximal, keep))
    ghost = tuple(dataclasses.replace(b, name="rigid reference: " + b.name, opacity=0.3, color="#999999", link="")
                  for b in robot_bodies(robot, robot, _configurations(outcome.reference, keep)))
    joint2 = next(b for b in arm if b.name == robot.body_names[2]).pos
    deflected = Line("link 2 with its elastic deflection (joint 2 to end effector)",
                     np.stack([joint2, np.asarray(outcome.maximal.end_effector)[keep]], axis=1), color="#d62728")
    return Scene("flexible two-link arm on a free base (paper's formulation; rigid reference in grey)",
                 np.asarray(outcome.ts)[keep], bodies=arm + ghost, lines=(deflected,))
