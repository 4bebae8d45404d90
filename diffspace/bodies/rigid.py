r"""Rigid bodies in maximal coordinates: position, quaternion, linear and angular velocity (13 states each).

Each body ``i`` carries (paper Eq. 1) the world position ``r_i`` of its centre of mass, the unit quaternion
``q_i`` (``[x, y, z, w]``, body -> world, as Pinocchio), the world velocity ``v_i = dr_i/dt`` of its centre of mass
and its angular velocity ``omega_i`` in **body** axes. Flat generalised coordinates and velocities stack the
bodies::

    q = [r_1, q_1, r_2, q_2, ...]          (7 per body)
    w = [v_1, omega_1, v_2, omega_2, ...]  (6 per body)

The Newton-Euler equations of the free bodies are

.. math:: m_i \dot v_i = F_i, \qquad J_i \dot\omega_i + \omega_i \times J_i \omega_i = T_i,

i.e. ``M w' = Q`` with the constant block-diagonal mass matrix ``M = diag(m_1 I, J_1, ...)`` (paper Eq. 2; the
inertia is constant because ``omega`` is in body axes) and ``Q = [F_i; T_i - omega_i x J_i omega_i]``
(forces in world axes, torques in body axes). The kinematics (``dq/dt = N(q) w``) are

.. math:: \dot r_i = v_i, \qquad \dot q_i = \tfrac12\, q_i \otimes [\omega_i, 0] + k (1 - |q_i|^2)\, q_i,

where the last term (gain ``k``, as in :func:`diffspace.core.dynamics.configuration_derivative`) pulls the
quaternion back to unit norm without changing the rotation it represents. A velocity-space displacement
``dw`` is applied to a configuration by :meth:`RigidBodies.retract` (``r + dv``, ``q \otimes \exp(d\omega)``),
the exponential map whose first-order term is ``N(q) dw``: the projections of
:mod:`diffspace.integrate.constrained` need exactly this pair.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from ..core import spatial

QUATERNION_GAIN = 10.0
WORLD = -1  # body index of the fixed world frame in anchors and joints


class RigidState(eqx.Module):
    """Named view of the flat maximal coordinates of ``nb`` bodies (see the module docstring)."""

    position: Float[Array, "nb 3"]  # centre of mass, world
    quaternion: Float[Array, "nb 4"]  # xyzw, body -> world
    velocity: Float[Array, "nb 3"]  # centre of mass, world
    omega: Float[Array, "nb 3"]  # body axes

    @classmethod
    def from_flat(cls, q: Float[Array, " nq"], w: Float[Array, " nv"]) -> "RigidState":
        qs, ws = q.reshape(-1, 7), w.reshape(-1, 6)
        return cls(qs[:, :3], qs[:, 3:], ws[:, :3], ws[:, 3:])

    @classmethod
    def at_rest(cls, position, quaternion) -> "RigidState":
        position = jnp.asarray(position, dtype=float)
        return cls(position, jnp.asarray(quaternion, dtype=float), jnp.zeros_like(position), jnp.zeros_like(position))

    @property
    def q(self) -> Float[Array, " nq"]:
        return jnp.concatenate([self.position, self.quaternion], axis=1).reshape(-1)

    @property
    def w(self) -> Float[Array, " nv"]:
        return jnp.concatenate([self.velocity, self.omega], axis=1).reshape(-1)


class Placements(eqx.Module):
    """World rotation (body -> world) and centre-of-mass position of every body at one configuration."""

    rotation: Float[Array, "nb 3 3"]
    position: Float[Array, "nb 3"]

    def frame(self, body: int):
        """``(R, p)`` of a body, the identity for :data:`WORLD`."""
        if body == WORLD:
            return jnp.eye(3), jnp.zeros(3)
        return self.rotation[body], self.position[body]

    def gather(self, bodies: np.ndarray) -> tuple[Float[Array, "k 3 3"], Float[Array, "k 3"]]:
        """``(R, p)`` of several bodies (static indices; :data:`WORLD` gives the identity) in one gather."""
        rotation = jnp.concatenate([self.rotation, jnp.eye(3)[None]])  # index -1 (WORLD): the world frame
        position = jnp.concatenate([self.position, jnp.zeros((1, 3))])
        return rotation[bodies], position[bodies]


class RigidBodies(eqx.Module):
    """Mass properties of ``nb`` free rigid bodies (inertia about the centre of mass, body axes)."""

    names: tuple[str, ...] = eqx.field(static=True)
    mass: Float[Array, " nb"]
    inertia: Float[Array, "nb 3 3"]

    @property
    def n_bodies(self) -> int:
        return len(self.names)

    @property
    def nq(self) -> int:
        return 7 * self.n_bodies

    @property
    def nv(self) -> int:
        return 6 * self.n_bodies

    def index(self, name: str) -> int:
        if name not in self.names:
            raise KeyError(f"unknown body '{name}'; known: {', '.join(self.names)}")
        return self.names.index(name)

    # ------------------------------------------------------------------ kinematics
    def rotations(self, q: Float[Array, " nq"]) -> Float[Array, "nb 3 3"]:
        """Rotation matrices body -> world."""
        return spatial.quat_to_rotation(q.reshape(-1, 7)[:, 3:])

    def positions(self, q: Float[Array, " nq"]) -> Float[Array, "nb 3"]:
        return q.reshape(-1, 7)[:, :3]

    def pose(self, q: Float[Array, " nq"], body: int):
        """World rotation and position of a body's frame (the identity for :data:`WORLD`)."""
        if body == WORLD:
            return jnp.eye(3), jnp.zeros(3)
        qb = q[7 * body : 7 * body + 7]
        return spatial.quat_to_rotation(qb[3:]), qb[:3]

    def placements(self, q: Float[Array, " nq"]) -> "Placements":
        """World rotations and positions of all bodies, computed once (what joint constraints read)."""
        return Placements(self.rotations(q), self.positions(q))

    def point(self, q: Float[Array, " nq"], body: int, local: Float[Array, "3"]) -> Float[Array, "3"]:
        """World position of a point given in a body's frame."""
        rot, pos = self.pose(q, body)
        return pos + rot @ local

    def point_velocity(self, q, w, body: int, local) -> Float[Array, "3"]:
        """World velocity ``v + R (omega x s)`` of a body point (zero for :data:`WORLD`)."""
        if body == WORLD:
            return jnp.zeros(3)
        rot, _ = self.pose(q, body)
        wb = w[6 * body : 6 * body + 6]
        return wb[:3] + rot @ jnp.cross(wb[3:], local)

    def rates(self, q: Float[Array, " nq"], w: Float[Array, " nv"]) -> Float[Array, " nq"]:
        """``dq/dt = N(q) w`` with the quaternion-norm stabilising term (module docstring)."""
        s = RigidState.from_flat(q, w)
        quat = s.quaternion
        pure = jnp.concatenate([s.omega, jnp.zeros((self.n_bodies, 1))], axis=1)
        norm_sq = jnp.sum(quat * quat, axis=1, keepdims=True)
        quat_dot = 0.5 * spatial.quat_multiply(quat, pure) + QUATERNION_GAIN * (1.0 - norm_sq) * quat
        return jnp.concatenate([s.velocity, quat_dot], axis=1).reshape(-1)

    def retract(self, q: Float[Array, " nq"], dw: Float[Array, " nv"]) -> Float[Array, " nq"]:
        """Configuration displaced by the velocity-space step ``dw``: ``r + dv``, ``q (x) exp(d omega)``."""
        s = RigidState.from_flat(q, dw)
        quat = spatial.quat_multiply(s.quaternion, spatial.quat_exp(s.omega))
        return jnp.concatenate([s.position + s.velocity, quat], axis=1).reshape(-1)

    # ------------------------------------------------------------------ dynamics
    def mass_matrix(self) -> Float[Array, "nv nv"]:
        """``diag(m_1 I, J_1, ..., m_nb I, J_nb)`` (paper Eq. 2)."""
        blocks = jax.vmap(lambda m, j: jax.scipy.linalg.block_diag(m * jnp.eye(3), j))(self.mass, self.inertia)
        return jax.scipy.linalg.block_diag(*blocks)

    def gyroscopic(self, w: Float[Array, " nv"]) -> Float[Array, " nv"]:
        """Velocity-product generalised forces ``[0; -omega x J omega]`` of the Newton-Euler equations."""
        ws = w.reshape(-1, 6)
        omega = ws[:, 3:]
        torque = -jnp.cross(omega, jnp.einsum("bij,bj->bi", self.inertia, omega))
        return jnp.concatenate([jnp.zeros_like(omega), torque], axis=1).reshape(-1)

    def wrench(
        self, q, body: int, force: Float[Array, "3"], torque: Float[Array, "3"], local=None
    ) -> Float[Array, " nv"]:
        """Generalised force of a world force applied at a body point (``local``, default the centre of mass)
        plus a world torque: ``[F; R^T (T + R s x F)]`` in the body's slot (zero for :data:`WORLD`)."""
        out = jnp.zeros(self.nv)
        if body == WORLD:
            return out
        rot, _ = self.pose(q, body)
        local = jnp.zeros(3) if local is None else local
        body_torque = rot.T @ torque + jnp.cross(local, rot.T @ force)
        return out.at[6 * body : 6 * body + 6].set(jnp.concatenate([force, body_torque]))

    def kinetic_energy(self, w: Float[Array, " nv"]) -> Float[Array, ""]:
        return 0.5 * w @ self.mass_matrix() @ w

    def generators(self, q: Float[Array, " nq"]) -> Float[Array, "nv 6"]:
        r"""Velocities of a rigid motion of the whole system: column block ``[translation | rotation]``.

        A world translation rate ``u`` and rotation rate ``theta'`` move body ``i`` with ``v_i = u + theta' x r_i``
        and ``omega_i = R_i^T theta'``, so ``w = G(q) [u; theta']``. The system momentum is ``G^T M w``
        (linear; angular about the world origin, world axes): for rigid bodies paper Eqs. 7-8,
        ``sum m_i v_i`` and ``sum m_i r_i x v_i + R_i J_i omega_i``.
        """
        rots = self.rotations(q)
        pos = self.positions(q)

        def block(rot, r):
            return jnp.block([[jnp.eye(3), -spatial.skew(r)], [jnp.zeros((3, 3)), rot.T]])

        return jax.vmap(block)(rots, pos).reshape(self.nv, 6)

    def momentum(self, q, w) -> Float[Array, "6"]:
        """``[linear; angular about the world origin]``, world axes (paper Eqs. 7-8)."""
        return self.generators(q).T @ (self.mass_matrix() @ w)
