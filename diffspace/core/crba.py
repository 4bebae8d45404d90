r"""Composite-rigid-body mass matrix, RNEA bias and a branch-sparse :math:`LTDL` solve [Featherstone 2008, ch. 6].

All from the shared kinematics pass (:mod:`diffspace.core.tree_pass`, base-coincident inertial frame; the CRBA
uses only its velocity-free part :func:`~diffspace.core.tree_pass.tree_frames`), where no frame changes are
needed between bodies:

* **CRBA** (sec. 6.2): composite inertias :math:`I^c_i = I_i + \sum_{j \in \mathrm{children}(i)} I^c_j`,
  summed as the ten parameters :math:`(m, h = m c, I_o)` (about the frame origin, Pinocchio's
  form), :math:`F_i = I^c_i S_i = [m v - h \times \omega;\ h \times v + I_o \omega]` for
  :math:`S_i = [v; \omega]`, then :math:`H_{ij} = S_i^T F_j` for :math:`i \preceq j` (``i`` an ancestor of
  ``j`` or ``j`` itself), zero for bodies on different branches; the base block is :math:`I^c_0` and the
  base/joint block :math:`F_j`. The joint block is formed for all pairs at once and masked by the
  (static) ancestor relation.
* **RNEA bias** (sec. 5.3): :math:`a_i = a_p + c_i` (:math:`a_0 = -[g; 0]`),
  :math:`f_i = I_i a_i + v_i \times^* I_i v_i`, composite forces :math:`f^c_i = f_i + \sum f^c_j` over
  children, :math:`b_i = S_i^T f^c_i` and :math:`b_0 = f^c_0`.
* **LTDL** (sec. 6.5, Table 6.3): :math:`H = L^T D L` with the expanded parent array :math:`\lambda`
  (the six base coordinates form a chain, each joint hangs below its parent body's last coordinate).
  Row ``k`` of ``L`` is non-zero only at the ancestors of ``k``, so the factorisation creates no fill-in
  and skips all pairs on different branches. Each elimination step is one masked rank-one update of the
  ancestor block.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from . import spatial
from .robot import Robot
from .tree_pass import (
    TreeMotion, compact_inertias, inner, matvec, parameter_inertia, path_sums, subtree_sums, tree_motion,
)


def ancestor_mask(parents) -> np.ndarray:
    """``mask[i, j] = 1`` when body ``i`` is ``j`` or an ancestor of ``j`` (static, numpy)."""
    nb = len(parents)
    mask = np.eye(nb)
    for j in range(1, nb):
        mask[:, j] = np.maximum(mask[:, j], mask[:, parents[j]])
    return mask


@functools.lru_cache(maxsize=None)
def ancestor_pairs(parents: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Static ``(ancestor, descendant, on_one_branch)`` tables over the joint pairs ``(r, c)`` (joint ``k`` is
    body ``k + 1``): for ``r`` an ancestor of ``c`` (or ``c`` itself) ``(r, c, 1)``, for ``c`` an ancestor of
    ``r`` ``(c, r, 1)``, and ``(0, 0, 0)`` for joints on different branches."""
    on_path = ancestor_mask(parents)[1:, 1:] > 0
    rows, cols = np.indices(on_path.shape)
    ancestor = np.where(on_path, rows, np.where(on_path.T, cols, 0))
    descendant = np.where(on_path, cols, np.where(on_path.T, rows, 0))
    return ancestor, descendant, (on_path | on_path.T).astype(float)


def composite_mass_matrix(
    robot: Robot, rot: Float[Array, "nb 3 3"], pos: Float[Array, "nb 3"], subspace: Float[Array, "nb 6"]
) -> Float[Array, "nv nv"]:
    """Joint-space inertia ``H(q)`` by the composite-rigid-body algorithm (module docstring)."""
    nb = len(robot.parents)
    moment, rot_inertia = compact_inertias(robot, rot, pos)
    packed = jnp.concatenate([robot.mass[:, None], moment, rot_inertia.reshape(nb, 9)], axis=1)
    comp = subtree_sums(robot.parents, packed)
    mass_c, moment_c, inertia_c = comp[:, 0], comp[:, 1:4], comp[:, 4:].reshape(nb, 3, 3)
    lin, ang = subspace[1:, :3], subspace[1:, 3:]
    inertia_ang = sum(inertia_c[1:, :, k] * ang[:, None, k] for k in range(3))  # I_o w, as elementwise loops
    force = jnp.concatenate([mass_c[1:, None] * lin - jnp.cross(moment_c[1:], ang),
                             jnp.cross(moment_c[1:], lin) + inertia_ang], axis=1)  # F_j, (n, 6)
    ancestor, descendant, on_one_branch = ancestor_pairs(tuple(robot.parents))
    sub_a, force_d = subspace[1:][ancestor], force[descendant]
    joints = on_one_branch * sum(sub_a[..., k] * force_d[..., k] for k in range(6))  # S_a^T F_d
    top = jnp.concatenate([parameter_inertia(mass_c[0], moment_c[0], inertia_c[0]), force.T], axis=1)
    return jnp.concatenate([top, jnp.concatenate([force, joints], axis=1)], axis=0)


def rnea_bias(robot: Robot, motion: TreeMotion, gravity_base: Float[Array, "3"] | None = None) -> Float[Array, " nv"]:
    """Coriolis, centrifugal and (optionally) gravity forces ``b(q, v)`` by the RNEA (module docstring).

    ``gravity_base``: the gravity field in *base* axes (``R_B^T g``), or ``None`` for none.
    """
    accel = path_sums(robot.parents, motion.coriolis)
    if gravity_base is not None:
        accel = accel - jnp.concatenate([gravity_base, jnp.zeros(3)])
    momentum = matvec(motion.inertia, motion.twist)
    forces = matvec(motion.inertia, accel) + jax.vmap(spatial.cross_force)(motion.twist, momentum)
    composite = subtree_sums(robot.parents, forces)
    return jnp.concatenate([composite[0], inner(motion.subspace[1:], composite[1:])])


def dof_parents(parents) -> tuple[int, ...]:
    """Expanded parent array over the ``nv`` coordinates: base chain 0-5, joint ``j`` below its parent body."""
    last_dof = lambda body: 5 if body == 0 else 5 + body  # noqa: E731
    return (-1, 0, 1, 2, 3, 4) + tuple(last_dof(parents[i]) for i in range(1, len(parents)))


def _strict_ancestors(dof_parent) -> np.ndarray:
    nv = len(dof_parent)
    mask = np.zeros((nv, nv))
    for k in range(nv):
        j = dof_parent[k]
        while j >= 0:
            mask[k, j] = 1.0
            j = dof_parent[j]
    return mask


def ltdl_factor(h: Float[Array, "nv nv"], dof_parent) -> Float[Array, "nv nv"]:
    """Factor ``H = L^T D L`` in place: returns ``L`` strictly below the diagonal (ancestor entries only)
    and ``D`` on it (Featherstone's Table 6.3, one masked rank-one update per coordinate, last first)."""
    anc = _strict_ancestors(dof_parent)
    cols = np.arange(len(dof_parent))
    for k in range(len(dof_parent) - 1, 0, -1):
        row = h[k] * anc[k]
        scaled = row / h[k, k]
        h = h - scaled[:, None] * row[None, :]
        h = jnp.where((cols == k)[:, None] & (anc[k] > 0)[None, :], scaled[None, :], h)
    return h


def ltdl_solve(factor: Float[Array, "nv nv"], dof_parent, rhs: Float[Array, " nv"]) -> Float[Array, " nv"]:
    """Solve ``L^T D L x = rhs`` with the output of :func:`ltdl_factor` (Featherstone's Table 6.4)."""
    anc = _strict_ancestors(dof_parent)
    nv = len(dof_parent)
    lower = factor * anc
    y = rhs
    for k in range(nv - 1, 0, -1):  # L^T y = rhs: eliminate k from its ancestors
        y = y - lower[k] * y[k]
    y = y / jnp.diagonal(factor)
    for k in range(1, nv):  # L x = y, root first
        y = y.at[k].add(-inner(lower[k], y))
    return y


def crba_forward_dynamics(
    robot: Robot, q: Float[Array, " nq"], v: Float[Array, " nv"], tau: Float[Array, " nv"]
) -> Float[Array, " nv"]:
    """``H^{-1}(tau - b)`` with ``H`` from the CRBA, ``b`` from the RNEA and the branch-sparse LTDL solve."""
    motion = tree_motion(robot, q, v)
    dof_parent = dof_parents(robot.parents)
    factor = ltdl_factor(composite_mass_matrix(robot, motion.rot, motion.pos, motion.subspace), dof_parent)
    return ltdl_solve(factor, dof_parent, tau - rnea_bias(robot, motion))
