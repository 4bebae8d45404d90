r"""The flexible-arm model: the paper's base and two-link arm in both formulations.

* **Maximal coordinates** (the paper's formulation): base and links as free quaternion bodies
  (:mod:`diffspace.bodies.rigid`), joined by revolute constraints, optionally with the momentum rows
  (Eqs. 7-8) and an assumed-mode last link (:mod:`diffspace.bodies.modal`, its complete first-order kinetic
  energy assembled by :class:`~diffspace.bodies.Multibody`), integrated by the
  index-1 + Baumgarte driver (:func:`diffspace.integrate.solve_constrained`).
* **Minimal coordinates** (the rigid reference): the same bodies as a floating-base
  :class:`~diffspace.core.robot.Robot` with the base restricted to the x-y plane
  (:meth:`~diffspace.core.restricted.BaseMotion.planar` with normal z), integrated by
  :func:`diffspace.integrate.simulate`.

Both are built from one :class:`~diffspace.core.robot.Robot` (:func:`arm_robot`), so they describe the same
system; with a rigid last link they must agree to the integration tolerance.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from ...bodies import ModalLink, Multibody, RigidBodies, maximal_state, revolute_joints, rigid_bodies
from ...core.dynamics import base_pose, frame_pose
from ...core.restricted import BaseMotion
from ...integrate import (ConstrainedSolution, SolverSettings, Stabilization, Trajectory, simulate,
                          solve_constrained)
from ...core.robot import LinkTree, Robot, build_robot

TIP = "tip"


def arm_robot(base_mass, base_inertia, side, link_mass, link_inertia, link_length) -> Robot:
    """Base (cube of side ``side``, centre at its frame origin) and two identical links along +x, joints about z.

    Joint 1 sits at the middle of the base's +x face, each link's centre of mass at mid-length; inertias are
    the paper's single values used about all three axes (only z matters for the planar example).
    """
    z = np.array([0.0, 0.0, 1.0])
    along = lambda d: np.array([d, 0.0, 0.0])  # noqa: E731
    tree = LinkTree(
        link_names=["base", "link1", "link2"],
        joint_names=["", "joint1", "joint2"],
        parents=[-1, 0, 1],
        kinds=["fixed", "revolute", "revolute"],
        rot=[np.eye(3)] * 3,
        pos=[np.zeros(3), along(side / 2), along(link_length)],
        axis=[z, z, z],
        mass=[base_mass, link_mass, link_mass],
        com=[np.zeros(3), along(link_length / 2), along(link_length / 2)],
        inertia=[base_inertia * np.eye(3), link_inertia * np.eye(3), link_inertia * np.eye(3)],
        lower=[0.0, -np.inf, -np.inf],
        upper=[0.0, np.inf, np.inf],
        frames=[(TIP, 2, np.eye(3), along(link_length))],
    )
    return build_robot(tree)


def sine_torque(t, amplitude, period) -> Float[Array, ""]:
    """The paper's open-loop input ``A sin(2 pi t / T)`` (both joints)."""
    return amplitude * jnp.sin(2.0 * jnp.pi * t / period)


class JointTorques(eqx.Module):
    """``sine_torque`` about the axis of every revolute joint (on the child, reaction on the parent)."""

    bodies: RigidBodies
    joints: tuple
    amplitude: Float[Array, ""]
    period: Float[Array, ""]

    def __call__(self, t, q, w):
        tau = sine_torque(t, self.amplitude, self.period)
        return sum(joint.torque(self.bodies, q, tau) for joint in self.joints)


def input_power(system: Multibody, t, q, w) -> Float[Array, ""]:
    """Power of the applied joint torques, ``Q_applied . w``."""
    qr, wr = system.rigid(q), system.rigid(w, velocity=True)
    return system.applied(t, qr, wr) @ wr


class Settings(eqx.Module):
    """Run settings: the horizon [s] and the solver settings (data where they can be), the structure switches
    (static)."""

    t_final: Float[Array, ""]
    solver: SolverSettings
    flexible: bool = eqx.field(static=True)
    modes: int = eqx.field(static=True)
    momentum: bool = eqx.field(static=True)
    projection: bool = eqx.field(static=True)


def maximal_system(robot: Robot, settings: Settings, frequency, damping, amplitude, period) -> Multibody:
    """The paper's Eq. 17 system: three bodies, two revolute joints, optional momentum rows and modal link."""
    bodies, joints = rigid_bodies(robot), revolute_joints(robot)
    flexible = ()
    if settings.flexible:
        length = robot.frame_pos[robot.frame_index(TIP)][0]
        root = -robot.com[2]  # joint 2 (the clamp) seen from link 2's centre of mass
        flexible = (ModalLink(2, settings.modes, length, robot.mass[2], root, frequency, damping),)
    return Multibody(
        bodies,
        joints,
        JointTorques(bodies, joints, amplitude, period),
        momentum=jnp.zeros(6) if settings.momentum else None,  # the arm starts at rest
        flexible=flexible,
    )


def solve_maximal(
    system: Multibody, robot: Robot, settings: Settings, stabilization: Stabilization, reactions: bool, adjoint=None
):
    """Maximal-coordinate run from the stretched arm at rest (all modal coordinates zero)."""
    start = maximal_state(robot, robot.neutral(), jnp.zeros(robot.nv))
    extra = jnp.zeros(system.n_modal)
    return solve_constrained(
        system,
        jnp.concatenate([start.q, extra]),
        jnp.concatenate([start.w, extra]),
        settings.t_final,
        stabilization,
        settings=settings.solver,
        multipliers=reactions,
        adjoint=adjoint,
    )


def solve_minimal(robot: Robot, settings: Settings, amplitude, period, adjoint=None) -> Trajectory:
    """The rigid reference: the same arm in minimal coordinates, base restricted to the x-y plane."""
    torque = lambda t, q, v: sine_torque(t, amplitude, period) * jnp.ones(robot.n_joints)  # noqa: E731
    return simulate(
        robot, robot.neutral(), jnp.zeros(robot.nv), settings.t_final, torque, BaseMotion.planar((0.0, 0.0, 1.0)),
        settings=settings.solver, adjoint=adjoint,
    )


def yaw(rotation: Float[Array, "3 3"]) -> Float[Array, ""]:
    """Rotation angle about z of a rotation in the x-y plane."""
    return jnp.arctan2(rotation[1, 0], rotation[0, 0])


def wrap(angle):
    """Angle in ``(-pi, pi]``."""
    return jnp.arctan2(jnp.sin(angle), jnp.cos(angle))


class Motion(eqx.Module):
    """What both formulations report on the output grid: base pose, joint angles, end effector."""

    base_position: Float[Array, "T 3"]
    base_angle: Float[Array, " T"]  # rad, unwrapped
    joint_angles: Float[Array, "T 2"]  # rad, relative, unwrapped
    end_effector: Float[Array, "T 3"]
    deflection: Float[Array, "T 3"]  # world-frame elastic displacement of the end effector (0: rigid)


def maximal_motion(system: Multibody, robot: Robot, sol: ConstrainedSolution) -> Motion:
    """Base pose, relative joint angles and the end effector (with the elastic deflection) of a maximal run."""
    rigid_tip = robot.frame_pos[robot.frame_index(TIP)] - robot.com[2]  # in link 2's centre-of-mass frame

    def at(q):
        placements = system.bodies.placements(system.rigid(q))
        angles = jnp.stack([joint.angle(placements) for joint in system.joints])
        tip = system.flexible[0].tip_offset(system.modal(q, 0)) if system.flexible else rigid_tip
        elastic = system.flexible[0].tip_deflection(system.modal(q, 0)) if system.flexible else jnp.zeros(3)
        tip_rot, tip_pos = placements.frame(2)
        return placements.position[0], yaw(placements.rotation[0]), angles, tip_pos + tip_rot @ tip, tip_rot @ elastic

    base, base_angle, angles, tip, deflection = jax.vmap(at)(sol.q)
    return Motion(base, jnp.unwrap(base_angle), jnp.unwrap(angles, axis=0), tip, deflection)


def minimal_motion(robot: Robot, traj: Trajectory) -> Motion:
    """The same quantities from a minimal-coordinate trajectory."""

    def at(q):  # the base's pose is part of q: one kinematics pass, for the end effector
        rot, _ = base_pose(q)
        return yaw(rot), frame_pose(robot, q, TIP)[1]

    base_angle, tip = jax.vmap(at)(traj.q)
    return Motion(traj.q[:, :3], jnp.unwrap(base_angle), traj.q[:, 7:], tip, jnp.zeros_like(tip))
