"""A robot in a report's 3-D scene: primitive link geometry from the kinematics and inertias, link poses from
the core's :func:`~diffspace.core.dynamics.frame_pose` at the sampled configurations.

Primitives (in each link's own frame): the base is the box with the base's mass and principal moments of
inertia (:func:`~diffspace.io.scene.inertia_box`);
every moving link is a capsule from its joint to each child joint and to each extra frame attached to it (a
leaf link without one: to twice its CoM). A URDF ``<visual>`` replaces a link's primitive in the report.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ..core.dynamics import frame_pose
from ..core.robot import Robot
from ..io.scene import Body, Mesh, capsule, inertia_box, sphere

LINK_COLORS = ("#4c72b0", "#dd8452")  # alternating, so neighbouring links read apart


def _reach(robot: Robot) -> float:
    lengths = np.linalg.norm(np.asarray(robot.placement_pos)[1:], axis=1)
    return float(max(np.sum(lengths), 1e-3))


def _link_targets(robot: Robot, body: int) -> list[np.ndarray]:
    """Points (in the link frame) the link's capsules run to: child joints and extra frames on the link."""
    pos = np.asarray(robot.placement_pos)
    targets = [pos[j] for j, p in enumerate(robot.parents) if p == body]
    targets += [np.asarray(robot.frame_pos[k]) for k, b in enumerate(robot.frame_bodies)
                if b == body and robot.frame_names[k] not in robot.body_names]
    targets = [t for t in targets if np.linalg.norm(t) > 1e-9]
    if not targets and np.linalg.norm(np.asarray(robot.com[body])) > 1e-9:
        targets = [2.0 * np.asarray(robot.com[body])]
    return targets


def link_meshes(robot: Robot) -> dict[str, Mesh]:
    """Primitive geometry of every body of ``robot`` (link name -> mesh in the link frame)."""
    reach = _reach(robot)
    radius = float(np.clip(0.03 * reach, 0.005, 0.08))
    meshes = {robot.body_names[0]: inertia_box(float(robot.mass[0]), robot.inertia[0], robot.com[0], 0.15 * reach)}
    for body in range(1, len(robot.body_names)):
        targets = _link_targets(robot, body)
        parts = [capsule(np.zeros(3), t, radius) for t in targets] or [sphere(radius)]
        meshes[robot.body_names[body]] = Mesh.join(*parts)
    return meshes


def robot_bodies(geometry: Robot, state: Robot, qs, prefix: str = "") -> tuple[Body, ...]:
    """One :class:`Body` per link of ``geometry`` (the full robot): its primitive (empty for merged links, which
    a URDF visual may fill) posed by ``frame_pose(state, q, link)`` at every row of ``qs (T, nq)``. ``state`` is
    the robot the configurations belong to (``geometry`` itself, or it with joints locked)."""
    meshes = link_meshes(geometry)
    qs = jnp.asarray(qs)
    empty = Mesh(np.zeros((0, 3)), np.zeros((0, 3), dtype=int))
    bodies = []
    for k, name in enumerate(geometry.frame_names):
        if name in geometry.body_names or name in state.frame_names:
            rot, pos = jax.vmap(lambda q, n=name: frame_pose(state, q, n))(qs)
            color = LINK_COLORS[k % 2] if k else "#9aa5b1"
            bodies.append(Body(prefix + name, meshes.get(name, empty), np.asarray(rot), np.asarray(pos),
                               color=color, link=name))
    return tuple(bodies)
