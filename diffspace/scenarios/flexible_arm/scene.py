"""The flexible arm's 3-D scene: the arm of the paper's (maximal) formulation posed by the core's kinematics from
its base pose and joint angles, its deflected last link (joint 2 to the end effector, the elastic deflection
magnified by the factor the scene's title states) as a line, and the rigid minimal-coordinate reference as a
ghost."""

from __future__ import annotations

import dataclasses

import numpy as np

from ...io.scene import Line, Scene, sample_indices
from ..robot_scene import robot_bodies


def _configurations(motion, keep) -> np.ndarray:
    angle = np.asarray(motion.base_angle)[keep]
    quat = np.column_stack([np.zeros((len(keep), 2)), np.sin(angle / 2), np.cos(angle / 2)])  # about z, xyzw
    return np.column_stack([np.asarray(motion.base_position)[keep], quat, np.asarray(motion.joint_angles)[keep]])


DRAWN_DEFLECTION = 0.1  # the largest elastic deflection is drawn as this fraction of link 2's length


def magnified_tip(joint2: np.ndarray, tip: np.ndarray, deflection: np.ndarray) -> tuple[np.ndarray, float]:
    """The end effector with its elastic deflection magnified so that the largest one draws as
    :data:`DRAWN_DEFLECTION` of the link (a 1.7 mm deflection of a 1.2 m link is invisible at scale 1), and the
    factor (1 for a rigid run). Rows: sampled times."""
    rigid = tip - deflection
    largest = float(np.max(np.linalg.norm(deflection, axis=1)))
    length = float(np.max(np.linalg.norm(rigid - joint2, axis=1)))
    scale = DRAWN_DEFLECTION * length / largest if largest > 0 else 1.0
    return rigid + scale * deflection, scale


def scene(scenario, outcome) -> Scene:
    keep = sample_indices(np.asarray(outcome.ts))
    robot = scenario.robot
    arm = robot_bodies(robot, robot, _configurations(outcome.maximal, keep))
    ghost = tuple(dataclasses.replace(b, name="rigid reference: " + b.name, opacity=0.3, color="#999999", link="")
                  for b in robot_bodies(robot, robot, _configurations(outcome.reference, keep)))
    joint2 = next(b for b in arm if b.name == robot.body_names[2]).pos
    tip, scale = magnified_tip(joint2, np.asarray(outcome.maximal.end_effector)[keep],
                               np.asarray(outcome.maximal.deflection)[keep])
    deflected = Line(f"link 2 with its elastic deflection magnified x {scale:.3g} (joint 2 to end effector)",
                     np.stack([joint2, tip], axis=1), color="#d62728")
    return Scene(f"flexible two-link arm on a free base (paper's formulation; rigid reference in grey; deflection "
                 f"drawn x {scale:.3g})", np.asarray(outcome.ts)[keep], bodies=arm + ghost, lines=(deflected,))
