r"""Dynamics with a restricted base and held joints: the base twist limited to a subspace (free, planar, rail,
fixed: `BaseMotion`) and selected joints held still, one masked solve per call.

With the orthonormal basis change $T$ and the 0/1 mask $m$ of the free coordinates $u$ ($a = T u$), the
constrained rows are replaced by $u_i = 0$:

$$(M H' M + I - M)\,u = M\,T^\top (\tau - b), \qquad H' = T^\top H T, \qquad M = \mathrm{diag}(m),$$

the KKT system $[H\ A^\top; A\ 0]$ reduced to the free coordinates with static shapes (the mask is data, so
one jitted function serves every mode). The generalised constraint force $Q_c = H a - (\tau - b)$ is the
base reaction wrench and the holding torques of the held joints. Used by the ejection (stuck joints, rail
and planar base), the capture, the unilateral contact and the free-floating runs.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from .dynamics import mass_matrix_and_bias
from .eager import eager_jit
from .linalg import spd_solve
from .robot import Robot


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

    With ``T`` orthonormal and ``m`` the mask: ``(M H' M + I - M) u = M T^T rhs`` with ``H' = T^T H T`` and
    ``M = diag(m)`` (module docstring). Returns ``a = T u`` and the generalised
    constraint force ``Q_c = H a - rhs`` (base reaction wrench and joint holding torques).
    """
    h_t = basis_change.T @ h @ basis_change
    r_t = basis_change.T @ rhs
    m = free_mask
    reduced = m[:, None] * h_t * m[None, :] + jnp.diag(1.0 - m)
    u = spd_solve(reduced, m * r_t)
    accel = basis_change @ u
    constraint = basis_change @ ((1.0 - m) * (h_t @ u - r_t))
    return accel, constraint


@eager_jit
def restricted_dynamics(robot: Robot, q, v, tau, base_motion: BaseMotion, joint_free=None):
    """Accelerations and constraint forces with the base restricted and joints with ``joint_free == 0`` held.

    Returns ``(a, Q_c)``; ``Q_c[:6]`` is the reaction wrench on the base (base frame), ``Q_c[6:]`` the
    torques holding the held joints.
    """
    n = robot.n_joints
    joint_free = jnp.ones(n) if joint_free is None else joint_free
    basis_change = jax.scipy.linalg.block_diag(base_motion.basis, jnp.eye(n))
    mask = jnp.concatenate([base_motion.allowed, joint_free])
    h, b = mass_matrix_and_bias(robot, q, v)
    return masked_solve(h, tau - b, basis_change, mask)
