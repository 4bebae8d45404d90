r"""The closing's fixed-step scheme: the average-acceleration Newmark method for the stiff, local forces (axial
springs and dashpots, the contacts' normal springs and dashpots), linearised once per step, and explicit forces at
the predicted state for the bending (:mod:`diffspace.bodies.rope_stepping`). The config value stays
``"semi_implicit"``.

Why. The explicit adaptive solve (Tsit5) takes about 600k steps for the shipped config because its step is set by
stability, not accuracy: the contact *damping* on a 0.55 g node is a real eigenvalue of about ``-1e6 1/s``
(steps of 2e-6 s in contact), and the axial modes (``2 sqrt(k_tes / m_i) = 1.55e5 1/s``) hold it at 2e-5 s
before contact. With both implicit, the explicit bending forces set the stability limit (``h c_b + (h omega_b)^2 /
4 < 1``, 3.87e-5 s for the shipped rope); the step is ``simulation.step_s`` (2e-5 s; the scenario page gives the
errors and why not larger).

Scheme (one step ``h`` from ``t_n``; ``a_n``, ``A_n``, ``F_n``, ``P_n``: the node and shaft accelerations, the
shaft force and the three powers the previous step applied at ``t_n``, a :class:`~.model.ClosingState` of rates)::

    x^ = x_n + h v_n + h^2/4 a_n,   v^ = v_n + h/2 a_n,   v~ = v_n + h a_n               (free nodes)
    w_{n+1/2} = w_n + h/2 A_n,   p_{n+1} = p_n + h w_{n+1/2},   w~ = w_n + h A_n    (shaft: velocity Verlet)
    (M + h/2 G) a_{n+1} = f_int(t_{n+1}, x^, v~) + h/2 C_a a_n + f_c(x^, v^, p_{n+1}, w~),   G = C + h/2 K
    dv = h/2 a_{n+1},   v_{n+1} = v^ + dv,   x_{n+1} = x^ + h/2 dv
    m_s A_{n+1} = F_{n+1} = -sum (f_c - G_c dv),   w_{n+1} = w_{n+1/2} + h/2 A_{n+1}
    (J, W_drive, W_c, D_rope)_{n+1} = (...)_n + h/2 ((F, P)_n + (F, P)_{n+1})

(:mod:`diffspace.bodies.rope_stepping`) with ``C = C_a + C_c``, ``K = K_a + K_c`` block tridiagonal per rope: the
axial dashpots' and springs' consistent Jacobians and the contacts' ``W^T R W``, ``W^T S W`` (normal dashpot and
spring blocks at the contact points, :meth:`~.model.ContactTerms.jacobian`). The shaft (41.7 kg: its contact
frequency is 92 rad/s) is explicit and gets exactly the contact force the nodes got, so the contact impulse equals
the shaft's momentum change to round-off; the powers ``P`` use the applied forces (the axial dashpots' change
``-C_a (v_{n+1} - v~)`` to the dissipation, the axial springs' ``-h/2 K_a dv`` to the elastic forces) and the whole-step
velocities. Start: ``M a_0 = f(0, x_0, v_0)``, the step of length zero from zero rates (the state stays, the
rates are evaluated there; inside the step loop: :class:`~diffspace.integrate.ZeroStep`). Second order (measured
against the adaptive solve on the scenario page); stable for ``h <= bending_step``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ...bodies.rope_stepping import (BENDING_LIMIT, axial_dashpot_blocks, axial_spring_blocks, bending_step,
                                     effective_jacobian, implicit_accelerations, linear_forces, section_blocks)
from ...integrate.fixed_step import ZeroStep
from .model import ClosingModel, ClosingState, contact_forces, internal_forces, rope_nodes

__all__ = ["BENDING_LIMIT", "bending_step", "semi_implicit_rates", "semi_implicit_start", "semi_implicit_step"]


def semi_implicit_rates(model: ClosingModel, t, y: ClosingState, previous, h) -> ClosingState:
    """What the step applies at ``t`` (positions and velocities of ``y`` the predictors ``x^``, ``v^`` and the
    shaft's ``p_{n+1}``, ``w~``; ``previous`` the node accelerations ``a_n``): the state's rates ``(v, a, w, A, F,
    P_drive, P_c, P_rope)`` at the whole step (module docstring; ``w`` the predicted shaft velocity)."""
    inner = lambda z: jnp.pad(z, ((0, 0), (1, 1), (0, 0)))  # noqa: E731  (free nodes -> all nodes, the ends' zero)
    x, v = rope_nodes(model, t, y.x_free, y.v_free)
    lag = inner(0.5 * h * previous)  # v~ - v^
    terms = contact_forces(model, x, v, y.p, y.w)
    f_el, f_damp = internal_forces(model, x, v + lag)
    damping, spring = section_blocks(axial_dashpot_blocks(model.rope, x)), section_blocks(axial_spring_blocks(model.rope, x))
    axial, contact = effective_jacobian(damping, spring, h), terms.jacobian(h)
    jacobian = (axial[0] + contact[0], axial[1] + contact[1])
    a = implicit_accelerations(model.rope.masses, jacobian,
                               f_el + f_damp - linear_forces(damping, lag) + terms.forces, h)
    dv = inner(0.5 * h * a)  # v_{n+1} - v^
    f_c, v = terms.forces + linear_forces(contact, dv), v + dv
    f_el, f_damp = f_el + 0.5 * h * linear_forces(spring, dv), f_damp + linear_forces(damping, dv - lag)
    f_shaft = -jnp.sum(f_c, axis=(0, 1))
    end_force = (f_el + f_damp + f_c)[:, -1]
    return ClosingState(v[:, 1:-1], a, y.w, f_shaft / model.shaft_mass, f_shaft, -jnp.sum(end_force * v[:, -1]),
                        -jnp.sum(f_c * (v - y.w)), -jnp.sum(f_damp * v))


def semi_implicit_start(y0: ClosingState) -> ZeroStep:
    """The scheme's start for :func:`~diffspace.integrate.fixed_step_solve`: the rates at ``y0`` by a step of length
    zero from zero rates (the state unchanged, ``M a_0 = f(0, x_0, v_0)``: module docstring), taken inside the
    step loop, so the step is compiled once."""
    return ZeroStep(jax.tree_util.tree_map(jnp.zeros_like, y0))


def semi_implicit_step(model: ClosingModel, t, y: ClosingState, rates: ClosingState,
                       h) -> tuple[ClosingState, ClosingState]:
    """One step of the module docstring's scheme from ``(y_n, rates_n)`` at ``t``: ``(y_{n+1}, rates_{n+1})``."""
    x, v = y.x_free + h * y.v_free + 0.25 * h**2 * rates.v_free, y.v_free + 0.5 * h * rates.v_free
    w_half = y.w + 0.5 * h * rates.w
    predicted = ClosingState(x, v, y.p + h * w_half, w_half + 0.5 * h * rates.w, y.impulse, y.work_drive,
                             y.work_contact, y.rope_dissipated)
    new = semi_implicit_rates(model, t + h, predicted, rates.v_free, h)
    trapezoid = lambda u, r0, r1: u + 0.5 * h * (r0 + r1)  # noqa: E731
    return ClosingState(x + 0.5 * h * (new.x_free - v), new.x_free, predicted.p, w_half + 0.5 * h * new.w,
                        trapezoid(y.impulse, rates.impulse, new.impulse),
                        trapezoid(y.work_drive, rates.work_drive, new.work_drive),
                        trapezoid(y.work_contact, rates.work_contact, new.work_contact),
                        trapezoid(y.rope_dissipated, rates.rope_dissipated, new.rope_dissipated)), new
