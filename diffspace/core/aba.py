r"""Articulated-body algorithm for the floating base: forward dynamics in O(n) [Featherstone 2008, sec. 7.3].

The base is the root with a 6-DOF joint (the floating-base variant of Featherstone's sec. 9.4; Pinocchio's free-flyer). Working in the inertial frame coinciding with the base frame (:mod:`diffspace.core.tree_pass`),
the three passes are, for every body ``i`` with parent ``p`` (leaves first in the second pass):

.. math::
    &I^A_i = I_i,\quad p^A_i = v_i \times^* I_i v_i - f^{ext}_i \\
    &U_i = I^A_i S_i,\quad D_i = S_i^T U_i,\quad u_i = \tau_i - S_i^T p^A_i \\
    &I^A_p \mathrel{+}= I^A_i - U_i D_i^{-1} U_i^T,\quad
     p^A_p \mathrel{+}= p^A_i + (I^A_i - U_i D_i^{-1} U_i^T) c_i + U_i D_i^{-1} u_i \\
    &a_0 = (I^A_0)^{-1} (\tau_0 - p^A_0) \\
    &a_i = a_p + c_i,\quad \ddot\theta_i = D_i^{-1}(u_i - U_i^T a_i),\quad a_i \mathrel{+}= S_i \ddot\theta_i

(eqs. 7.37-7.44 of Featherstone with every :math:`{}^iX_p` the identity). ``tau[:6]`` is the wrench on
the base in the base frame, exactly the generalised force of the free-flyer coordinates. Gravity enters as
the external force :math:`f^{ext}_i = I_i [g; 0]` (``g`` in base axes). The 6x6 base system is solved by
Gauss-Jordan inversion written out for six pivots (symmetric positive definite, no pivoting needed),
which XLA fuses; a LAPACK call per sample costs more than the whole elimination.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from . import spatial
from .robot import Robot
from .tree_pass import TreeMotion, inner, materialize, matvec, tree_motion


def solve_spd6(a: Float[Array, "6 6"], b: Float[Array, " 6"]) -> Float[Array, " 6"]:
    """Solve ``a x = b`` for a symmetric positive-definite 6x6 ``a``: Gauss-Jordan inversion of ``a`` alone
    (no pivoting needed), then a product, so that ``x`` stays linear in ``b`` for JAX's transposition."""
    aug = jnp.concatenate([a, jnp.eye(6)], axis=1)
    rows = jnp.arange(6)[:, None]
    for k in range(6):
        pivot_row = aug[k] / aug[k, k]
        aug = jnp.where(rows == k, pivot_row[None, :], aug - aug[:, k, None] * pivot_row[None, :])
    return matvec(aug[:, 6:], b)


def articulated_accelerations(
    robot: Robot, motion: TreeMotion, tau: Float[Array, " nv"], gravity_base: Float[Array, "3"] | None = None
) -> Float[Array, " nv"]:
    """Accelerations ``dv/dt`` from the shared kinematics pass: the ABA's backward and forward passes.

    ``gravity_base``: the gravity field in *base* axes (``R_B^T g``), or ``None`` for none.
    """
    parents = robot.parents
    nb = len(parents)
    inertia, sub, coriolis = motion.inertia, motion.subspace, motion.coriolis
    momentum = matvec(inertia, motion.twist)
    bias = jax.vmap(spatial.cross_force)(motion.twist, momentum)
    if gravity_base is not None:
        bias = bias - matvec(inertia, jnp.concatenate([gravity_base, jnp.zeros(3)]))
    art_inertia = [inertia[i] for i in range(nb)]
    art_bias = [bias[i] for i in range(nb)]
    u_vec, d_inv, u_res = [None] * nb, [None] * nb, [None] * nb
    for i in range(nb - 1, 0, -1):
        s_i = sub[i]
        u_vec[i] = matvec(art_inertia[i], s_i)
        d_inv[i] = 1.0 / inner(s_i, u_vec[i])
        u_res[i] = tau[5 + i] - inner(s_i, art_bias[i])
        scaled = u_vec[i] * d_inv[i]
        reduced = art_inertia[i] - scaled[:, None] * u_vec[i][None, :]
        p = parents[i]
        art_inertia[p] = materialize(art_inertia[p] + reduced)  # separately: one depends on tau, one not
        art_bias[p] = materialize(art_bias[p] + art_bias[i] + matvec(reduced, coriolis[i]) + scaled * u_res[i])
    base_accel = solve_spd6(art_inertia[0], tau[:6] - art_bias[0])
    accel, joint_accel = [base_accel], []
    for i in range(1, nb):
        a_i = accel[parents[i]] + coriolis[i]
        qdd = (u_res[i] - inner(u_vec[i], a_i)) * d_inv[i]
        accel.append(materialize(a_i + sub[i] * qdd))
        joint_accel.append(qdd)
    return jnp.concatenate([base_accel, jnp.stack(joint_accel)]) if joint_accel else base_accel


def articulated_body_algorithm(
    robot: Robot, q: Float[Array, " nq"], v: Float[Array, " nv"], tau: Float[Array, " nv"], gravity=None
) -> Float[Array, " nv"]:
    """Forward dynamics ``dv/dt`` of the free-floating tree by the O(n) articulated-body algorithm.

    ``gravity``: optional world gravity vector (rotated into base axes here).
    """
    g_base = None if gravity is None else spatial.quat_to_rotation(q[3:7]).T @ jnp.asarray(gravity)
    return articulated_accelerations(robot, tree_motion(robot, q, v), tau, g_base)

