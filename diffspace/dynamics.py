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

import equinox as eqx
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


# ----------------------------------------------------------------------------- constrained motion
class BaseMotion(eqx.Module):
    r"""Restriction of the base twist to a subspace: ``free`` (6), ``planar`` (3), ``rail`` (1), ``fixed`` (0).

    ``basis`` is an orthonormal 6x6 change of the base coordinates (base frame, ``[linear; angular]``) and
    ``allowed`` a 0/1 mask over its columns. Being arrays, different restrictions batch under ``vmap``.
    """

    basis: Float[Array, "6 6"]
    allowed: Float[Array, "6"]

    @classmethod
    def free(cls) -> "BaseMotion":
        return cls(jnp.eye(6), jnp.ones(6))

    @classmethod
    def fixed(cls) -> "BaseMotion":
        return cls(jnp.eye(6), jnp.zeros(6))

    @classmethod
    def rail(cls, axis=(0.0, 0.0, 1.0)) -> "BaseMotion":
        """Translation along ``axis`` (base frame) only."""
        frame = _orthonormal_frame(axis)  # columns: axis, e1, e2
        return cls(_block(frame, jnp.eye(3)), jnp.array([1.0, 0, 0, 0, 0, 0]))

    @classmethod
    def planar(cls, normal=(0.0, 1.0, 0.0)) -> "BaseMotion":
        """Translation in the plane normal to ``normal`` and rotation about it (default: base x-z plane)."""
        frame = _orthonormal_frame(normal)  # columns: normal, e1, e2
        lin = frame[:, jnp.array([1, 2, 0])]
        return cls(_block(lin, frame), jnp.array([1.0, 1.0, 0.0, 1.0, 0.0, 0.0]))

    @classmethod
    def named(cls, kind: str, axis=(0.0, 0.0, 1.0)) -> "BaseMotion":
        builders = {"free": cls.free, "fixed": cls.fixed}
        if kind in builders:
            return builders[kind]()
        if kind == "rail":
            return cls.rail(axis)
        if kind == "planar":
            return cls.planar(axis)
        raise ValueError(f"unknown base motion '{kind}' (free, planar, rail, fixed)")

    def project(self, v: Float[Array, " nv"]) -> Float[Array, " nv"]:
        """Velocity with the forbidden base components removed."""
        base = self.basis @ (self.allowed * (self.basis.T @ v[:6]))
        return jnp.concatenate([base, v[6:]])


def _block(a, b):
    return jnp.block([[a, jnp.zeros((3, 3))], [jnp.zeros((3, 3)), b]])


def _orthonormal_frame(direction) -> Float[Array, "3 3"]:
    """Columns ``[d, e1, e2]``: the unit direction and two unit vectors completing a right-handed frame."""
    d = jnp.asarray(direction, dtype=float)
    d = d / jnp.linalg.norm(d)
    helper = jnp.where(jnp.abs(d[0]) < 0.9, jnp.array([1.0, 0, 0]), jnp.array([0, 1.0, 0]))
    e1 = jnp.cross(d, helper)
    e1 = e1 / jnp.linalg.norm(e1)
    return jnp.stack([d, e1, jnp.cross(d, e1)], axis=1)


def masked_solve(h, rhs, basis_change, free_mask):
    r"""Solve ``H a = rhs + Q_c`` with the coordinates ``T u`` masked by ``free_mask`` held at zero acceleration.

    With ``T`` orthonormal and ``m`` the mask, the constrained rows are replaced by ``u_i = 0``:

    .. math:: (M H' M + I - M) u = M T^T rhs, \quad H' = T^T H T, \quad M = \mathrm{diag}(m),

    which is the KKT system ``[H A^T; A 0]`` reduced to the free coordinates with static shapes (the mask
    is data, so one jitted function serves every mode). Returns ``a = T u`` and the generalised
    constraint force ``Q_c = H a - rhs`` (base reaction wrench and joint holding torques).
    """
    h_t = basis_change.T @ h @ basis_change
    r_t = basis_change.T @ rhs
    m = free_mask
    reduced = m[:, None] * h_t * m[None, :] + jnp.diag(1.0 - m)
    u = jax.scipy.linalg.cho_solve(jax.scipy.linalg.cho_factor(reduced), m * r_t)
    accel = basis_change @ u
    constraint = basis_change @ ((1.0 - m) * (h_t @ u - r_t))
    return accel, constraint


def restricted_dynamics(robot: Robot, q, v, tau, base_motion: BaseMotion, joint_free=None):
    """Accelerations and constraint forces with the base restricted and joints with ``joint_free == 0`` held.

    Returns ``(a, Q_c)``; ``Q_c[:6]`` is the reaction wrench on the base (base frame), ``Q_c[6:]`` the
    torques holding the held joints.
    """
    n = robot.n_joints
    joint_free = jnp.ones(n) if joint_free is None else joint_free
    basis_change = jax.scipy.linalg.block_diag(base_motion.basis, jnp.eye(n))
    mask = jnp.concatenate([base_motion.allowed, joint_free])
    rhs = tau - bias_forces(robot, q, v)
    return masked_solve(mass_matrix(robot, q), rhs, basis_change, mask)
