r"""Joint constraints between rigid bodies in maximal coordinates (:mod:`.rigid`): revolute, weld, driven angle.

A joint connects two *anchors*: frames fixed in a body (or in the world, body :data:`~.rigid.WORLD`), given by
their origin and axes in the body frame. With ``C_p, p_p`` and ``C_c, p_c`` the world axes and origins of the
parent and child anchors (``c_x, c_y, c_z`` the columns of ``C``):

* :class:`Revolute` (5 rows, paper Eqs. 5-6): the anchor origins coincide and the child's ``z`` axis (the joint
  axis) stays normal to the parent's ``x`` and ``y`` axes,

  .. math:: p_p - p_c = 0, \qquad c_{p,x}\cdot c_{c,z} = 0, \qquad c_{p,y}\cdot c_{c,z} = 0.

  These two dot products are the independent content of the paper's ``s_i x s_j = 0`` (Eq. 6), whose three
  components have rank two on the manifold and would make the KKT matrix singular.
* :class:`Weld` (6 rows): origins coincide and the frames are aligned,
  ``c_{p,x}\cdot c_{c,y} = c_{p,y}\cdot c_{c,z} = c_{p,z}\cdot c_{c,x} = 0`` (full rank at alignment).
* :class:`JointAngle` (1 row, rheonomic): a revolute joint's angle follows a prescribed ``theta_d(t)``,
  ``wrap(theta(q) - theta_d(t)) = 0`` with ``theta = atan2(c_{p,y}\cdot c_{c,x}, c_{p,x}\cdot c_{c,x})``.

Every joint is called as ``joint(placements, t)`` (:meth:`.rigid.RigidBodies.placements`, all body poses
computed once) and has ``size`` rows; ``type(joint).rows(joints, placements, t)`` evaluates several joints
of one type at once (one batched computation: what :class:`.multibody.Multibody` does, which keeps the
compiled derivatives of the constraints small). For the point rows ``p_p - p_c`` the
multipliers are the force the parent exerts on the child (world axes): the child's generalised constraint
force is ``-B^T lambda`` and ``d(p_p - p_c)/dv_c = -I``.
"""

from __future__ import annotations

from typing import Callable, ClassVar

import equinox as eqx
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from .rigid import Placements, RigidBodies


class Anchor(eqx.Module):
    """A frame fixed in ``body`` (or the world, ``body = -1``): origin and axes in the body frame."""

    body: int = eqx.field(static=True)
    position: Float[Array, "3"] = eqx.field(converter=lambda x: jnp.asarray(x, dtype=float))
    rotation: Float[Array, "3 3"] = eqx.field(
        converter=lambda x: jnp.asarray(x, dtype=float), default_factory=lambda: jnp.eye(3)
    )

    def frame(self, placements: Placements):
        """World axes (columns) and origin of the anchor."""
        axes, origins = anchor_frames(placements, (self,))
        return axes[0], origins[0]


def anchor_frames(placements: Placements, anchors) -> tuple[Float[Array, "k 3 3"], Float[Array, "k 3"]]:
    """World axes and origins of several anchors, gathered and transformed in one batch."""
    rot, pos = placements.gather(np.array([a.body for a in anchors]))
    local_rot = jnp.stack([a.rotation for a in anchors])
    local_pos = jnp.stack([a.position for a in anchors])
    return rot @ local_rot, pos + jnp.einsum("kij,kj->ki", rot, local_pos)


def _dot_columns(a, i: int, b, j: int) -> Float[Array, " k"]:
    """``a[k][:, i] . b[k][:, j]`` for every ``k``."""
    return jnp.sum(a[:, :, i] * b[:, :, j], axis=1)


class _PairJoint(eqx.Module):
    """A joint between two anchors whose rows depend on the two anchor frames only."""

    parent: eqx.AbstractVar[Anchor]
    child: eqx.AbstractVar[Anchor]

    @staticmethod
    def _residual(cp, pp, cc, pc) -> Float[Array, "k r"]:
        raise NotImplementedError

    @classmethod
    def rows(cls, joints, placements: Placements, t) -> Float[Array, "k r"]:
        """Rows of several joints of this type (one per row of the result)."""
        cp, pp = anchor_frames(placements, [j.parent for j in joints])
        cc, pc = anchor_frames(placements, [j.child for j in joints])
        return cls._residual(cp, pp, cc, pc)

    def __call__(self, placements: Placements, t) -> Float[Array, " r"]:
        return self.rows((self,), placements, t)[0]


class Revolute(_PairJoint):
    """Revolute joint about the anchors' common ``z`` axis (5 rows)."""

    parent: Anchor
    child: Anchor
    size: ClassVar[int] = 5

    @staticmethod
    def _residual(cp, pp, cc, pc):
        return jnp.concatenate([pp - pc, jnp.stack([_dot_columns(cp, 0, cc, 2), _dot_columns(cp, 1, cc, 2)], 1)], 1)

    def angle(self, placements: Placements) -> Float[Array, ""]:
        """Child relative to parent about the joint axis, in ``(-pi, pi]``."""
        cp, _ = self.parent.frame(placements)
        cc, _ = self.child.frame(placements)
        return jnp.arctan2(cp[:, 1] @ cc[:, 0], cp[:, 0] @ cc[:, 0])

    def axis(self, placements: Placements) -> Float[Array, "3"]:
        """Joint axis in world axes (the parent anchor's ``z``)."""
        return self.parent.frame(placements)[0][:, 2]

    def torque(self, bodies: RigidBodies, q, tau: Float[Array, ""]) -> Float[Array, " nv"]:
        """Generalised force of a motor torque ``tau`` about the axis: ``+tau`` on the child, ``-tau`` on the parent."""
        moment = tau * self.axis(bodies.placements(q))
        zero = jnp.zeros(3)
        return bodies.wrench(q, self.child.body, zero, moment) + bodies.wrench(q, self.parent.body, zero, -moment)


class Weld(_PairJoint):
    """Rigid connection: anchor origins and axes coincide (6 rows)."""

    parent: Anchor
    child: Anchor
    size: ClassVar[int] = 6

    @staticmethod
    def _residual(cp, pp, cc, pc):
        axes = jnp.stack([_dot_columns(cp, 0, cc, 1), _dot_columns(cp, 1, cc, 2), _dot_columns(cp, 2, cc, 0)], 1)
        return jnp.concatenate([pp - pc, axes], 1)


class JointAngle(eqx.Module):
    """Rheonomic drive of a revolute joint's angle: ``wrap(theta(q) - target(t)) = 0`` (1 row).

    ``target`` maps time to the angle (rad), e.g. ``RestToRest(...).angle`` from
    :mod:`diffspace.actuation.drive`; its multiplier is minus the torque the drive exerts on the child."""

    joint: Revolute
    target: Callable
    size: ClassVar[int] = 1

    @classmethod
    def rows(cls, joints, placements: Placements, t) -> Float[Array, "k 1"]:
        return jnp.stack([j(placements, t) for j in joints])

    def __call__(self, placements: Placements, t) -> Float[Array, "1"]:
        cp, _ = self.joint.parent.frame(placements)
        cc, _ = self.joint.child.frame(placements)
        sin, cos = cp[:, 1] @ cc[:, 0], cp[:, 0] @ cc[:, 0]
        goal = self.target(t)
        sg, cg = jnp.sin(goal), jnp.cos(goal)
        return jnp.arctan2(sin * cg - cos * sg, cos * cg + sin * sg)[None]
