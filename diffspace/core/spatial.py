r"""Quaternions, rotations and 6D spatial algebra.

Conventions (Pinocchio compatible):

* Quaternions are stored ``[x, y, z, w]`` and multiplied with the Hamilton product. A quaternion
  ``q`` maps vectors of the rotated (body) frame to the reference (world) frame: ``x_w = R(q) x_b``.
* Spatial vectors are ordered ``[linear; angular]``. A motion vector ``v = [v_o; w]`` holds the
  velocity of the point at the frame origin and the angular velocity; a force vector ``f = [f; n]``
  holds the force and the moment about the frame origin.
* A placement ``(R, p)`` of frame B in frame A stores the axes of B in A (``R = {}^A R_B``) and the origin
  of B in A. ``motion_to_child`` maps a motion vector expressed in A to B
  (:math:`{}^B X_A`), ``force_to_parent`` maps a force in B to A (:math:`{}^A X_B^* = ({}^B X_A)^T`).

Every function is pure and works under ``jit``/``vmap``/``grad``; the exp/log maps use the double-where
pattern so that their gradients stay finite at zero rotation.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

_SMALL_ANGLE = 1e-6
_EYE3 = np.eye(3)  # a constant, not traced operations


def safe_norm(v: Float[Array, "... d"]) -> Float[Array, "..."]:
    """Euclidean norm over the last axis with finite gradients at zero (double-``where``); NaN stays NaN."""
    sq = jnp.sum(v * v, axis=-1)
    positive = sq > 0.0
    return jnp.where(positive, jnp.sqrt(jnp.where(positive, sq, 1.0)), 0.0 * sq)


def skew(v: Float[Array, "3"]) -> Float[Array, "3 3"]:
    """Cross-product matrix: ``skew(a) @ b == cross(a, b)``.

    Built from one concatenation of ``[0, v, -v]`` slices (a handful of operations instead of one per entry:
    the function is traced many times in every scenario, and each operation costs trace and compile time).
    """
    zero = jnp.zeros_like(v[..., :1])
    x, y, z = v[..., 0:1], v[..., 1:2], v[..., 2:3]
    entries = jnp.concatenate([zero, -z, y, z, zero, -x, -y, x, zero], axis=-1)
    return entries.reshape(v.shape[:-1] + (3, 3))


def solve3(a: Float[Array, "*B 3 3"], b: Float[Array, "*B 3"]) -> Float[Array, "*B 3"]:
    r"""``a^{-1} b`` for invertible 3x3 matrices (any leading batch axes) by Cramer's rule: with rows :math:`r_i`,
    :math:`a^{-1} = [r_1 \times r_2,\ r_2 \times r_0,\ r_0 \times r_1] / (r_0 \cdot r_1 \times r_2)`.
    Elementwise (it fuses into its neighbours; a general solve is an LU factorisation and two triangular
    solves per call, and a body's inertia is solved for inside every vector-field evaluation)."""
    r0, r1, r2 = a[..., 0, :], a[..., 1, :], a[..., 2, :]
    c0 = jnp.cross(r1, r2)
    det = jnp.sum(r0 * c0, axis=-1, keepdims=True)
    return (c0 * b[..., 0:1] + jnp.cross(r2, r0) * b[..., 1:2] + jnp.cross(r0, r1) * b[..., 2:3]) / det


# ----------------------------------------------------------------------------- quaternions
def quat_multiply(a: Float[Array, "4"], b: Float[Array, "4"]) -> Float[Array, "4"]:
    """Hamilton product ``a * b`` of quaternions stored ``[x, y, z, w]``."""
    av, aw = a[..., :3], a[..., 3:]
    bv, bw = b[..., :3], b[..., 3:]
    vec = aw * bv + bw * av + jnp.cross(av, bv)
    w = aw * bw - jnp.sum(av * bv, axis=-1, keepdims=True)
    return jnp.concatenate([vec, w], axis=-1)


def quat_conjugate(q: Float[Array, "4"]) -> Float[Array, "4"]:
    return q * jnp.array([-1.0, -1.0, -1.0, 1.0])


def quat_to_rotation(q: Float[Array, "4"]) -> Float[Array, "3 3"]:
    r"""Rotation matrix of a quaternion; the quaternion is normalised first.

    :math:`R = (2w^2 - 1) I + 2\,\mathbf{v}\mathbf{v}^T + 2w\,[\mathbf{v}]_\times` for the unit quaternion
    :math:`(\mathbf{v}, w)` (matrix form: few traced operations, see :func:`skew`).
    """
    q = q / jnp.linalg.norm(q, axis=-1, keepdims=True)
    vec, w = q[..., :3], q[..., 3:, None]
    outer = vec[..., :, None] * vec[..., None, :]
    return (2.0 * w * w - 1.0) * _EYE3 + 2.0 * (outer + w * skew(vec))


@jax.jit  # called from Python when a scenario is set up: one program there instead of ~40 eager operations
def rotation_to_quat(r: Float[Array, "3 3"]) -> Float[Array, "4"]:
    """Quaternion ``[x, y, z, w]`` (with ``w >= 0``) of a rotation matrix (Shepperd's method)."""
    trace = r[0, 0] + r[1, 1] + r[2, 2]
    candidates = jnp.stack(
        [
            jnp.array([r[2, 1] - r[1, 2], r[0, 2] - r[2, 0], r[1, 0] - r[0, 1], 1.0 + trace]),
            jnp.array([1.0 + r[0, 0] - r[1, 1] - r[2, 2], r[0, 1] + r[1, 0], r[0, 2] + r[2, 0], r[2, 1] - r[1, 2]]),
            jnp.array([r[0, 1] + r[1, 0], 1.0 - r[0, 0] + r[1, 1] - r[2, 2], r[1, 2] + r[2, 1], r[0, 2] - r[2, 0]]),
            jnp.array([r[0, 2] + r[2, 0], r[1, 2] + r[2, 1], 1.0 - r[0, 0] - r[1, 1] + r[2, 2], r[1, 0] - r[0, 1]]),
        ]
    )
    pivots = jnp.array([trace, r[0, 0], r[1, 1], r[2, 2]])
    q = candidates[jnp.argmax(pivots)]
    q = q / jnp.linalg.norm(q)
    return jnp.where(q[3] < 0, -q, q)


def _sinc_half(theta_sq):
    """``sin(theta/2)/theta`` and ``cos(theta/2)`` from ``theta^2`` with finite gradients at zero."""
    small = theta_sq < _SMALL_ANGLE**2
    safe = jnp.where(small, 1.0, theta_sq)
    theta = jnp.sqrt(safe)
    sinc = jnp.where(small, 0.5 - theta_sq / 48.0, jnp.sin(0.5 * theta) / theta)
    cos = jnp.where(small, 1.0 - theta_sq / 8.0, jnp.cos(0.5 * theta))
    return sinc, cos


def quat_exp(rotvec: Float[Array, "3"]) -> Float[Array, "4"]:
    """Unit quaternion of the rotation vector ``theta * axis``."""
    sinc, cos = _sinc_half(jnp.sum(rotvec * rotvec, axis=-1, keepdims=True))
    return jnp.concatenate([sinc * rotvec, cos], axis=-1)


def quat_log(q: Float[Array, "4"]) -> Float[Array, "3"]:
    """Rotation vector of a unit quaternion (the shortest rotation, angle in [0, pi])."""
    q = jnp.where(q[..., 3:] < 0, -q, q)
    vec, w = q[..., :3], q[..., 3:]
    s_sq = jnp.sum(vec * vec, axis=-1, keepdims=True)
    small = s_sq < _SMALL_ANGLE**2
    s = jnp.sqrt(jnp.where(small, 1.0, s_sq))
    factor = jnp.where(small, 2.0 / w * (1.0 - s_sq / (3.0 * w * w)), 2.0 * jnp.arctan2(s, w) / s)
    return factor * vec


def so3_exp(rotvec: Float[Array, "3"]) -> Float[Array, "3 3"]:
    """Rotation matrix of a rotation vector (Rodrigues)."""
    return quat_to_rotation(quat_exp(rotvec))


def so3_log(r: Float[Array, "3 3"]) -> Float[Array, "3"]:
    """Rotation vector of a rotation matrix."""
    return quat_log(rotation_to_quat(r))


def axis_angle_rotation(axis: Float[Array, "3"], angle: Float[Array, ""]) -> Float[Array, "3 3"]:
    """Rotation by ``angle`` about the unit vector ``axis`` (Rodrigues' formula)."""
    k = skew(axis)
    s, c = jnp.sin(angle), jnp.cos(angle)
    return jnp.eye(3) + s[..., None, None] * k + (1.0 - c)[..., None, None] * (k @ k)


def rpy_to_rotation(rpy: Float[Array, "3"]) -> Float[Array, "3 3"]:
    """URDF roll-pitch-yaw: ``R = Rz(yaw) Ry(pitch) Rx(roll)``."""
    ex, ey, ez = jnp.eye(3)
    return axis_angle_rotation(ez, rpy[2]) @ axis_angle_rotation(ey, rpy[1]) @ axis_angle_rotation(ex, rpy[0])


# ----------------------------------------------------------------------------- spatial algebra
def motion_transform(rot: Float[Array, "3 3"], pos: Float[Array, "3"]) -> Float[Array, "6 6"]:
    r"""6x6 matrix :math:`{}^B X_A` mapping motion vectors from A to B, for the placement (R, p) of B in A."""
    rt = rot.T
    top = jnp.concatenate([rt, -rt @ skew(pos)], axis=1)
    bottom = jnp.concatenate([jnp.zeros((3, 3)), rt], axis=1)
    return jnp.concatenate([top, bottom], axis=0)


def motion_to_child(rot, pos, v: Float[Array, "6"]) -> Float[Array, "6"]:
    """Motion vector given in A, expressed in B (placement (R, p) of B in A)."""
    lin, ang = v[:3], v[3:]
    return jnp.concatenate([rot.T @ (lin - jnp.cross(pos, ang)), rot.T @ ang])


def motion_to_parent(rot, pos, v: Float[Array, "6"]) -> Float[Array, "6"]:
    """Motion vector given in B, expressed in A."""
    ang = rot @ v[3:]
    return jnp.concatenate([rot @ v[:3] + jnp.cross(pos, ang), ang])


def force_to_parent(rot, pos, f: Float[Array, "6"]) -> Float[Array, "6"]:
    """Force vector given in B, expressed in A (moment taken about A's origin)."""
    lin = rot @ f[:3]
    return jnp.concatenate([lin, rot @ f[3:] + jnp.cross(pos, lin)])


def cross_motion(v: Float[Array, "6"], m: Float[Array, "6"]) -> Float[Array, "6"]:
    """Spatial cross product ``v x m`` of motion vectors."""
    vl, va = v[:3], v[3:]
    return jnp.concatenate([jnp.cross(va, m[:3]) + jnp.cross(vl, m[3:]), jnp.cross(va, m[3:])])


def cross_force(v: Float[Array, "6"], f: Float[Array, "6"]) -> Float[Array, "6"]:
    """Spatial cross product ``v x* f`` of a motion and a force vector."""
    vl, va = v[:3], v[3:]
    return jnp.concatenate([jnp.cross(va, f[:3]), jnp.cross(va, f[3:]) + jnp.cross(vl, f[:3])])


def spatial_inertia(mass, com: Float[Array, "3"], inertia_com: Float[Array, "3 3"]) -> Float[Array, "6 6"]:
    """6x6 spatial inertia about the frame origin of a body with the given mass, CoM and CoM inertia."""
    c = skew(com)
    top = jnp.concatenate([mass * jnp.eye(3), -mass * c], axis=1)
    bottom = jnp.concatenate([mass * c, inertia_com - mass * c @ c], axis=1)
    return jnp.concatenate([top, bottom], axis=0)


def compose(rot_ab, pos_ab, rot_bc, pos_bc):
    """Placement of C in A from B in A and C in B."""
    return rot_ab @ rot_bc, pos_ab + rot_ab @ pos_bc


def transform_inertia(rot, pos, mass, com, inertia_com):
    """Mass properties of a body whose frame has placement (R, p) in another frame, expressed there."""
    return mass, pos + rot @ com, rot @ inertia_com @ rot.T


def combine_inertia(m1, c1, i1, m2, c2, i2):
    """Composite mass, CoM and CoM inertia of two bodies expressed in the same frame (parallel axis).

    Massless bodies (pure frames) are allowed: with zero total mass the CoM stays at ``c1``.
    """
    m = m1 + m2
    positive = m > 0
    c = jnp.where(positive, (m1 * c1 + m2 * c2) / jnp.where(positive, m, 1.0), c1)

    def shift(mass, com):
        d = com - c
        return mass * (jnp.dot(d, d) * jnp.eye(3) - jnp.outer(d, d))

    return m, c, i1 + shift(m1, c1) + i2 + shift(m2, c2)
