"""The ejection's 3-D scene: the arm (locked joints merged, as simulated) leaving the rail and tumbling, the rail
and its separation plane at the spring's end of travel, and the air table in plane mode."""

from __future__ import annotations

import numpy as np

from ...io.scene import Body, Scene, cylinder, plate, sample_indices, static_pose
from ..robot_scene import robot_bodies
from .model import plane_normal


def scene(scenario, outcome) -> Scene:
    sol = outcome.solution
    keep = sample_indices(np.asarray(sol.ts))
    times, qs = np.asarray(sol.ts)[keep], np.asarray(sol.ys.q)[keep]
    model, _ = scenario.model_of(scenario.params)
    bodies = robot_bodies(scenario.robot, model.robot, qs)
    n = len(times)
    axis = np.asarray(scenario.rail_axis, float) / np.linalg.norm(scenario.rail_axis)
    stroke = float(scenario.params.spring_compression)
    size = max(float(np.ptp(np.concatenate([b.pos for b in bodies]), axis=0).max()), 4 * stroke, 0.5)
    rail = cylinder(-1.5 * stroke * axis, stroke * axis, 0.03 * stroke + 0.005)
    parts = [Body("rail (base travel while the springs push)", rail, *static_pose(n), color="#555555"),
             Body("separation plane (end of spring travel)", plate(axis, 0.5 * size, stroke * axis),
                  *static_pose(n), color="#2ca02c", opacity=0.25)]
    if scenario.mode == "plane":
        normal = np.asarray(plane_normal(axis))
        lowest = float(np.min(np.concatenate([b.pos for b in bodies]) @ normal)) - 0.05
        parts.append(Body("air table", plate(normal, 1.5 * size, lowest * normal + 0.4 * size * axis),
                          *static_pose(n), color="#bbbbbb", opacity=0.3))
    events = [(float(t), label) for t, label in ((outcome.separation_time, "separation"),
                                                  (outcome.stable_time, "stable (all joints stuck)"))
              if np.isfinite(float(t))]
    title = f"ejection, {scenario.mode} mode, joints {', '.join(str(j + 1) for j in scenario.free)} free"
    return Scene(title, times, bodies=tuple(parts) + bodies, events=tuple(events))
