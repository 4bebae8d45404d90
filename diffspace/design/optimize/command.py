"""``diffspace optimize``: multi-start Optax optimisation of any scenario's design variables.

1. A batched sweep samples the box (and every discrete choice); its rows are kept in ``sweep.csv``.
   The config's own design values (clipped into the box) are the sweep's first point.
2. For every choice, Adam runs from the config's design, the best feasible sweep points and random points
   (``n_starts`` in all), all starts in one
   vmapped ``value_and_grad`` of the barrier loss (:mod:`diffspace.design.optimize.problem`) through the whole
   simulation. A start whose run fails, or whose loss or gradient is not finite, does not move and keeps its
   optimiser state for that step; such steps are counted (``nan_gradient_steps``). The best *feasible*
   iterate of every start is kept.
3. One autodiff polish of the best point: if a constraint is nearly active and raising the objective raises
   it, Newton steps along ``grad J`` move onto ``g = 0`` (the optimum of a problem whose objective grows into
   a limit sits on the limit; Adam on a barrier stops short of it).
The result is never worse than the sweep's best feasible point (it is a candidate too), hence never worse than
the configured design when that is feasible.

Under uncertainty (:mod:`~diffspace.design.optimize.robust`) steps 2-3 run again on the statistics over the
dispersed runs, from the nominal optimum, and :mod:`~diffspace.design.optimize.robust_report` checks both optima
on fresh draws.
"""

from __future__ import annotations

import dataclasses
import functools
import sys
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ...io.results import write_timeseries
from ...scenarios import AbstractScenario
from .. import cases as cs
from ..distributed import SOLO
from ..progress import Bar, Spinner, compiling
from ..run.command import baseline_design, write_cases
from ..stages import StageStore
from .problem import Problem, barrier
from .report import best_sweep_rows, plot_history, report, write_sweep_table
from .robust import assess
from .robust_report import robust_report
from .sweep import sweep_stage

POLISH_ITERATIONS = 6
POLISH_TARGET = -1e-7  # land just inside the active constraint
POLISH_REACH = -0.5  # polish when the most active constraint is within this normalised distance (a probability
# constraint's g = P / P_max - 1 is relative: Adam on the barrier may stop 20 % short of P_max)


def _design(problem: Problem, z, choice) -> dict:
    design = problem.to_design(z)
    if problem.choice_key is not None:
        design[problem.choice_key] = choice
    return design


def _loss(z, scenario: AbstractScenario, choice, scale, problem: Problem):
    a = assess(problem, scenario, _design(problem, z, choice))
    loss = -a.value / scale + problem.options["barrier_weight"] * jnp.sum(barrier(a.g))
    return loss, a


def _jet(z, scenario, choice, problem):
    """Objective, constraints, their gradients with respect to ``z`` and usability (a run that did not fail,
    with the required outcomes: for the polish)."""
    def parts(zz):
        a = assess(problem, scenario, _design(problem, zz, choice))
        return (a.value, a.g), a.usable & a.met

    (value, g), pullback, usable = jax.vjp(parts, z, has_aux=True)
    grad_value = pullback((jnp.ones_like(value), jnp.zeros_like(g)))[0]
    jac_g = jax.vmap(lambda e: pullback((jnp.zeros_like(value), e))[0])(jnp.eye(g.shape[0]))
    return value, g, grad_value, jac_g, usable


class _Runner:
    """Compiled pieces shared by every choice (one compile each)."""

    def __init__(self, scenario: AbstractScenario, problem: Problem):
        self.scenario, self.problem = scenario, problem  # the problem (static, unhashable) is closed over
        grad = eqx.filter_value_and_grad(functools.partial(_loss, problem=problem), has_aux=True)
        self.step = eqx.filter_jit(eqx.filter_vmap(grad, in_axes=(0, None, None, None)))
        self.jet = eqx.filter_jit(functools.partial(_jet, problem=problem))

    def adam(self, starts: np.ndarray, choice, scale: float, progress: bool):
        import optax

        problem = self.problem
        optimizer = optax.adam(problem.options["learning_rate"])
        z = jnp.asarray(np.stack([problem.to_z(x) for x in starts]))
        state = jax.vmap(optimizer.init)(z)
        best_value = np.full(len(starts), -np.inf)
        best_z = np.asarray(z).copy()
        history, constraint_history, excluded, failed_runs = [], [], 0, 0
        label = f"optimize{'' if choice is None else f' ({problem.choice_key} = {choice})'}"
        runs = "" if problem.uncertainty is None else f" x {problem.uncertainty.samples} dispersed runs"
        first = compiling(f"the objective's gradient through the simulation ({len(starts)} starts at once{runs})")
        choice_arg = jnp.asarray(0.0 if choice is None else float(choice))
        with Bar(label, problem.options["steps"] + 1, "step", progress, first=first) as bar:
            for step in range(problem.options["steps"] + 1):
                (loss, a), grads = self.step(z, self.scenario, choice_arg, scale)
                value, g, usable, met = a.value, a.g, a.usable, a.met
                failed_runs += int(np.sum(a.failed_runs))
                ok = (np.asarray(usable) & np.isfinite(np.asarray(loss))
                      & np.all(np.isfinite(np.asarray(grads)), axis=1))
                bar.update(1)
                excluded += int((~ok).sum())
                feasible = ok & np.asarray(met) & np.all(np.asarray(g) <= 0.0, axis=1)
                improved = feasible & (np.asarray(value) > best_value)
                best_value = np.where(improved, np.asarray(value), best_value)
                best_z[improved] = np.asarray(z)[improved]
                history.append(np.where(ok, np.asarray(value), np.nan))
                constraint_history.append(np.where(ok[:, None], np.asarray(g), np.nan))
                if step == problem.options["steps"]:
                    break
                safe = jnp.where(ok[:, None], grads, 0.0)  # rows not ok are not updated (state restored below)
                updates, new_state = jax.vmap(optimizer.update)(safe, state)
                keep = jnp.asarray(ok)
                z = jnp.where(keep[:, None], optax.apply_updates(z, updates), z)
                state = jax.tree_util.tree_map(
                    lambda new, old: jnp.where(keep.reshape((-1,) + (1,) * (new.ndim - 1)), new, old),
                    new_state, state)
        return Search(best_z, best_value, np.stack(history), np.stack(constraint_history), excluded, failed_runs)

    def polish(self, z: np.ndarray, choice) -> tuple[np.ndarray, float] | None:
        """Newton steps along ``grad J`` onto the most active constraint; the best feasible point or None."""
        choice_arg = jnp.asarray(0.0 if choice is None else float(choice))
        value, g, grad_value, jac_g, usable = self.jet(jnp.asarray(z), self.scenario, choice_arg)
        if g.shape[0] == 0 or not bool(usable) or float(jnp.max(g)) < POLISH_REACH:
            return None
        active = int(jnp.argmax(g))
        direction = np.asarray(grad_value)
        best, t = None, 0.0
        for _ in range(POLISH_ITERATIONS):
            slope = float(np.asarray(jac_g)[active] @ direction)
            if not (np.isfinite(slope) and slope > 0):
                break
            t -= (float(g[active]) - POLISH_TARGET) / slope
            trial = z + t * direction
            value, g, _, jac_g, usable = self.jet(jnp.asarray(trial), self.scenario, choice_arg)
            if bool(usable) and float(jnp.max(g)) <= 0.0 and (best is None or float(value) > best[1]):
                best = (trial, float(value))
        return best


@dataclasses.dataclass
class Search:
    """Adam's result for one choice: every start's best feasible iterate and value, the objective and
    constraint histories (steps x starts), the excluded steps and the dispersed runs that failed."""

    best_z: np.ndarray
    best_value: np.ndarray
    history: np.ndarray
    constraint_history: np.ndarray
    excluded: int
    failed_runs: int


def _starts(problem: Problem, table: dict, choice, seeds: list, rng) -> np.ndarray:
    """Adam's starts for one choice: ``seeds`` (the configured design; for a robust problem the nominal optimum
    before it), then the best feasible sweep rows, then random points of the box (``n_starts`` in all)."""
    chosen = []
    for point in [*seeds, *best_sweep_rows(table, problem, choice, problem.options["n_starts"])]:
        if not any(np.array_equal(point, c) for c in chosen):
            chosen.append(point)
    chosen = chosen[:problem.options["n_starts"]]
    return np.concatenate([np.reshape(chosen, (-1, len(problem.keys))),
                           problem.sample(rng, problem.options["n_starts"] - len(chosen))])


def _search(runner: _Runner, table: dict, seeds: list, rng, progress: bool) -> tuple[list, list[Search]]:
    """Multi-start Adam for every choice, then the polish of the best point; the candidates
    ``(value, z, choice)`` best first, and each choice's search."""
    problem = runner.problem
    candidates, searches = [], []
    for choice in problem.choices:
        feasible_values = table["objective"][table["feasible"]]
        scale = float(np.max(np.abs(feasible_values))) if feasible_values.size else 1.0
        found = runner.adam(_starts(problem, table, choice, seeds, rng), choice, max(scale, 1e-12), progress)
        searches.append(found)
        candidates += [(float(v), z, choice) for v, z in zip(found.best_value, found.best_z) if np.isfinite(v)]
    candidates.sort(key=lambda c: -c[0])
    if candidates and problem.options["polish"]:
        with Spinner("optimize polish", progress) as spin:
            spin.compile_stage("the constraints' Jacobian for the polish", running="polishing the best point")
            value, z, choice = candidates[0]
            polished = runner.polish(z, choice)
            if polished is not None and polished[1] > value:
                candidates.insert(0, (polished[1], polished[0], choice))
    return candidates, searches


def run_optimize(builder: cs.CaseBuilder, scenario: AbstractScenario, problem: Problem, out, progress=True,
                 processes=SOLO):
    """Sweep, multi-start Adam per choice, polish; write ``sweep.csv``, ``timeseries.csv``, ``optimize.png``
    (convergence) and, for the report, the configured design's and the optimum's outputs and scenes in
    ``baseline/`` and ``optimum/``. A robust problem (:mod:`~diffspace.design.optimize.robust`) first finds the nominal
    optimum (the same problem on the nominal design), then searches again from it on the statistics over the
    dispersed runs, and checks both optima on fresh draws (:mod:`~diffspace.design.optimize.robust_report`; the nominal
    optimum's outputs in ``nominal_optimum/``).
    Returns ``(summary, optimum design dict)``; among several processes the sweep is shared and the others
    return ``(None, None)`` after it."""

    opts, nominal = problem.options, problem.nominal()
    stages = StageStore(Path(out) / "store" / "stages")
    rng = np.random.default_rng(opts["seed"])
    configured = problem.clip(builder.configured(scenario, problem.keys))
    samples = problem.sample(rng, opts["sweep_samples"])
    if configured is not None:
        samples = np.concatenate([configured[None], samples[:-1]])
    table = (sweep_stage(builder, nominal, samples, out, progress, processes) if processes.size > 1 else
             stages.get("sweep", lambda: sweep_stage(builder, nominal, samples, out, progress)))
    if table is None:
        return None, None
    write_sweep_table(out / "sweep.csv", nominal, table, bool(type(scenario).outcomes))
    seeds = [] if configured is None else [configured]
    candidates, searches = stages.get(
        "nominal_search", lambda: _search(_Runner(scenario, nominal), table, seeds, rng, progress))
    with Spinner(f"{scenario.name} optimize", progress) as spin:
        spin.compile_stage("the metrics of single designs", running="evaluating the configured design and the optimum")
        summary, design = report(builder, scenario, nominal, table, candidates, sum(s.excluded for s in searches))
    summary["started_from_config"] = configured is not None
    cases = {"baseline": baseline_design(scenario, design), "optimum": design}
    if problem.uncertainty is not None:
        rng = np.random.default_rng([opts["seed"], 1])  # the robust starts' random points, whether resumed or not
        candidates, searches = stages.get("robust_search", lambda: _search(
            _Runner(scenario, problem), table, [problem.clip(design), *seeds], rng, progress))
        summary, design = robust_report(builder, problem, summary, candidates, searches, out, progress, stages)
        cases = {**cases, "optimum": design, "nominal_optimum": cases["optimum"]}
    history = problem.sign * np.concatenate([s.history for s in searches], axis=1)  # the user's objective
    write_timeseries(out, {"step": np.arange(len(history)),
                           **{f"start{s}_objective": history[:, s] for s in range(history.shape[1])}})
    plot_history(out / "optimize.png", scenario.name, problem, history,
                 np.concatenate([s.constraint_history for s in searches], axis=1), summary)
    with Spinner(f"{scenario.name} optimize", progress) as spin:
        spin.compile_stage("the simulation of the configured design and the optimum",
                           running="simulating the configured design and the optimum for the report")
        write_cases(builder, cases, out)
    stages.remove()
    if summary["initial_violations"]:
        print(f"note: the configured design (the first start) violates {'; '.join(summary['initial_violations'])}; "
              "the optimum is chosen among designs that meet every constraint", file=sys.stderr)
    return summary, design
