"""The capture's 3-D scene: the arm (held joints merged, as simulated), the free-floating target (its inertia box)
with its contact surface (plane patch or grapple shaft), and the contact force on the target at the rod tip."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ...core.dynamics import frame_pose
from ...core.spatial import quat_to_rotation
from ...io.scene import Arrows, Body, Mesh, Scene, cylinder, inertia_box, plate, sample_indices
from ..robot_scene import robot_bodies
from .report import _observations


def _surface_mesh(surface) -> Mesh:
    point, direction = np.asarray(surface.point), np.asarray(surface.direction)
    extent, radius = float(surface.extent), float(surface.radius)
    if float(surface.is_plane) > 0.5:
        return plate(direction, 2.0 * extent, point)
    return cylinder(point, point + extent * direction, radius)


def scene(case, outcome) -> Scene:
    sol, model = outcome.solution, case.model
    keep = sample_indices(np.asarray(sol.ts))
    times = np.asarray(sol.ts)[keep]
    ys = jax.tree_util.tree_map(lambda a: a[keep], sol.ys)
    q, x, quat = ys[0], ys[2], ys[3]
    bodies = robot_bodies(case.robot, model.robot, q)
    rot = np.asarray(jax.vmap(quat_to_rotation)(quat))
    com = np.asarray(model.target_com)
    pos = np.asarray(x) - rot @ com
    size = float(np.max(np.ptp(np.asarray(model.surface.point)[None], axis=0))) + float(model.surface.extent)
    target = Body("target", inertia_box(float(model.target_mass), model.target_inertia, com, size), rot, pos,
                  color="#7f7f7f", opacity=0.6)
    surface = Body("contact surface" if float(model.surface.is_plane) > 0.5 else "grapple shaft",
                   _surface_mesh(model.surface), rot, pos, color="#2ca02c")
    tip_name = model.robot.frame_names[model.tip]
    tip = np.asarray(jax.vmap(lambda qq: frame_pose(model.robot, qq, tip_name)[1])(jnp.asarray(q)))
    _, obs = _observations(case, sol)
    normal = np.asarray(jax.vmap(lambda y: model.lean_gap(y)[2])(ys))
    force = -obs["force"][keep, None] * normal  # on the target, along the normal through the tip
    arrows = Arrows("contact force on the target", tip[:, None], force[:, None])
    events = [(float(outcome.first_touch), "first touch"), (float(outcome.release_time), "release")]
    return Scene("capture: rod tip against the target", times, bodies=bodies + (target, surface), arrows=(arrows,),
                 events=tuple(e for e in events if np.isfinite(e[0]) and e[0] >= 0))
