r"""The maximal-coordinate model of a :class:`~diffspace.core.robot.Robot` (revolute joints), and state conversion.

Each robot body becomes a :class:`~.rigid.RigidBodies` entry with its frame at the centre of mass and the
robot body's axes; each revolute joint becomes a :class:`~.joints.Revolute` whose anchors have the joint
axis as ``z``: in the parent at the joint placement, in the child at the child's frame origin. The
anchors' relative angle is then the robot's joint angle, so both formulations describe the same system and
can be compared state by state (the minimal-coordinate engine is :mod:`diffspace.core.dynamics`).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from ..core import dynamics, spatial
from ..core.robot import Robot
from .joints import Anchor, Revolute
from .rigid import RigidBodies, RigidState


def _axis_frame(axis: Float[Array, "3"]) -> Float[Array, "3 3"]:
    """A rotation whose third column is the unit ``axis`` (the first column is normal to it and to x or y)."""
    z = axis / jnp.linalg.norm(axis)
    helper = jnp.where(jnp.abs(z[0]) < 0.9, jnp.array([1.0, 0.0, 0.0]), jnp.array([0.0, 1.0, 0.0]))
    y = jnp.cross(z, helper)
    y = y / jnp.linalg.norm(y)
    return jnp.stack([jnp.cross(y, z), y, z], axis=1)


def rigid_bodies(robot: Robot) -> RigidBodies:
    """The robot's bodies as free rigid bodies (mass and CoM inertia unchanged)."""
    return RigidBodies(robot.body_names, robot.mass, robot.inertia)


def revolute_joints(robot: Robot) -> tuple[Revolute, ...]:
    """One :class:`~.joints.Revolute` per robot joint, in joint order (``ValueError`` for prismatic joints)."""
    joints = []
    for i in range(1, len(robot.parents)):
        if robot.joint_kinds[i] != "revolute":
            name = robot.joint_names[i - 1]
            raise ValueError(f"joint '{name}': only revolute joints have a maximal-coordinate model")
        parent = robot.parents[i]
        frame = _axis_frame(robot.axis[i])
        joints.append(
            Revolute(
                Anchor(parent, robot.placement_pos[i] - robot.com[parent], robot.placement_rot[i] @ frame),
                Anchor(i, -robot.com[i], frame),
            )
        )
    return tuple(joints)


def maximal_state(robot: Robot, q: Float[Array, " nq"], v: Float[Array, " nv"]) -> RigidState:
    """Maximal coordinates of a minimal-coordinate state ``(q, v)`` (Pinocchio's free-flyer convention)."""
    kin = dynamics.kinematics(robot, q, v)
    rot_base, pos_base = dynamics.base_pose(q)
    rots = rot_base @ kin.rot
    origins = pos_base + kin.pos @ rot_base.T
    omega = kin.twist[:, 3:]
    com_velocity_body = kin.twist[:, :3] + jnp.cross(omega, robot.com)
    return RigidState(
        position=origins + jnp.einsum("bij,bj->bi", rots, robot.com),
        quaternion=jax.vmap(spatial.rotation_to_quat)(rots),
        velocity=jnp.einsum("bij,bj->bi", rots, com_velocity_body),
        omega=omega,
    )
