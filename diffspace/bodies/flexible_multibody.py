r"""Rigid bodies, joints and assumed-mode links with the links' complete first-order kinetic energy.

:class:`FlexibleMultibody` is a :class:`~.multibody.Multibody` whose mass matrix and forces take each flexible
link's block from :meth:`.modal.ModalLink.mass_matrix` and :meth:`.modal.ModalLink.forces`: besides the modal
matrix ``[L_v R^T, L_omega]`` of paper Eqs. 15-17, the deflection's first moment couples the link's translation
and rotation, its inertia changes with the deflection, and the velocity-product terms follow from that same
energy (derivation in :mod:`.modal`). The momentum rows ``G^T M w`` (Eqs. 7-8) are built from this mass matrix,
so they hold the true momentum, deflection included.
"""

from __future__ import annotations

import jax.numpy as jnp
import jax.scipy.linalg
import numpy as np

from .multibody import Multibody


class FlexibleMultibody(Multibody):
    """:class:`~.multibody.Multibody` with the mass matrix and forces of :mod:`.modal` for every flexible link."""

    def _slots(self, k: int) -> np.ndarray:
        """Velocity indices of flexible link ``k``: its body's ``[v, omega]``, then its modal rates."""
        link = self.flexible[k]
        modal_start = self.bodies.nv + sum(lk.modes for lk in self.flexible[:k])
        body = np.arange(6 * link.body, 6 * link.body + 6)
        return np.concatenate([body, np.arange(modal_start, modal_start + link.modes)])

    def mass_matrix(self, q):
        n_modal = self.n_modal
        mass = jax.scipy.linalg.block_diag(self.bodies.mass_matrix(), jnp.zeros((n_modal, n_modal)))
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

    def mass_centre(self, q) -> jnp.ndarray:
        """Mass centre of the whole system (world), the links' deflection included."""
        bodies, qr = self.bodies, self.rigid(q)
        moment = bodies.mass @ bodies.positions(qr)
        for k, link in enumerate(self.flexible):
            rot, _ = bodies.pose(qr, link.body)
            moment = moment + bodies.mass[link.body] * rot @ link.mass_centre_offset(self.modal(q, k))
        return moment / jnp.sum(bodies.mass)


__all__ = ["FlexibleMultibody"]
