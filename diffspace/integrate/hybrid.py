"""Hybrid systems: continuous dynamics per discrete mode, mode changes at events located by root finds."""

from __future__ import annotations

import abc
import functools

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
from jax import lax
from jaxtyping import Array

from ..core.status import Status
from .event_root import EventRootFinder
from .adjoint import solve_adjoint
from .settings import SolverSettings


EXTREMUM_MARGIN = 1e-9
"""Offset for conditions whose zero is an extremum of a smooth O(1) indicator ``r`` (a force peak, a maximum
indentation): the mode that ends there holds while ``r + EXTREMUM_MARGIN > 0``, the next one while
``EXTREMUM_MARGIN - r > 0``, so the next mode starts at ``2 EXTREMUM_MARGIN`` instead of at zero. A restart at
zero can re-trigger the event at once (round-off, or the error of the next step's dense output on which the
event is located, exceeds a zero margin and did exceed 1e-12), and a transition that then flips the mode back
runs the contact in the wrong phase: the two-body impact with restitution ``c >= 0.9905`` never separated. With
the offset the event lies where ``r = -EXTREMUM_MARGIN``: the extremum's value changes by O(1e-18) relative and
its time by 1e-9 of the scaled time unit. A ``diffspace.integrate.neutral_event`` puts the offset on the
following mode only (see there)."""


class HybridSolution(eqx.Module):
    """Result of [`hybrid_solve`][diffspace.integrate.hybrid.hybrid_solve].

    ``ts``/``ys``: the state on the fixed output grid (stitched across segments; NaN after the time a failed run
    reached); ``segment_*``: one entry
    per segment (``segment_end`` time, state at the end before the transition, mode before and after,
    ``segment_event`` true where the segment ended with an event); ``status``: a
    ``diffspace.core.status.Status`` code (``OK``, ``SOLVER_FAILURE``, ``EVENT_MISSED`` when the run ended
    with a condition below zero whose event never fired, or ``EVENT_BUDGET`` when the run needed more than
    ``max_segments`` segments).

    Attributes:
        ts: Output times, shape ``(n_save,)`` [s or the system's time unit].
        ys: The state at ``ts`` (the state PyTree with a leading ``n_save`` axis).
        final_y: The state at the end of the run.
        final_mode: The mode at the end of the run.
        segment_end: End time of each segment, shape ``(max_segments,)``.
        segment_y: The state at each segment's end, before its transition (leading ``max_segments`` axis).
        segment_mode_before: The mode of each segment.
        segment_mode_after: The mode after each segment's transition.
        segment_event: True where the segment ended with an event, shape ``(max_segments,)``.
        status: ``Status`` code of the run (scalar int).
        num_steps: Accepted solver steps over all segments (scalar int).
    """

    ts: Array
    ys: object
    final_y: object
    final_mode: object
    segment_end: Array
    segment_y: object
    segment_mode_before: object
    segment_mode_after: object
    segment_event: Array
    status: Array
    num_steps: Array


@jax.custom_jvp
def dense_tangents(tree):
    """Identity whose forward-mode tangent is never a symbolic zero (zeros are instantiated) once any leaf of
    ``tree`` is differentiated. The segment loop's JVP otherwise finds its differentiated carries by a fixed
    point, transforming the whole segment (an adaptive solve with events) once more for every carry that
    starts with a zero tangent (the time, the mode, the saved output) and picks one up after the first event."""
    return tree


@functools.partial(dense_tangents.defjvp, symbolic_zeros=True)
def _dense_tangents_jvp(primals, tangents):
    zero = jax.custom_derivatives.SymbolicZero
    (tree,), (tangent,) = primals, tangents
    dense = jax.tree_util.tree_map(lambda p, t: jnp.zeros_like(p) if isinstance(t, zero) else t, tree, tangent,
                                   is_leaf=lambda t: isinstance(t, zero))
    return tree, dense


class AbstractHybridSystem(eqx.Module):
    r"""A hybrid system for [`hybrid_solve`][diffspace.integrate.hybrid.hybrid_solve]: continuous dynamics in each discrete mode, the conditions that end
    a mode, and the transitions at its events (as Diffrax's ``AbstractTerm`` is to ``diffeqsolve``).

    The mode is data: a PyTree of arrays (integer phases and flags; event bookkeeping such as a recorded peak
    force may be floating point), so one compiled program serves every mode and ``vmap`` batches cases that are
    in different modes. Subclasses are final ``equinox.Module`` s holding the model's parameters.
    """

    @abc.abstractmethod
    def vector_field(self, t, y, mode):
        """The continuous dynamics in one mode.

        Args:
            t: Time (scalar).
            y: State (a PyTree of arrays).
            mode: The current discrete mode (a PyTree of arrays).

        Returns:
            ``dy/dt``, with the structure of ``y``.
        """

    @abc.abstractmethod
    def conditions(self, t, y, mode, segment_start) -> tuple[Array, ...]:
        """Scalars that stay positive while ``mode`` holds; the first to cross zero ends the segment.

        Args:
            t: Time (scalar).
            y: State (a PyTree of arrays).
            mode: The current discrete mode.
            segment_start: The time the current segment started (what a ``diffspace.integrate.neutral_event``
                needs).

        Returns:
            One scalar per condition, each positive while the mode holds (O(1), so that the event root
            finder's tolerance is meaningful).
        """

    @abc.abstractmethod
    def transition(self, t, y, mode):
        """The jump at an event.

        Args:
            t: Event time (scalar).
            y: State at the event.
            mode: The mode that just ended.

        Returns:
            ``(y, mode)``: the state and mode the next segment starts from.
        """


def hybrid_solve(
    system: AbstractHybridSystem,
    y0,
    mode0,
    t_final: float,
    settings: SolverSettings = SolverSettings(max_steps=20_000),
    solver: diffrax.AbstractSolver | None = None,
    dtmax: float | None = None,
    save_times=None,
    adjoint: diffrax.AbstractAdjoint | None = None,
    initial_transition: bool = False,
) -> HybridSolution:
    r"""Integrate a hybrid ``system`` from ``y0`` in ``mode0``.

    The first of ``system.conditions`` to cross zero ends the segment (a Diffrax event, located on the dense
    output inside the step's sign bracket by a derivative-free false-position search,
    ``diffspace.integrate.event_root.EventRootFinder``; the event time is differentiable by the implicit
    function theorem); ``system.transition`` gives the state and mode the next segment starts from.
    Segments are iterated by ``lax.scan`` over ``settings.max_segments`` (a bounded, reverse-differentiable loop;
    a finished run turns the remaining segments into zero-length solves). The state is saved at
    ``settings.n_save`` equally spaced times of ``[0, t_final]``, or at ``save_times`` (sorted, in
    ``[0, t_final]``; may be traced).
    A condition should be positive when its segment starts: Diffrax detects a condition falling from positive to
    zero or below, so one that starts at or below zero and falls is never seen, and inside the minimum it hides
    every other condition. A run whose last segment reaches ``t_final`` with a condition below zero sets the
    status ``EVENT_MISSED``. With ``initial_transition`` the run starts with ``system.transition`` at ``t = 0``
    (a zero-length first pass of the segment loop that ends with an event, left out of the record), so the
    transitions are compiled once; ``segment_mode_before[0]`` is then the mode it chose. Use inside ``jit``.

    Args:
        system: The hybrid system ([`AbstractHybridSystem`][diffspace.integrate.hybrid.AbstractHybridSystem]).
        y0: Initial state (a PyTree of arrays).
        mode0: Initial mode (a PyTree of arrays).
        t_final: End time (the system's time unit, usually s).
        settings: Tolerances of the step-size controller, number of equally spaced output times (ignored when
            ``save_times`` is given), step budget of each segment's solve, and the bound on the number of
            segments (events + 1; a run that needs more ends with status ``EVENT_BUDGET``).
        solver: Diffrax solver; default ``diffrax.Tsit5()``.
        dtmax: Largest step, or ``None`` for no bound.
        save_times: Output times, sorted, in ``[0, t_final]``, shape ``(n_save,)``; may be traced.
        adjoint: How the solves are differentiated
            ([`diffspace.integrate.adjoint`][diffspace.integrate.adjoint]; ``None``: reverse mode).
        initial_transition: Apply ``system.transition`` to ``(y0, mode0)`` at ``t = 0`` before integrating.

    Returns:
        The solution on the output grid with the per-segment record and the run's status.
    """
    grid = jnp.linspace(0.0, t_final, settings.n_save) if save_times is None else jnp.asarray(save_times, dtype=float)
    n_save = grid.shape[0]
    def first_condition(t, y, args, **kwargs):  # one event: cheaper to trace than one per condition
        values = [jnp.asarray(c, dtype=float) for c in system.conditions(t, y, args, kwargs["t0"])]  # args: mode
        # a single condition is passed as is: the derivative of ``min`` reads every value (see neutral_event)
        return values[0] if len(values) == 1 else jnp.min(jnp.stack(values))

    events = diffrax.Event(first_condition, root_finder=EventRootFinder(rtol=1e-12, atol=1e-12), direction=False)
    controller = settings.controller(dtmax)
    term = diffrax.ODETerm(lambda t, y, mode: system.vector_field(t, y, mode))
    solver = solver or diffrax.Tsit5()
    # NaN until a segment covers it: the output of a run that stopped early ends where it stopped
    ys_init = jax.tree_util.tree_map(lambda x: jnp.full((n_save,) + jnp.shape(x), jnp.nan), y0)

    def segment(carry, start):  # start: the zero-length pass that only applies the initial transition
        t, y, mode, done, status, ys_acc, steps = carry
        t_start = jnp.where(done, t_final, t)
        t_stop = jnp.where(start, t_start, t_final)
        sol = diffrax.diffeqsolve(
            term, solver, t0=t_start, t1=t_stop, dt0=None, y0=y, args=mode,
            saveat=diffrax.SaveAt(subs=[diffrax.SubSaveAt(ts=jnp.clip(grid, t_start, t_stop)), diffrax.SubSaveAt(t1=True)]),
            stepsize_controller=controller, event=events, max_steps=settings.max_steps, throw=False,
            adjoint=solve_adjoint(adjoint),
        )
        grid_ys, (t_end_arr, end_ys) = sol.ys[0], (sol.ts[1], sol.ys[1])
        t_end = t_end_arr[0]
        y_end = jax.tree_util.tree_map(lambda x: x[0], end_ys)
        event = ((sol.result == diffrax.RESULTS.event_occurred) | start) & ~done
        failed = (sol.result != diffrax.RESULTS.successful) & ~event & ~done
        # a segment that reached t_final with a condition below zero crossed it unseen (Diffrax detects a condition
        # falling from positive to zero or below: one that starts at or below zero is never seen and, inside the
        # minimum, hides every other condition of the segment)
        missed = ~event & ~done & ~failed & (first_condition(t_end, y_end, mode, t0=t_start) < 0.0)
        in_segment = (grid >= t_start) & ((grid < t_end) | (~event & (grid <= t_end))) & ~done
        ys_acc = jax.tree_util.tree_map(
            lambda acc, new: jnp.where(in_segment.reshape((-1,) + (1,) * (acc.ndim - 1)), new, acc), ys_acc, grid_ys
        )
        y_next, mode_next = system.transition(t_end, y_end, mode)
        keep = lambda a, b: jax.tree_util.tree_map(lambda u, w: jnp.where(event, u, w), a, b)  # noqa: E731
        y_next, mode_next = keep(y_next, y_end), keep(mode_next, mode)
        status = jnp.where(failed, Status.SOLVER_FAILURE.value, status)
        status = jnp.where(missed & (status == Status.OK.value), Status.EVENT_MISSED.value, status)
        log = (t_end, y_end, mode, mode_next, event)
        new_done = done | ~event
        steps = steps + jnp.where(done, 0, sol.stats["num_steps"])
        return (jnp.where(done, t, t_end), y_next, mode_next, new_done, status, ys_acc, steps), log

    floats, others = eqx.partition((jnp.asarray(0.0), y0, mode0, ys_init), eqx.is_inexact_array)
    t0, y0, mode0, ys_init = eqx.combine(dense_tangents(floats), others)
    init = (t0, y0, mode0, jnp.asarray(False), jnp.asarray(0), ys_init, jnp.asarray(0))
    starts = (jnp.arange(settings.max_segments + initial_transition) == 0) & initial_transition
    (t, y, mode, done, status, ys, steps), logs = lax.scan(segment, init, starts)
    if initial_transition:
        logs = jax.tree_util.tree_map(lambda x: x[1:], logs)
    status = jnp.where((status == Status.OK.value) & ~done, Status.EVENT_BUDGET.value, status)
    t_end, y_end, mode_before, mode_after, event = logs
    return HybridSolution(grid, ys, y, mode, t_end, y_end, mode_before, mode_after, event, status, steps)
