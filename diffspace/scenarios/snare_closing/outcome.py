"""What one closing simulation computes (pure JAX): initial static shapes, the closing dynamics sampled at the
saved times, the quasi-static capture zone, and the headline numbers for design work.

Outcomes (``OUTCOMES``): ``enclosed`` when at the end the shaft's centre lies inside the region the ropes
enclose about the ring axis (:func:`~.analysis.enclosed`), ``escaped`` otherwise (it slipped out between the
ropes, or they never surrounded it).

Status: ``NOT_CONVERGED`` when the initial or capture-zone static solves fail, ``SOLVER_FAILURE`` when the
dynamic solve stops (Tsit5: max steps or step-size collapse; semi-implicit: a non-finite state, or a rope whose
explicit bending forces the fixed step cannot follow, ``h > bending_step``) or its energy balance is off by more
than :data:`~.analysis.ENERGY_TOLERANCE` of the energy exchanged (a contact the step went wrong on:
:func:`~.analysis.energy_balance`).
"""

from __future__ import annotations

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float, Int

from ...core.status import Status, failed, first_failure, flag
from ...integrate.fixed_step import fixed_step_solve
from .analysis import ENERGY_TOLERANCE, CaptureZone, Headline, capture_zone, enclosed, energy_balance, headline
from .model import ClosingModel, ClosingSample, ClosingState, closing_solve, initial_state, rope_nodes, sample
from .semi_implicit import bending_step, semi_implicit_start, semi_implicit_step

OUTCOMES = ("enclosed", "escaped")


class ClosingOutcome(eqx.Module):
    """One closing: ``model``; the solve's ``ts`` [s] and states ``ys``; ``samples`` (derived quantities at every
    saved time); ``zone`` (quasi-static capture zone); ``headline``; ``solver_steps``; ``status``."""

    model: ClosingModel
    ts: Float[Array, " T"]
    ys: ClosingState
    samples: ClosingSample
    zone: CaptureZone | None
    headline: Headline
    solver_steps: Int[Array, ""]
    outcome: Int[Array, ""]
    status: Int[Array, ""]


def _dynamics(scenario, model: ClosingModel, y0: ClosingState):
    """The closing dynamics by the configured scheme: ``(ts, ys, steps, ok)``."""
    if scenario.scheme == "semi_implicit":
        step = lambda t, y, rates, h: semi_implicit_step(model, t, y, rates, h)  # noqa: E731
        sol = fixed_step_solve(step, semi_implicit_start(y0), y0, scenario.end_time, scenario.solver.n_save, scenario.steps_per_save)
        h = scenario.step_length
        return sol.ts, sol.ys, sol.num_steps, sol.finite & (h <= bending_step(model.rope))
    sol = closing_solve(model, y0, scenario.end_time, scenario.solver, adjoint=scenario.adjoint)
    return sol.ts, sol.ys, sol.stats["num_steps"], sol.result == diffrax.RESULTS.successful


def _solve(scenario, params, with_zone: bool) -> ClosingOutcome:
    model = scenario.model_of(params)
    y0, ok = initial_state(model, params.shaft_position, params.shaft_velocity)
    ts, ys, steps, solved = _dynamics(scenario, model, y0)
    samples = jax.vmap(lambda t, y: sample(model, t, y))(ts, ys)
    zone = capture_zone(model, y0.x_free[0]) if with_zone else None
    converged = ok & (zone.converged if with_zone else True)
    balanced = energy_balance(samples, ys)[1] <= ENERGY_TOLERANCE
    status = first_failure(flag(~converged, Status.NOT_CONVERGED),
                           flag(~(solved & balanced), Status.SOLVER_FAILURE))
    end = jax.tree_util.tree_map(lambda a: a[-1], ys)
    nodes, _ = rope_nodes(model, ts[-1], end.x_free, end.v_free)
    outcome = jnp.where(enclosed(nodes[..., :2], end.p[:2]), 0, 1)
    return ClosingOutcome(model, ts, ys, samples, zone, headline(samples, ys), steps, outcome, status)


def simulate_closing(scenario, params) -> ClosingOutcome:
    """Everything ``diffspace run`` reports."""
    return _solve(scenario, params, with_zone=True)


def closing_metrics(scenario, params) -> dict:
    """Design metrics (SI): ``peak_contact_force_N``, ``peak_ring_torque_N_m``, ``final_offset_m``,
    ``contact_impulse_N_s`` (on the shaft, whole run), ``drive_work_J``; NaN for a failed run."""
    out = _solve(scenario, params, with_zone=False)
    values = {"peak_contact_force_N": out.headline.peak_contact_force,
              "peak_ring_torque_N_m": out.headline.peak_ring_torque, "final_offset_m": out.headline.final_offset,
              "contact_impulse_N_s": jnp.linalg.norm(out.ys.impulse[-1, :2]), "drive_work_J": out.ys.work_drive[-1]}
    bad = failed(out.status)
    return {"status": out.status, "outcome": out.outcome, **{k: jnp.where(bad, jnp.nan, v) for k, v in values.items()}}
