"""The free-floating arm's 3-D scene: every link posed by the core's kinematics along the trajectory."""

from __future__ import annotations

import numpy as np

from ...io.scene import Scene, sample_indices
from ..robot_scene import robot_bodies


def scene(scenario, outcome) -> Scene:
    traj = outcome.trajectory
    keep = sample_indices(np.asarray(traj.ts))
    bodies = robot_bodies(scenario.robot, scenario.robot, np.asarray(traj.q)[keep])
    return Scene(f"free-floating arm, base {scenario.base_kind}", np.asarray(traj.ts)[keep], bodies=bodies)
