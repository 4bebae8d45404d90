r"""Floating-base rigid-body dynamics (Featherstone's spatial algebra, Pinocchio's free-flyer convention).

Configuration ``q = [p (3, world), quat (4, xyzw, base->world), theta (n)]`` and velocity
``v = [v_B (3), omega_B (3), theta_dot (n)]`` with the base twist expressed in the base frame. Spatial
vectors are ``[linear; angular]``. The equations of motion are

.. math::  H(q)\,\dot v + b(q, v) = \tau,

with ``H`` from the composite-rigid-body algorithm (CRBA) and ``b`` (Coriolis, centrifugal and optionally
gravity) from the recursive Newton-Euler algorithm (RNEA) [Featherstone 2008, ch. 5-6]; this is the
paper's eq. (8) with ``H`` of eq. (7). All functions are pure and unroll the tree at trace time.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from . import spatial
from .robot import Robot, joint_transforms, motion_subspace


def base_pose(q: Float[Array, " nq"]):
    """World rotation and position of the base."""
    return spatial.quat_to_rotation(q[3:7]), q[:3]


def body_placements(robot: Robot, q: Float[Array, " nq"]):
    """World placement (R, p) of every body."""
    rots, poss = joint_transforms(robot, q[7:])
    world_r, world_p = [None] * len(robot.parents), [None] * len(robot.parents)
    world_r[0], world_p[0] = base_pose(q)
    for i in range(1, len(robot.parents)):
        par = robot.parents[i]
        world_r[i], world_p[i] = spatial.compose(world_r[par], world_p[par], rots[i - 1], poss[i - 1])
    return world_r, world_p


def _body_velocities(robot: Robot, q, v):
    """Local joint placements, motion subspaces and body twists (each in its body frame)."""
    rots, poss = joint_transforms(robot, q[7:])
    subspaces = [None] + [motion_subspace(robot, i) for i in range(1, len(robot.parents))]
    twists = [v[:6]]
    for i in range(1, len(robot.parents)):
        parent_twist = spatial.motion_to_child(rots[i - 1], poss[i - 1], twists[robot.parents[i]])
        twists.append(parent_twist + subspaces[i] * v[5 + i])
    return rots, poss, subspaces, twists


def _body_inertias(robot: Robot):
    return [spatial.spatial_inertia(robot.mass[i], robot.com[i], robot.inertia[i]) for i in range(len(robot.parents))]


def mass_matrix(robot: Robot, q: Float[Array, " nq"]) -> Float[Array, "nv nv"]:
    """Joint-space inertia matrix ``H(q)`` by the composite-rigid-body algorithm."""
    rots, poss = joint_transforms(robot, q[7:])
    nb = len(robot.parents)
    transforms = [None] + [spatial.motion_transform(rots[i - 1], poss[i - 1]) for i in range(1, nb)]
    composite = _body_inertias(robot)
    for i in reversed(range(1, nb)):
        x = transforms[i]
        composite[robot.parents[i]] = composite[robot.parents[i]] + x.T @ composite[i] @ x
    nv = robot.nv
    h = jnp.zeros((nv, nv))
    for i in range(1, nb):
        force = composite[i] @ motion_subspace(robot, i)
        col = 5 + i
        h = h.at[col, col].set(motion_subspace(robot, i) @ force)
        j = i
        while robot.parents[j] != 0:
            force = transforms[j].T @ force
            j = robot.parents[j]
            h = h.at[5 + j, col].set(motion_subspace(robot, j) @ force)
            h = h.at[col, 5 + j].set(h[5 + j, col])
        force = transforms[j].T @ force
        h = h.at[:6, col].set(force)
        h = h.at[col, :6].set(force)
    return h.at[:6, :6].set(composite[0])


def bias_forces(
    robot: Robot, q: Float[Array, " nq"], v: Float[Array, " nv"], gravity: Float[Array, "3"] | None = None
) -> Float[Array, " nv"]:
    """Coriolis and centrifugal forces ``b(q, v)`` (plus gravity if a world ``gravity`` vector is given), RNEA."""
    return inverse_dynamics(robot, q, v, jnp.zeros(robot.nv), gravity)


def inverse_dynamics(robot: Robot, q, v, a, gravity=None) -> Float[Array, " nv"]:
    """Generalised forces ``tau = H(q) a + b(q, v)`` by the recursive Newton-Euler algorithm."""
    rots, poss, subspaces, twists = _body_velocities(robot, q, v)
    base_accel = a[:6]
    if gravity is not None:
        rot_b, _ = base_pose(q)
        base_accel = base_accel - jnp.concatenate([rot_b.T @ jnp.asarray(gravity), jnp.zeros(3)])
    inertias = _body_inertias(robot)
    accels = [base_accel]
    forces = [inertias[0] @ base_accel + spatial.cross_force(twists[0], inertias[0] @ twists[0])]
    for i in range(1, len(robot.parents)):
        joint_rate = subspaces[i] * v[5 + i]
        acc = (
            spatial.motion_to_child(rots[i - 1], poss[i - 1], accels[robot.parents[i]])
            + subspaces[i] * a[5 + i]
            + spatial.cross_motion(twists[i], joint_rate)
        )
        accels.append(acc)
        forces.append(inertias[i] @ acc + spatial.cross_force(twists[i], inertias[i] @ twists[i]))
    tau = [None] * len(robot.parents)
    for i in reversed(range(1, len(robot.parents))):
        tau[i] = subspaces[i] @ forces[i]
        par = robot.parents[i]
        forces[par] = forces[par] + spatial.force_to_parent(rots[i - 1], poss[i - 1], forces[i])
    return jnp.concatenate([forces[0]] + [jnp.atleast_1d(t) for t in tau[1:]])


def forward_dynamics(robot: Robot, q, v, tau) -> Float[Array, " nv"]:
    """Accelerations ``H^{-1}(tau - b)`` of the free-floating system (Cholesky of the CRBA matrix)."""
    h = mass_matrix(robot, q)
    rhs = tau - bias_forces(robot, q, v)
    return jax.scipy.linalg.cho_solve(jax.scipy.linalg.cho_factor(h), rhs)


def base_momentum(robot: Robot, q, v) -> Float[Array, "6"]:
    """Spatial momentum of the whole system about the base origin, in the base frame."""
    rots, poss, _, twists = _body_velocities(robot, q, v)
    inertias = _body_inertias(robot)
    moms = [inertias[i] @ twists[i] for i in range(len(robot.parents))]
    for i in reversed(range(1, len(robot.parents))):
        par = robot.parents[i]
        moms[par] = moms[par] + spatial.force_to_parent(rots[i - 1], poss[i - 1], moms[i])
    return moms[0]


def momentum(robot: Robot, q, v) -> tuple[Float[Array, "3"], Float[Array, "3"]]:
    """Linear momentum and angular momentum about the world origin, both in the world frame."""
    rot_b, pos_b = base_pose(q)
    h = spatial.force_to_parent(rot_b, pos_b, base_momentum(robot, q, v))
    return h[:3], h[3:]


def center_of_mass(robot: Robot, q) -> Float[Array, "3"]:
    """World position of the system's centre of mass."""
    rots, poss = body_placements(robot, q)
    weighted = sum(robot.mass[i] * (poss[i] + rots[i] @ robot.com[i]) for i in range(len(robot.parents)))
    return weighted / robot.total_mass


def kinetic_energy(robot: Robot, q, v) -> Float[Array, ""]:
    return 0.5 * v @ mass_matrix(robot, q) @ v


def frame_pose(robot: Robot, q, name: str):
    """World rotation and position of a named frame (any link of the description, merged or not)."""
    k = robot.frame_index(name)
    rots, poss = body_placements(robot, q)
    body = robot.frame_bodies[k]
    return spatial.compose(rots[body], poss[body], robot.frame_rot[k], robot.frame_pos[k])


def frame_jacobian(robot: Robot, q, name: str, reference: str = "world") -> Float[Array, "6 nv"]:
    """Jacobian of a frame's twist ``[v; omega]`` with respect to ``v``.

    ``reference="world"``: velocity of the frame origin and angular velocity in world axes (Pinocchio's
    LOCAL_WORLD_ALIGNED); ``"local"``: both in the frame's own axes (Pinocchio's LOCAL).
    """
    k = robot.frame_index(name)
    rots, poss = body_placements(robot, q)
    body = robot.frame_bodies[k]
    rot_f, pos_f = spatial.compose(rots[body], poss[body], robot.frame_rot[k], robot.frame_pos[k])
    rot_b, pos_b = rots[0], poss[0]
    cols = jnp.zeros((6, robot.nv))
    lin_base = jnp.concatenate([rot_b, -spatial.skew(pos_f - pos_b) @ rot_b], axis=1)
    cols = cols.at[:3, :6].set(lin_base).at[3:, 3:6].set(rot_b)
    j = body
    while j != 0:
        axis_w = rots[j] @ robot.axis[j]
        if robot.joint_kinds[j] == "revolute":
            col = jnp.concatenate([jnp.cross(axis_w, pos_f - poss[j]), axis_w])
        else:
            col = jnp.concatenate([axis_w, jnp.zeros(3)])
        cols = cols.at[:, 5 + j].set(col)
        j = robot.parents[j]
    if reference == "local":
        return jnp.concatenate([rot_f.T @ cols[:3], rot_f.T @ cols[3:]])
    if reference != "world":
        raise ValueError(f"reference must be 'world' or 'local', got {reference!r}")
    return cols


def generalized_jacobian(robot: Robot, q, name: str) -> Float[Array, "6 n"]:
    r"""Generalised Jacobian of a free-floating arm [Umetani & Yoshida 1989].

    With zero system momentum the base twist follows the joint rates, :math:`v_b = -H_b^{-1} H_{bm}\dot\theta`,
    so the frame twist (world axes) is :math:`J^* \dot\theta` with :math:`J^* = J_m - J_b H_b^{-1} H_{bm}`.
    """
    h = mass_matrix(robot, q)
    jac = frame_jacobian(robot, q, name, "world")
    base_from_joints = -jnp.linalg.solve(h[:6, :6], h[:6, 6:])
    return jac[:, 6:] + jac[:, :6] @ base_from_joints


def configuration_derivative(q, v, quat_gain: float = 10.0) -> Float[Array, " nq"]:
    r"""``dq/dt`` for the free-flyer: :math:`\dot p = R v_B`, :math:`\dot{\mathbf q} = \tfrac12 \mathbf q \otimes
    [\omega_B, 0] + k (1 - |\mathbf q|^2)\mathbf q` (the last term pulls the quaternion back to unit norm)."""
    quat = q[3:7]
    rot = spatial.quat_to_rotation(quat)
    omega = jnp.concatenate([v[3:6], jnp.zeros(1)])
    quat_dot = 0.5 * spatial.quat_multiply(quat, omega) + quat_gain * (1.0 - quat @ quat) * quat
    return jnp.concatenate([rot @ v[:3], quat_dot, v[6:]])
