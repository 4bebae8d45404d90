r"""The closing's fixed-step scheme: velocity Verlet (the leapfrog) with the stiff dashpots by the trapezoidal rule,
linearised, node by node (:mod:`diffspace.bodies.rope_stepping`). The config value stays ``"semi_implicit"``.

Why. The explicit adaptive solve (Tsit5) takes about 600k steps for the shipped config because its step is set by
stability, not accuracy: the contact *damping* on a 0.55 g node is a real eigenvalue of about ``-1e6 1/s``
(steps of 2e-6 s in contact), and the axial modes (``2 sqrt(k_tes / m_i) = 1.55e5 1/s``) hold it at 2e-5 s
before contact. Treating the contact dashpots implicitly removes the first limit; the second is what the leapfrog
needs anyway (``omega h < 2``).

Scheme (one step ``h`` from ``t_n``; ``a_n``, ``A_n``, ``F_n``, ``P_n``: the node and shaft accelerations, the
shaft force and the three powers the previous step applied at ``t_n``, a :class:`~.model.ClosingState` of rates)::

    v_{n+1/2} = v_n + h/2 a_n,   x_{n+1} = x_n + h v_{n+1/2},   v~ = v_n + h a_n      (free nodes; the shaft alike:
    w_{n+1/2} = w_n + h/2 A_n,   p_{n+1} = p_n + h w_{n+1/2},   w~ = w_n + h A_n       w, p, A)
    (M + h/2 J) a_{n+1} = f(t_{n+1}, x_{n+1}, v~, p_{n+1}, w~) + h/2 J a_n,   v_{n+1} = v_{n+1/2} + h/2 a_{n+1}
    m_s A_{n+1} = F_{n+1} = -sum (f_c - J_c (v_{n+1} - v~)),   w_{n+1} = w_{n+1/2} + h/2 A_{n+1}
    (J, W_drive, W_c, D_rope)_{n+1} = (...)_n + h/2 ((F, P)_n + (F, P)_{n+1})

(:mod:`diffspace.bodies.rope_stepping`) with ``J = J_a + J_c`` block tridiagonal per rope: the axial dashpots'
consistent Jacobian and the contact dashpots' ``W^T R W`` (``R_p = (dF/d delta_dot)_p n_p n_p^T`` at the contact
points, :attr:`~.model.ContactTerms.jacobian`). The shaft gets exactly the contact force the nodes got (the contact
force at the whole-step velocities), so the contact impulse equals the shaft's momentum change to round-off; the
powers ``P`` use the applied forces and the whole-step velocities. Start: ``(M + h/2 J) a_0 = f(0, x_0, v_0)``.
Second order (measured against the adaptive solve on the scenario page); stable for ``h omega_max <=
STABLE_PRODUCT`` and ``h <= bending_step``.
"""

from __future__ import annotations

import jax.numpy as jnp

from ...bodies.rope_stepping import (BENDING_LIMIT, STABLE_PRODUCT, axial_dashpot_blocks, bending_step, dashpot_forces,
                                     highest_frequency, implicit_accelerations, section_dashpots, stable_step)
from .model import ClosingModel, ClosingState, contact_forces, internal_forces, rope_nodes

__all__ = ["BENDING_LIMIT", "STABLE_PRODUCT", "bending_step", "highest_frequency", "semi_implicit_rates", "semi_implicit_start",
           "semi_implicit_step", "stable_step"]


def semi_implicit_rates(model: ClosingModel, t, y: ClosingState, previous, h) -> ClosingState:
    """What the kick applies at ``t`` (positions of ``y`` at ``t``, its velocities the predicted ``v_n + h a_n``,
    ``w_n + h A_n``; ``previous`` the node accelerations ``a_n``): the state's rates ``(v, a, w, A, F, P_drive, P_c,
    P_rope)`` at the whole step (module docstring; ``w`` the predicted shaft velocity)."""
    x, v = rope_nodes(model, t, y.x_free, y.v_free)
    terms = contact_forces(model, x, v, y.p, y.w)
    f_el, f_damp = internal_forces(model, x, v)
    axial, contact = section_dashpots(axial_dashpot_blocks(model.rope, x)), terms.jacobian
    jacobian = (axial[0] + contact[0], axial[1] + contact[1])
    inner = lambda z: jnp.pad(z, ((0, 0), (1, 1), (0, 0)))  # noqa: E731  (free nodes -> all nodes, the ends' zero)
    lag = inner(0.5 * h * previous)  # v~ - v_{n+1/2}
    a = implicit_accelerations(model.rope.masses, jacobian, f_el + f_damp + terms.forces - dashpot_forces(jacobian, lag),
                               h)
    dv = inner(0.5 * h * a) - lag  # v_{n+1} - v~
    f_c, f_damp, v = terms.forces + dashpot_forces(contact, dv), f_damp + dashpot_forces(axial, dv), v + dv
    f_shaft = -jnp.sum(f_c, axis=(0, 1))
    end_force = (f_el + f_damp + f_c)[:, -1]
    return ClosingState(v[:, 1:-1], a, y.w, f_shaft / model.shaft_mass, f_shaft, -jnp.sum(end_force * v[:, -1]),
                        -jnp.sum(f_c * (v - y.w)), -jnp.sum(f_damp * v))


def semi_implicit_start(model: ClosingModel, t, y: ClosingState, h) -> ClosingState:
    """The rates at the start (module docstring), ``a_{-1} = 0``."""
    return semi_implicit_rates(model, t, y, jnp.zeros_like(y.v_free), h)


def semi_implicit_step(model: ClosingModel, t, y: ClosingState, rates: ClosingState,
                       h) -> tuple[ClosingState, ClosingState]:
    """One step of the module docstring's scheme from ``(y_n, rates_n)`` at ``t``: ``(y_{n+1}, rates_{n+1})``."""
    v_half, w_half = y.v_free + 0.5 * h * rates.v_free, y.w + 0.5 * h * rates.w
    predicted = ClosingState(y.x_free + h * v_half, v_half + 0.5 * h * rates.v_free, y.p + h * w_half,
                             w_half + 0.5 * h * rates.w, y.impulse, y.work_drive, y.work_contact, y.rope_dissipated)
    new = semi_implicit_rates(model, t + h, predicted, rates.v_free, h)
    trapezoid = lambda u, r0, r1: u + 0.5 * h * (r0 + r1)  # noqa: E731
    return ClosingState(predicted.x_free, new.x_free, predicted.p, w_half + 0.5 * h * new.w,
                        trapezoid(y.impulse, rates.impulse, new.impulse),
                        trapezoid(y.work_drive, rates.work_drive, new.work_drive),
                        trapezoid(y.work_contact, rates.work_contact, new.work_contact),
                        trapezoid(y.rope_dissipated, rates.rope_dissipated, new.rope_dissipated)), new
