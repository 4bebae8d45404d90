r"""The closing's fixed-step scheme: semi-implicit (symplectic) Euler with the contact dashpots implicit, node by node.

Why. The explicit adaptive solve (Tsit5) takes about 600k steps for the shipped config because its step is set by
stability, not accuracy: the contact *damping* on a 0.55 g node is a real eigenvalue of about ``-1e6 1/s``
(steps of 2e-6 s in contact), and the axial modes (``2 sqrt(k_tes / m_i) = 1.55e5 1/s``) hold it at 2e-5 s
before contact. Treating the contact dashpots implicitly removes the first limit; the second is what a
symplectic scheme needs anyway (``omega h < 2``).

Scheme (one step ``h`` from ``t_n``; ``f`` = :func:`~.model.closing_field`'s node forces at ``(t_n, x_n, v_n)``)::

    (m_i I + h D_i) dv_i = h f_i                      (every free node i; D_i: lumped contact damping)
    v_{n+1} = v_n + dv,   x_{n+1} = x_n + h v_{n+1}    (kick, then drift: symplectic Euler)
    m_s (w_{n+1} - w_n) = h F_s,   p_{n+1} = p_n + h w_{n+1}

(:func:`~diffspace.bodies.rope_stepping.implicit_kick`) with ``D_i = sum_p W_pi (dF/d delta_dot)_p n_p n_p^T``
the contact points' dashpot rates spread onto node ``i`` by the interpolation weights, plus the lumped axial
dashpots (row-sum lumping, ``D >= `` the consistent matrix, so the linearised step is unconditionally stable in
the dashpots), and ``F_s = -sum_i (f_c,i - D_i dv_i)`` the shaft force: the contact
force the nodes actually received, so the contact impulse equals the shaft's momentum change exactly. The work
integrals use the forces applied in the step and the step-mean velocities. The scheme is first order
(measured: the error halves with the step, see the scenario docs); at the shipped ``step_s = 1e-5 s`` the
headline outputs agree with the adaptive solve and the independent reference to the numbers given in the
scenario page.
"""

from __future__ import annotations

import jax.numpy as jnp

from ...bodies.rope_stepping import STABLE_PRODUCT, highest_frequency, implicit_kick, lumped_axial_damping
from .model import ClosingModel, ClosingState, contact_forces, internal_forces, rope_nodes

__all__ = ["STABLE_PRODUCT", "highest_frequency", "semi_implicit_step"]


def semi_implicit_step(model: ClosingModel, t, y: ClosingState, h) -> ClosingState:
    """One step of the module docstring's scheme."""
    x, v = rope_nodes(model, t, y.x_free, y.v_free)
    terms = contact_forces(model, x, v, y.p, y.w)
    f_c, contact = terms.forces, terms.damping[:, 1:-1]
    f_el, f_damp = internal_forces(model, x, v)
    dashpots = lumped_axial_damping(model.rope, x)[:, 1:-1]
    dv = implicit_kick(model.rope.masses[1:-1], contact + dashpots, (f_el + f_damp + f_c)[:, 1:-1], h)
    correction = lambda blocks: jnp.pad(-jnp.einsum("rnab,rnb->rna", blocks, dv), ((0, 0), (1, 1), (0, 0)))  # noqa: E731
    f_c, f_damp = f_c + correction(contact), f_damp + correction(dashpots)
    f_shaft = -jnp.sum(f_c, axis=(0, 1))
    w = y.w + h * f_shaft / model.shaft_mass
    v_free = y.v_free + dv
    v_mean = v.at[:, 1:-1].add(0.5 * dv)
    end_force = (f_el + f_damp + f_c)[:, -1]
    return ClosingState(y.x_free + h * v_free, v_free, y.p + h * w, w, y.impulse + h * f_shaft,
                        y.work_drive - h * jnp.sum(end_force * v[:, -1]),
                        y.work_contact - h * jnp.sum(f_c * (v_mean - 0.5 * (y.w + w))),
                        y.rope_dissipated - h * jnp.sum(f_damp * v_mean))
