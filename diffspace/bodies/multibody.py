r"""Rigid bodies, joint constraints and assumed-mode links: a ready
:class:`~diffspace.integrate.AbstractConstrainedSystem`.

Generalised coordinates are the flat maximal coordinates of :mod:`.rigid` followed by the modal coordinates of
the flexible links (:mod:`.modal`), ``q = [q_rigid, eta]``, ``w = [w_rigid, eta']``. The equations are the
Newton-Euler equations of every body with the joints' constraint forces (paper Eq. 10), extended by the
modal equations and their coupling (Eqs. 15-17, with the link's complete first-order kinetic energy):

.. math::
    \Big(\mathrm{diag}(M_r, 0) + \sum_k P_k^T M_k(R_k, \eta_k) P_k\Big)\dot w + B^T\lambda
    = \begin{bmatrix} Q_{applied} + [0; -\omega_i\times J_i\omega_i] \\ 0 \end{bmatrix}
      + \sum_k P_k^T Q_k(R_k, \omega_k, \eta_k, \dot\eta_k),

with ``P_k`` selecting link ``k``'s body velocity ``[v, omega]`` and its modal rates, ``M_k`` the link's
addition to its body's mass matrix (:meth:`.modal.ModalLink.mass_matrix`: the modal matrix rotated to the
inertial frame, the deflection's first moment coupling translation and rotation, the first-order inertia change)
and ``Q_k`` its stiffness, damping and velocity-product forces from the same energy
(:meth:`.modal.ModalLink.forces`; derivation in :mod:`.modal`). When ``momentum`` is given, the paper's momentum
constraints (Eqs. 7-8) are extra velocity rows ``G^T M w = h_0`` (``G``: rigid motions of the whole system, zero
on the modal coordinates; linear momentum and angular momentum about the world origin), built from this mass
matrix, so they hold the true momentum, deflection included. With only internal forces these rows hold by
themselves (``G^T B^T = 0`` for joint forces), so their multipliers only remove numerical drift, and the KKT
matrix stays regular.
"""

from __future__ import annotations

from typing import Callable

import jax.numpy as jnp
import jax.scipy.linalg
import numpy as np
from jaxtyping import Array, Float

from ..integrate.constrained import AbstractConstrainedSystem
from .modal import ModalLink
from .rigid import RigidBodies


class Multibody(AbstractConstrainedSystem):
    """Bodies, joints (:mod:`.joints` constraints, in row order), applied forces, optional momentum rows and
    assumed-mode links.

    ``applied(t, q_rigid, w_rigid)`` returns generalised forces on the rigid coordinates (``6 nb``), e.g. a sum
    of :meth:`.joints.Revolute.torque`; ``momentum`` is the conserved ``[p_0; L_0]`` or ``None``;
    ``flexible`` the :class:`~.modal.ModalLink` of each flexible body (their coordinates in this order).
    """

    bodies: RigidBodies
    joints: tuple
    applied: Callable | None = None
    momentum: Float[Array, "6"] | None = None
    flexible: tuple[ModalLink, ...] = ()

    @property
    def n_constraints(self) -> int:
        return sum(joint.size for joint in self.joints)

    @property
    def n_modal(self) -> int:
        return sum(link.modes for link in self.flexible)

    def rigid(self, x: Float[Array, " n"], velocity: bool = False) -> Float[Array, " r"]:
        """The rigid-body part of a configuration (or, with ``velocity``, of a velocity)."""
        return x[: self.bodies.nv if velocity else self.bodies.nq]

    def modal(self, x: Float[Array, " n"], link: int) -> Float[Array, " k"]:
        """Modal coordinates (or rates) of ``flexible[link]`` from a configuration or a velocity."""
        start = x.shape[0] - self.n_modal + sum(lk.modes for lk in self.flexible[:link])
        return x[start : start + self.flexible[link].modes]

    # ------------------------------------------------------------------ the system
    def _slots(self, k: int) -> np.ndarray:
        """Velocity indices of flexible link ``k``: its body's ``[v, omega]``, then its modal rates."""
        link = self.flexible[k]
        modal_start = self.bodies.nv + sum(lk.modes for lk in self.flexible[:k])
        body = np.arange(6 * link.body, 6 * link.body + 6)
        return np.concatenate([body, np.arange(modal_start, modal_start + link.modes)])

    def mass_matrix(self, q):
        rigid = self.bodies.mass_matrix()
        if not self.flexible:
            return rigid
        n_modal = self.n_modal
        mass = jax.scipy.linalg.block_diag(rigid, jnp.zeros((n_modal, n_modal)))
        for k, link in enumerate(self.flexible):
            rot, _ = self.bodies.pose(self.rigid(q), link.body)
            slots = self._slots(k)
            mass = mass.at[np.ix_(slots, slots)].add(link.mass_matrix(rot, self.modal(q, k)))
        return mass

    def forces(self, t, q, w):
        qr, wr = self.rigid(q), self.rigid(w, velocity=True)
        rigid = self.bodies.gyroscopic(wr)
        if self.applied is not None:
            rigid = rigid + self.applied(t, qr, wr)
        total = jnp.concatenate([rigid, jnp.zeros(self.n_modal)])
        for k, link in enumerate(self.flexible):
            rot, _ = self.bodies.pose(qr, link.body)
            omega = wr[6 * link.body + 3 : 6 * link.body + 6]
            total = total.at[self._slots(k)].add(link.forces(rot, omega, self.modal(q, k), self.modal(w, k)))
        return total

    def rates(self, q, w):
        rigid = self.bodies.rates(self.rigid(q), self.rigid(w, velocity=True))
        return jnp.concatenate([rigid, w[self.bodies.nv :]])

    def retract(self, q, dw):
        rigid = self.bodies.retract(self.rigid(q), self.rigid(dw, velocity=True))
        return jnp.concatenate([rigid, q[self.bodies.nq :] + dw[self.bodies.nv :]])

    def constraints(self, t, q):
        if not self.joints:
            return jnp.zeros(0)
        placements = self.bodies.placements(self.rigid(q))
        groups: dict[type, list[int]] = {}
        for k, joint in enumerate(self.joints):
            groups.setdefault(type(joint), []).append(k)
        rows: dict[int, Array] = {}
        for kind, members in groups.items():  # one batched evaluation per joint type
            values = kind.rows([self.joints[k] for k in members], placements, t)
            rows.update({k: values[i] for i, k in enumerate(members)})
        return jnp.concatenate([rows[k] for k in range(len(self.joints))])

    def linear_rows(self, t, q):
        if self.momentum is None:
            return jnp.zeros((0, self.bodies.nv + self.n_modal)), jnp.zeros(0)
        return self.momentum_matrix(q), self.momentum

    # ------------------------------------------------------------------ invariants and reports
    def momentum_matrix(self, q) -> Float[Array, "6 nv"]:
        """``G^T M``: maps ``w`` to ``[linear; angular about the world origin]`` momentum (world axes)."""
        generators = jnp.concatenate([self.bodies.generators(self.rigid(q)), jnp.zeros((self.n_modal, 6))])
        return generators.T @ self.mass_matrix(q)

    def system_momentum(self, q, w) -> Float[Array, "6"]:
        return self.momentum_matrix(q) @ w

    def mass_centre(self, q) -> Float[Array, "3"]:
        """Mass centre of the whole system (world), the links' deflection included
        (:meth:`.modal.ModalLink.mass_centre_offset`)."""
        bodies, qr = self.bodies, self.rigid(q)
        moment = bodies.mass @ bodies.positions(qr)
        for k, link in enumerate(self.flexible):
            rot, _ = bodies.pose(qr, link.body)
            moment = moment + bodies.mass[link.body] * rot @ link.mass_centre_offset(self.modal(q, k))
        return moment / jnp.sum(bodies.mass)

    def energy(self, q, w) -> Float[Array, ""]:
        """Kinetic plus elastic energy."""
        elastic = sum(0.5 * jnp.sum((link.omegas() * self.modal(q, k)) ** 2) for k, link in enumerate(self.flexible))
        return 0.5 * w @ self.mass_matrix(q) @ w + elastic

    def joint_multipliers(self, multipliers: Float[Array, "... mk"]) -> list[Float[Array, "... r"]]:
        """The multipliers split per joint (each joint's rows, in ``joints`` order)."""
        starts = [0]
        for joint in self.joints:
            starts.append(starts[-1] + joint.size)
        return [multipliers[..., a:b] for a, b in zip(starts[:-1], starts[1:])]


__all__ = ["Multibody"]
