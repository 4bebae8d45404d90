r"""Rigid bodies, joint constraints and assumed-mode links: a ready
:class:`~diffspace.integrate.AbstractConstrainedSystem`.

Generalised coordinates are the flat maximal coordinates of :mod:`.rigid` followed by the modal coordinates of
the flexible links (:mod:`.modal`), ``q = [q_rigid, eta]``, ``w = [w_rigid, eta']``. The equations are the
Newton-Euler equations of every body with the joints' constraint forces (paper Eq. 10), extended by the
modal equations and their coupling (Eqs. 15-17):

.. math::
    \begin{bmatrix} M_r & C^T \\ C & I \end{bmatrix}\dot w + B^T\lambda
    = \begin{bmatrix} Q_{applied} + [0; -\omega_i\times J_i\omega_i] + Q_{c} \\
      -2\zeta\Omega\dot\eta - \Omega^2\eta + Q_\eta \end{bmatrix},

with ``C`` the modal matrices transformed to the inertial frame and ``Q_c``, ``Q_eta`` the coupling's
velocity-product terms (see :mod:`.modal`). When ``momentum`` is given, the paper's momentum constraints
(Eqs. 7-8) are extra velocity rows ``G^T M w = h_0`` (``G``: rigid motions of the whole system, zero on the
modal coordinates; linear momentum and angular momentum about the world origin). With only internal forces
these rows hold by themselves (``G^T B^T = 0`` for joint forces), so their multipliers only remove numerical
drift, and the KKT matrix stays regular.
"""

from __future__ import annotations

from typing import Callable

import equinox as eqx
import jax.numpy as jnp
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
    def mass_matrix(self, q):
        rigid = self.bodies.mass_matrix()
        if not self.flexible:
            return rigid
        coupling = self._coupling(q)
        return jnp.block([[rigid, coupling.T], [coupling, jnp.eye(self.n_modal)]])

    def _coupling(self, q) -> Float[Array, "k nv"]:
        """``C``: each link's ``[L_v R^T, L_omega]`` in its body's columns."""
        blocks = []
        for link in self.flexible:
            rot, _ = self.bodies.pose(self.rigid(q), link.body)
            lv, lw = link.coupling()
            block = jnp.zeros((link.modes, self.bodies.nv))
            blocks.append(block.at[:, 6 * link.body : 6 * link.body + 6].set(jnp.concatenate([lv @ rot.T, lw], 1)))
        return jnp.concatenate(blocks)

    def forces(self, t, q, w):
        qr, wr = self.rigid(q), self.rigid(w, velocity=True)
        rigid = self.bodies.gyroscopic(wr)
        if self.applied is not None:
            rigid = rigid + self.applied(t, qr, wr)
        modal = []
        for k, link in enumerate(self.flexible):
            on_body, on_modes = self._modal_forces(link, qr, wr, self.modal(q, k), self.modal(w, k))
            rigid = rigid.at[6 * link.body : 6 * link.body + 6].add(on_body)
            modal.append(on_modes)
        return jnp.concatenate([rigid, *modal])

    def _modal_forces(self, link: ModalLink, qr, wr, eta, eta_dot):
        """Stiffness, damping and the coupling's velocity-product terms (:mod:`.modal`)."""
        rot, _ = self.bodies.pose(qr, link.body)
        velocity, omega = wr[6 * link.body : 6 * link.body + 3], wr[6 * link.body + 3 : 6 * link.body + 6]
        lv, lw = link.coupling()
        u, a, b = rot.T @ velocity, lv.T @ eta_dot, lw.T @ eta_dot
        on_body = jnp.concatenate([-rot @ jnp.cross(omega, a), -jnp.cross(omega, b) + jnp.cross(a, u)])
        freq = link.omegas()
        on_modes = -2.0 * link.damping * freq * eta_dot - freq**2 * eta + lv @ jnp.cross(omega, u)
        return on_body, on_modes

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
