"""Outcome of one capture run: contact bookkeeping, the state at the first release, invariants, the physical
outcome and the status.

Outcomes (``OUTCOMES``; a result, not a failure):

* ``captured``: the tip touched the target and they separated no faster than ``capture.capture_speed_m_s``
  (slow enough for the capture mechanism to hold it);
* ``rebounded``: they separated faster;
* ``missed``: no contact, and at the end the tip was moving away from the surface (its closest approach passed
  without a touch: an oblique approach past the shaft);
* ``not_reached``: no contact, and at the end the tip was still closing on the surface (too slow for the
  horizon).

The contact quantities (peak force, impulse, duration, separation speed) are NaN without a contact.
Status: the solver's, else ``NO_EVENT`` when the contact had not ended by ``t_final``, else ``OUT_OF_RANGE``
when the contact point left the modelled surface (off the shaft's length or the plane patch: the
infinite-surface contact model is then not valid).
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float, Int

from ...integrate import HybridSolution
from ...core.status import Status, first_failure, flag
from .model import LOADING, SEPARATED, UNLOADING, CaptureModel

OUTCOMES = ("captured", "rebounded", "missed", "not_reached")
CAPTURED, REBOUNDED, MISSED, NOT_REACHED = range(4)


class CaptureOutcome(eqx.Module):
    """Scalars and states of one capture run (arrays only, so it batches under ``vmap``); ``outcome`` indexes
    ``OUTCOMES``."""

    final_phase: Array
    contacts: Array
    peak_force: Float[Array, ""]
    impulse: Float[Array, ""]
    damping_loss: Float[Array, ""]
    closing_speed: Float[Array, ""]
    first_touch: Float[Array, ""]
    duration: Float[Array, ""]
    release_time: Float[Array, ""]
    separation_speed: Float[Array, ""]
    min_margin: Float[Array, ""]  # smallest on-surface margin over the contact events [m]
    release_delta: Float[Array, ""]
    y_release: tuple
    momentum_before: tuple
    momentum_after: tuple
    energy_before: Float[Array, ""]
    energy_after: Float[Array, ""]
    solution: HybridSolution
    outcome: Int[Array, ""]
    status: Int[Array, ""]


def capture_outcome(model: CaptureModel, y0, sol: HybridSolution, capture_speed) -> CaptureOutcome:
    """Reduce a solution: first release state, contact bookkeeping, invariants before/after, outcome, status."""
    mode = sol.final_mode
    before, after = sol.segment_mode_before.phase, sol.segment_mode_after.phase
    is_release = sol.segment_event & (before == UNLOADING) & (after == SEPARATED)
    k = jnp.argmax(is_release)
    y_rel = jax.tree_util.tree_map(lambda a: a[k], sol.segment_y)
    # the gaps at every segment end and at the end of the run, by one batched evaluation
    ends = jax.tree_util.tree_map(lambda a, b: jnp.concatenate([a, b[None]]), sol.segment_y, sol.final_y)
    deltas, rates, _, margins = jax.vmap(model.lean_gap)(ends)
    delta_rel, rate_rel = deltas[k], rates[k]
    contact_events = sol.segment_event & ((before == LOADING) | (before == UNLOADING) | (after == LOADING))
    min_margin = jnp.min(jnp.where(contact_events, margins[:-1], jnp.inf))
    touched = mode.contacts > 0
    closing_at_end = rates[-1] > 0.0  # free flight: the tip still approaches the surface
    outcome = jnp.where(touched, jnp.where(-rate_rel <= capture_speed, CAPTURED, REBOUNDED),
                        jnp.where(closing_at_end, NOT_REACHED, MISSED))
    status = first_failure(sol.status, flag(touched & (mode.phase != SEPARATED), Status.NO_EVENT),
                           flag(min_margin < 0, Status.OUT_OF_RANGE))
    contact = lambda x: jnp.where(touched, x, jnp.nan)  # noqa: E731
    # the invariants before and after, by one batched evaluation
    (p, l), energy = jax.vmap(lambda y: (model.momentum(y), model.kinetic_energy(y)))(
        jax.tree_util.tree_map(lambda a, b: jnp.stack([a, b]), y0, sol.final_y))
    return CaptureOutcome(
        final_phase=mode.phase, contacts=mode.contacts, peak_force=contact(mode.peak_force),
        impulse=contact(sol.final_y[6][0]), damping_loss=sol.final_y[6][1],
        closing_speed=contact(mode.first_impact_speed), first_touch=contact(mode.first_touch),
        duration=contact(mode.duration), release_time=contact(sol.segment_end[k]), separation_speed=contact(-rate_rel),
        min_margin=min_margin, release_delta=delta_rel, y_release=y_rel,
        momentum_before=(p[0], l[0]), momentum_after=(p[1], l[1]), energy_before=energy[0], energy_after=energy[1],
        solution=sol, outcome=outcome, status=status,
    )
