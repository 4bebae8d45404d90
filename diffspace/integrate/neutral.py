r"""Neutral events: mode changes that move nothing, located without differentiating their indicator.

An event of :func:`~diffspace.integrate.hybrid_solve` at :math:`t^*` changes the sensitivities by
:math:`\Delta(\partial y/\partial\theta) = (f^- - f^+)\,\partial t^*/\partial\theta` plus the transition's
Jacobian. Where the vector field is one formula on both sides (:math:`f^+ = f^-`) and the transition keeps the
state, the jump vanishes, so the trajectory's derivatives do not depend on :math:`\partial t^*/\partial\theta`
at all; a quantity the transition records at its own extremum, :math:`\varphi(y(t^*))` with
:math:`\dot\varphi(t^*) = 0`, has the derivative :math:`\varphi_y\,\partial y/\partial\theta +
\dot\varphi\,\partial t^*/\partial\theta = \varphi_y\,\partial y/\partial\theta`, free of it too. A force peak
of a contact law that is one formula in loading and unloading is such an event, and its indicator
:math:`\dot F` needs the accelerations: differentiating it (in every step check and in the root find's
implicit function theorem) puts the dynamics' Jacobian-vector product into the program several times for
nothing. :func:`neutral_event` evaluates the indicator's value only.
"""

from __future__ import annotations

from typing import Callable

import equinox as eqx
import jax.numpy as jnp

OTHER_EVENT_AT_ROOT = 1e-6
"""An ordinary condition combined with a :func:`neutral_event` counts as the one that fired while it is at or
below this value (dimensionless conditions): the event search stops many orders of magnitude closer to zero."""

def neutral_event(indicator: Callable, t, segment_start, *operands, other=None):
    r"""``indicator(*operands)`` at time ``t`` as a neutral event condition (module notes); with ``other``, an
    ordinary condition, the first of the two events, ``min(other, indicator(*operands))``. Call it inside the
    ``conditions`` of an :class:`~diffspace.integrate.AbstractHybridSystem`, passing the ``segment_start`` they
    receive; ``indicator`` must not close over traced values (pass them in ``operands``).

    **Derivative.** The indicator's derivative is replaced by ``dt - dt0``, with ``t0`` the start of the
    segment: the event search's implicit function theorem gives :math:`\partial t^*/\partial\theta =
    \partial t_0/\partial\theta` (the event moves with its segment's start) and ``indicator`` is never
    differentiated. Any :math:`\partial t^*/\partial\theta` gives the continuous model's derivative; this one
    also keeps the *discrete* solution's derivative consistent, because the segment's steps shift with its
    start. With :math:`\partial t^*/\partial\theta = 0` instead, the capture's peak-force gradient was off
    central differences by 3.5e-7 (rtol 1e-10, 5 mm approach) to 1.4e-5 (0.2 m approach), growing with the
    approach time; with the shift it is within 5e-9, as with the differentiated indicator.

    **Where it is exact.** Only for events that move nothing (module notes): do not use it for an event that
    changes the dynamics or whose time is recorded (a touch, a release); pass those as ``other``. The mode that
    ends at the extremum should end exactly there (``indicator = 0`` at :math:`\dot\varphi = 0`, the offset
    ``EXTREMUM_MARGIN`` on the following mode only): the recorded value's derivative leaves out
    :math:`\dot\varphi(t^*)\,\partial t^*/\partial\theta`, zero only there (with the offset on the ending
    mode, the capture's peak-force gradient was 2e-8 off at tight tolerances).

    **With ``other``** the derivative is ``other``'s where ``other <= OTHER_EVENT_AT_ROOT`` (where the first
    event is ``other``'s, the search has stopped with it far closer to zero), else the neutral one. The
    selection reads ``other`` only: the derivative of ``jnp.minimum`` would compare both values and keep the
    indicator's evaluation in the implicit function theorem's programs. Near a root of ``other`` the neutral
    event may be given ``other``'s derivative too, which is harmless: its time may have any derivative."""
    return _neutral_event(t, segment_start, operands, other, indicator=indicator)


@eqx.filter_custom_jvp
def _neutral_event(t, t0, operands, other, *, indicator):
    value = indicator(*operands)
    return value if other is None else jnp.minimum(other, value)


@_neutral_event.def_jvp
def _neutral_event_jvp(primals, tangents, *, indicator):
    t, t0, operands, other = primals
    t_dot, t0_dot, _, other_dot = tangents
    value = _neutral_event(t, t0, operands, other, indicator=indicator)
    zero = jnp.zeros_like(value)
    shift = (zero if t_dot is None else t_dot) - (zero if t0_dot is None else t0_dot)
    if other is None:
        return value, shift
    return value, jnp.where(other <= OTHER_EVENT_AT_ROOT, zero if other_dot is None else other_dot, shift)
