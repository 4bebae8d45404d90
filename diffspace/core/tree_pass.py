r"""The one kinematics pass shared by the O(n) dynamics kernels (ABA, recursive CRBA, RNEA).

Every quantity is expressed in the *inertial frame that coincides with the base frame at this instant*:
Pinocchio's world-frame formulation of its ``aba``/``crba`` with the world placed on the base. Because
that frame is fixed in space, the recursions need no frame changes between a body and its parent (no
``X^T I X`` congruences in the backward passes, only sums), and the derivative of a body-fixed joint
axis is :math:`\dot S_i = v_i \times S_i` [Featherstone 2008, eq. (2.53)]. For body ``i`` with parent
``p`` and joint rate :math:`\dot\theta_i`:

.. math::
    R_i = R_p R^{J}_i, \quad p_i = p_p + R_p\, p^{J}_i, \quad
    S_i = \mathrm{Ad}_{(R_i, p_i)}\, {}^{i}S_i, \quad
    v_i = v_p + S_i \dot\theta_i, \quad c_i = v_i \times S_i \dot\theta_i,

with :math:`(R^J_i, p^J_i)` the joint placement in the parent at the current angle, :math:`{}^iS_i` the
joint axis in the body frame and the base twist :math:`v_0 = [v_B; \omega_B]` (base frame, Pinocchio's free flyer).
Because the frame coincides with the base frame, the base acceleration found in it equals
:math:`\dot v_{0}` of the free-flyer velocity convention, so results compare with Pinocchio directly.

Small-matrix products are written as sums of broadcast products (``_mm3``): XLA fuses those into one
elementwise loop over the batch, several times faster on CPU than a batched ``dot`` of 3x3 matrices.
The recursion over bodies is unrolled in Python (the topology is static), so XLA fuses across bodies;
``diffspace bench`` reports the cost of that choice in compile time.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from . import spatial
from .robot import Robot


class TreeMotion(eqx.Module):
    r"""Bodies in the base-coincident inertial frame (index 0 = base; row 0 of ``subspace`` unused).

    ``rot/pos``: body placements; ``subspace``: joint motion subspaces :math:`S_i`; ``twist``: body
    spatial velocities :math:`v_i`; ``coriolis``: :math:`c_i = v_i \times S_i\dot\theta_i`; ``inertia``:
    rigid spatial inertias :math:`I_i` about the frame origin. Spatial vectors are ``[linear; angular]``.
    """

    rot: Float[Array, "nb 3 3"]
    pos: Float[Array, "nb 3"]
    subspace: Float[Array, "nb 6"]
    twist: Float[Array, "nb 6"]
    coriolis: Float[Array, "nb 6"]
    inertia: Float[Array, "nb 6 6"]


def materialize(values):
    """Ask XLA to store ``values`` rather than fuse their expressions into every consumer.

    In an unrolled recursion each body's result feeds its children; fused, the whole chain could be
    recomputed inside each consumer (O(n^2) work and compile time). The optimisation barrier is the identity
    for values and derivatives. Measured on XLA CPU (jaxlib 0.10): no barrier survives into the compiled
    program and the batch-major kernels compile to the same fusions without them (the CPU fusion heuristics
    already avoid the recomputation; a batch-last variant did recompute through them); they are kept for
    backends whose fusion is more aggressive.
    """
    return jax.lax.optimization_barrier(values)


def mm3(a: Float[Array, "... 3 3"], b: Float[Array, "... 3 3"]) -> Float[Array, "... 3 3"]:
    """``a @ b`` for 3x3 matrices as a sum of broadcast products (fuses into one loop under ``vmap``)."""
    return sum(a[..., :, k, None] * b[..., None, k, :] for k in range(3))


def matvec(a: Float[Array, "... m n"], x: Float[Array, "... n"]) -> Float[Array, "... m"]:
    return jnp.einsum("...ij,...j->...i", a, x)


def inner(x: Float[Array, "... n"], y: Float[Array, "... n"]) -> Float[Array, "..."]:
    return jnp.einsum("...i,...i->...", x, y)


def local_placements(robot: Robot, q_joints: Float[Array, " n"]):
    r"""Joint placements :math:`(R^J_i, p^J_i)` of every body in its parent, ``(nb,3,3), (nb,3)``.

    Rodrigues' formula :math:`R = P(\cos\theta\,(I - aa^T) + \sin\theta\,[a]_\times + aa^T)` is
    expanded so that only ``cos``/``sin`` depend on ``q`` (``P`` the fixed placement, ``a`` the axis);
    a prismatic joint translates by :math:`P a\,\theta`. Entry 0 (the base) is the identity.
    """
    revolute = jnp.asarray(robot.revolute_mask)
    place, axis = robot.placement_rot, robot.axis
    aat = mm3(place, axis[:, :, None] * axis[:, None, :])
    cross_term = mm3(place, spatial.skew(axis))
    angle = jnp.concatenate([jnp.zeros(1), q_joints])
    cos = jnp.where(revolute > 0, jnp.cos(angle), 1.0)[:, None, None]
    sin = (revolute * jnp.sin(angle))[:, None, None]
    rot = (place - aat) * cos + cross_term * sin + aat
    slide = ((1.0 - revolute) * angle)[:, None] * matvec(place, axis)
    return rot, robot.placement_pos + slide


def compact_inertias(robot: Robot, rot: Float[Array, "nb 3 3"], pos: Float[Array, "nb 3"]):
    r"""First moments :math:`h = m c` and rotational inertias :math:`I_o = I_c - m [c]_\times [c]_\times` about
    the frame origin, with the CoM :math:`c = R c_b + p` and :math:`I_c = R I_b R^T` (all bodies at once).
    With the mass ``m`` these are the ten inertial parameters of each body."""
    mass = robot.mass[:, None, None]
    com = matvec(rot, robot.com) + pos
    cx = spatial.skew(com)
    return robot.mass[:, None] * com, mm3(mm3(rot, robot.inertia), jnp.swapaxes(rot, -1, -2)) - mm3(mass * cx, cx)


def parameter_inertia(mass: Float[Array, "..."], moment: Float[Array, "... 3"], rot_inertia: Float[Array, "... 3 3"]):
    """The 6x6 spatial inertia ``[[m 1, -[h]x], [[h]x, I_o]]`` of the ten parameters (:func:`compact_inertias`)."""
    hx = spatial.skew(moment)
    eye = mass[..., None, None] * jnp.broadcast_to(jnp.eye(3), hx.shape)
    return jnp.concatenate([jnp.concatenate([eye, -hx], -1), jnp.concatenate([hx, rot_inertia], -1)], -2)


def _subspaces(robot: Robot, rot: Float[Array, "nb 3 3"], pos: Float[Array, "nb 3"]) -> Float[Array, "nb 6"]:
    """``S_i = [p_i x a_i; a_i]`` (revolute) or ``[a_i; 0]`` (prismatic) with ``a_i = R_i a^b_i`` (all at once)."""
    revolute = jnp.asarray(robot.revolute_mask)[:, None]
    axis = matvec(rot, robot.axis)
    return jnp.concatenate([revolute * jnp.cross(pos, axis) + (1.0 - revolute) * axis, revolute * axis], -1)


def tree_frames(robot: Robot, q_joints: Float[Array, " n"]):
    """Placements ``R_i = R_p R^J_i``, ``p_i = p_p + R_p p^J_i`` and joint subspaces ``S_i`` of every body,
    ``(nb,3,3), (nb,3), (nb,6)``: the kinematics without velocities (all the CRBA needs)."""
    parents = robot.parents
    joint_rot, joint_pos = local_placements(robot, q_joints)
    rot, pos = [jnp.eye(3)], [jnp.zeros(3)]
    for i in range(1, len(parents)):
        p = parents[i]
        if p == 0:  # the base frame is the reference frame: nothing to compose
            rot_i, pos_i = joint_rot[i], joint_pos[i]
        else:
            rot_i, pos_i = mm3(rot[p], joint_rot[i]), pos[p] + matvec(rot[p], joint_pos[i])
        rot_i, pos_i = materialize((rot_i, pos_i))
        rot.append(rot_i)
        pos.append(pos_i)
    rot, pos = jnp.stack(rot), jnp.stack(pos)
    return rot, pos, _subspaces(robot, rot, pos)


def tree_motion(robot: Robot, q: Float[Array, " nq"], v: Float[Array, " nv"]) -> TreeMotion:
    """:func:`tree_frames` with twists ``v_i = v_p + S_i qdot_i``, velocity-product accelerations and inertias."""
    rot, pos, sub = tree_frames(robot, q[7:])
    rates = jnp.concatenate([jnp.zeros(1), v[6:]])
    twist = path_sums(robot.parents, jnp.concatenate([v[None, :6], sub[1:] * v[6:, None]]))
    coriolis = jax.vmap(spatial.cross_motion)(twist, sub * rates[:, None])
    inertia = parameter_inertia(robot.mass, *compact_inertias(robot, rot, pos))
    return TreeMotion(rot, pos, sub, twist, coriolis, inertia)


def subtree_sums(parents, values: Float[Array, "nb ..."]) -> Float[Array, "nb ..."]:
    """``out[i] = sum of values over the subtree rooted at body i`` (leaves first, unrolled)."""
    acc = [values[i] for i in range(len(parents))]
    for i in range(len(parents) - 1, 0, -1):
        acc[parents[i]] = materialize(acc[parents[i]] + acc[i])
    return jnp.stack(acc)


def path_sums(parents, values: Float[Array, "nb ..."]) -> Float[Array, "nb ..."]:
    """``out[i] = sum of values over body i and its ancestors`` (root first, unrolled)."""
    acc = [values[0]]
    for i in range(1, len(parents)):
        acc.append(materialize(acc[parents[i]] + values[i]))
    return jnp.stack(acc)
