r"""The paper's planar space robot: a 3-DOF floating base and a 3-link arm of uniform slender links.

Built from the multibody core, not from hand-derived matrices: a :class:`~diffspace.core.robot.Robot` (free-flyer
base, three revolute joints about the world ``z`` axis, :func:`~diffspace.core.robot.build_robot`) whose base
twist is restricted to the plane by :meth:`~diffspace.core.restricted.BaseMotion.planar` (normal ``z``). The
paper's generalised coordinates ``q = [x0, y0, theta0, theta1, theta2, theta3]`` (world base position,
base angle, relative joint angles measured from the downward vertical ``-y``) have rates ``u = q'``; they
map to the free-flyer velocity (base twist in the base frame, the core's convention) by

.. math:: v = P(q)\,u,\qquad v_B = R(\theta_0)^\top [\dot x_0, \dot y_0, 0]^\top,\ \omega_B = [0, 0,
          \dot\theta_0]^\top,\ \dot\theta_J = [\dot\theta_1, \dot\theta_2, \dot\theta_3],

so the paper's eqs. (6)-(8) hold with ``M = P^T H P`` and ``h = P^T (b + H P' u)``, ``H`` and ``b`` from the
core's kinematics pass (``P' u`` by forward-mode differentiation of ``P(q) u`` along ``u``). The contact point
``P`` (the tip of link 3) has the world position, Jacobian ``J_P = J_tip P`` and drift ``J_P' u`` used by
:mod:`diffspace.contact.unilateral`. One kinematics pass per step serves all of them (:meth:`PlanarArm.evaluate`),
which keeps the compiled time step small.

Geometry (paper Fig. 3, Table 1): joint 1 lies ``l0`` below the base centre of mass (base frame), link
``i`` hangs along its ``-y`` axis at zero angle with its centre of mass at ``l_i / 2`` and the next joint
(or the tip) at ``l_i``. With the paper's ``q0 = [0, L, 0, pi/3, -pi/3, arccos(3/5)]``, ``L = 2.5`` m and
``l = 1/1/0.7/0.5`` m, the tip is at ``y = 2.5 - 1 - (0.5 + 0.7 + 0.3) = 0``: exactly on the plane.
Links are slender rods: ``I_zz = m l^2 / 12`` (the planar motion sees only ``I_zz``; the other moments
are set to valid rod values); the base inertia is isotropic ``J0``.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from ...core import dynamics, spatial
from ...core.restricted import BaseMotion
from ...core.robot import LinkTree, Robot, build_robot

TIP = "tip"
N_LINKS = 3


def planar_arm_robot(masses, lengths, base_inertia) -> Robot:
    """The floating base and three slender links as a :class:`Robot` (``masses``/``lengths``: base first)."""
    m, l = [float(x) for x in masses], [float(x) for x in lengths]
    down = lambda d: np.array([0.0, -d, 0.0])  # noqa: E731

    def rod(mass, length):  # slender rod along y: tiny axial moment keeps the 3x3 inertia valid
        transverse = mass * length**2 / 12.0
        return np.diag([transverse, 1e-6 * transverse, transverse])

    tree = LinkTree(
        link_names=["base", "link1", "link2", "link3"],
        joint_names=["", "joint1", "joint2", "joint3"],
        parents=[-1, 0, 1, 2],
        kinds=["fixed", "revolute", "revolute", "revolute"],
        rot=[np.eye(3)] * 4,
        pos=[np.zeros(3), down(l[0]), down(l[1]), down(l[2])],
        axis=[np.array([0.0, 0.0, 1.0])] * 4,
        mass=m,
        com=[np.zeros(3)] + [down(x / 2.0) for x in l[1:]],
        inertia=[np.eye(3) * float(base_inertia)] + [rod(mass, length) for mass, length in zip(m[1:], l[1:])],
        lower=[-np.inf] * 4,
        upper=[np.inf] * 4,
        frames=[(TIP, 3, np.eye(3), down(l[3]))],
    )
    return build_robot(tree)


class TipKinematics(eqx.Module):
    """World position ``(x, y)`` of the contact point, its Jacobian ``J_P`` and drift ``J_P' u``."""

    position: Float[Array, "2"]
    jacobian: Float[Array, "2 6"]
    drift: Float[Array, "2"]


class ArmState(eqx.Module):
    """Mass matrix ``M``, bias ``h`` (paper eq. (6)) and tip kinematics at one state."""

    mass: Float[Array, "6 6"]
    bias: Float[Array, "6"]
    tip: TipKinematics


class PlanarArm(eqx.Module):
    """The planar floating-base arm in the paper's coordinates (see the module text)."""

    robot: Robot
    base_motion: BaseMotion

    @classmethod
    def build(cls, masses, lengths, base_inertia) -> "PlanarArm":
        return cls(planar_arm_robot(masses, lengths, base_inertia), BaseMotion.planar(normal=(0.0, 0.0, 1.0)))

    @staticmethod
    def free_flyer_configuration(q: Float[Array, "6"]) -> Float[Array, "10"]:
        """``[p, quat (xyzw), theta]`` of the free-flyer robot: base at ``(x0, y0, 0)`` turned by ``theta0``
        about ``z``."""
        half = 0.5 * q[2]
        quat = jnp.stack([0.0, 0.0, jnp.sin(half), jnp.cos(half)])
        return jnp.concatenate([q[:2], jnp.zeros(1), quat, q[3:]])

    def free_flyer_velocity(self, q: Float[Array, "6"], u: Float[Array, "6"]) -> Float[Array, "9"]:
        """``v = P(q) u``, restricted to the plane by :class:`BaseMotion` (a no-op on planar twists)."""
        c, s = jnp.cos(q[2]), jnp.sin(q[2])
        v_base = jnp.stack([c * u[0] + s * u[1], -s * u[0] + c * u[1], 0.0])  # R^T [x0', y0', 0]
        v = jnp.concatenate([v_base, jnp.stack([0.0, 0.0, u[2]]), u[3:]])
        return self.base_motion.project(v)

    def velocity_map(self, q: Float[Array, "6"]) -> Float[Array, "9 6"]:
        """``P(q)`` (the velocity map is linear in ``u``)."""
        return jax.jacfwd(lambda u: self.free_flyer_velocity(q, u))(jnp.zeros(6))

    def evaluate(self, q: Float[Array, "6"], u: Float[Array, "6"]) -> ArmState:
        """Everything one time step needs at ``(q, u)``, from one pass of the core's kinematics:
        ``M = P^T H P``, ``h = P^T (b + H P' u)`` (paper eqs. (7), (8)) and the tip kinematics."""
        velocity_map = self.velocity_map(q)
        p_dot_u = jax.jvp(lambda x: self.free_flyer_velocity(x, u), (q,), (u,))[1]
        kin = dynamics.kinematics(self.robot, self.free_flyer_configuration(q), velocity_map @ u)
        h_full = dynamics.mass_matrix_from_kinematics(self.robot, kin)
        b_full = dynamics.bias_from_kinematics(self.robot, kin)
        return ArmState(
            mass=velocity_map.T @ h_full @ velocity_map,
            bias=velocity_map.T @ (b_full + h_full @ p_dot_u),
            tip=self._tip(q, kin, velocity_map, p_dot_u),
        )

    def _tip(self, q, kin: dynamics.Kinematics, velocity_map, p_dot_u) -> TipKinematics:
        r"""Tip position, ``J_P = J_tip P`` and drift ``J_P' u = J_tip' v + J_tip P' u`` from a kinematics pass.

        ``J_tip`` is the core's ``frame_jacobian`` formula (world axes) on the pass's body Jacobian; with the
        body's twist ``[v_o; w]`` and velocity-product acceleration ``c = J_i' v`` (both body axes, offset
        ``r`` of the tip), ``J_tip' v = R (c_lin + c_ang x r + w x (v_o + w x r))``: the classical
        acceleration of the tip at zero ``v'``.
        """
        frame = self.robot.frame_index(TIP)
        body = self.robot.frame_bodies[frame]
        offset = self.robot.frame_pos[frame]
        rot_base, pos_base = dynamics.base_pose(self.free_flyer_configuration(q))
        rot = rot_base @ kin.rot[body]
        jac = kin.jac[body]
        tip_jac = rot @ (jac[:3] - spatial.skew(offset) @ jac[3:])
        twist, bias = kin.twist[body], kin.bias_accel[body]
        omega = twist[3:]
        point_velocity = twist[:3] + jnp.cross(omega, offset)
        drift = rot @ (bias[:3] + jnp.cross(bias[3:], offset) + jnp.cross(omega, point_velocity))
        return TipKinematics(
            position=(pos_base + rot_base @ kin.pos[body] + rot @ offset)[:2],
            jacobian=(tip_jac @ velocity_map)[:2],
            drift=(drift + tip_jac @ p_dot_u)[:2],
        )

    def tip_position(self, q: Float[Array, "6"]) -> Float[Array, "2"]:
        return dynamics.frame_pose(self.robot, self.free_flyer_configuration(q), TIP)[1][:2]

    def body_points(self, q: Float[Array, "6"]) -> Float[Array, "5 2"]:
        """Base centre, joints 1-3 and the tip (world ``x, y``) for configuration plots."""
        rots, poss = dynamics.body_placements(self.robot, self.free_flyer_configuration(q))
        return jnp.concatenate([poss[:, :2], self.tip_position(q)[None]])

    def linear_momentum(self, q: Float[Array, "6"], u: Float[Array, "6"]) -> Float[Array, "2"]:
        """World linear momentum ``(p_x, p_y)`` of the whole system (core ``momentum``)."""
        return dynamics.momentum(self.robot, self.free_flyer_configuration(q), self.free_flyer_velocity(q, u))[0][:2]
