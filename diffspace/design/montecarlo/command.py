"""``diffspace montecarlo``: a dispersion campaign of any scenario, with its sensitivities.

The campaign's runs (:mod:`~diffspace.design.montecarlo.spec`: dispersed design keys, drawn per chunk from the
seed; Saltelli's ``A``, ``B``, ``AB_i`` runs when Sobol indices are asked for) go through the sweep machinery
(:mod:`~diffspace.design.sweep.command`): chunked, vmapped, stored and resumable, shared by several processes. Once
every chunk is stored, the lead process streams the store into ``results.csv`` (one row per run: the run's
place in Saltelli's scheme, inputs, outputs, status, reason), computes the statistics
(:mod:`~diffspace.design.montecarlo.stats`: over every run, or over the ``A`` and ``B`` runs with Sobol
indices, the ``2N`` independent draws), the local sensitivities from one run at the inputs' means
differentiated by forward mode (:func:`~diffspace.design.gradient.design_metrics`), and draws the plots.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np

from ...core.status import ConfigError, failed
from ...scenarios import AbstractScenario
from .. import cases as cs
from ..distributed import SOLO, Processes
from ..evaluate import INVALID_CONFIG, evaluate_cases, status_label, status_totals
from ..outcomes import outcome_indicators, outcome_summary
from ..sweep.command import PLOT_POINTS, ChunkStore, ResultsTable, compute_chunks, stored_rows
from ..timing import StageTimes, time_line
from .plots import plot_histograms, plot_outcomes, plot_scatter, plot_tornado
from .spec import MonteCarloSpec
from .stats import local_sensitivity, mode_notes, output_statistics, sobol_indices, sobol_notes, sobol_summary


def prepare_montecarlo(spec: MonteCarloSpec, scenario: AbstractScenario, builder: cs.CaseBuilder) -> MonteCarloSpec:
    """``spec`` checked against the scenario (every dispersed key a continuous design variable whose values its
    config allows, every output a metric; no outputs: all metrics), the config's values filling the means not
    given. The result's :meth:`~MonteCarloSpec.values` are the campaign's inputs."""
    parameters = {p.key: p for p in scenario.design_space()}
    for key in spec.input_keys:
        if key not in parameters or parameters[key].integer:
            known = ", ".join(k for k, p in parameters.items() if not p.integer) or "none"
            raise ConfigError(f"{spec.where(key)}: not a continuous design variable of "
                              f"'{scenario.name}' (known: {known})")
    names = scenario.metrics_names()
    unknown = [o for o in spec.outputs if o not in names]
    if unknown:
        raise ConfigError(f"montecarlo.outputs: unknown metric(s) {', '.join(unknown)} (known: {', '.join(names)})")
    spec = dataclasses.replace(spec, outputs=spec.outputs or tuple(names))
    keys = [d.key for d in spec.dispersions]  # the fitted keys have their means
    spec = spec.with_means({k: (builder.configured(scenario, (k,)) or {}).get(k) for k in keys})
    for dispersion in spec.marginals():
        _check_allowed(dispersion, type(scenario).schema(), spec)
    return spec


NEVER_DRAWN = 2.0**-53  # below the smallest uniform number drawn: such a tail is never sampled


def _check_allowed(dispersion, schema, spec: MonteCarloSpec) -> None:
    """Refuse a dispersion that can draw values its config key does not allow (``diffspace run`` would refuse
    them), saying how much of it lies outside: truncate it to the allowed range instead. A fitted (correlated)
    normal is never truncated (a joint truncation would change its covariance)."""
    section, name = dispersion.key.split("[")[0].split(".", 1)
    field = schema.sections.get(section, {}).get(name)
    if field is None:
        return
    low = max(v for v in (field.min, field.gt, -math.inf) if v is not None)
    high = field.max if field.max is not None else math.inf
    outside = dispersion.mass_outside(low, high)
    if outside > NEVER_DRAWN:
        bounds = [f"{'above' if field.gt is not None else 'at least'} {low:g}"] if math.isfinite(low) else []
        allowed = " and ".join(bounds + ([f"at most {high:g}"] if math.isfinite(high) else []))
        remedy = ("truncate it with lower / upper inside that range" if dispersion.key not in spec.fitted_keys else
                  "a fitted normal is not truncated: refit with more informative data, or give this key's "
                  "dispersion by hand in montecarlo.dispersions instead of montecarlo.from_fit")
        raise ConfigError(f"{spec.where(dispersion.key)}: {outside:.3g} of this {dispersion.distribution} "
                          f"distribution lies outside the values the key allows ({allowed}); {remedy}")


def run_montecarlo(builder: cs.CaseBuilder, spec: MonteCarloSpec, out: Path, progress: bool = True,
                   processes: Processes = SOLO) -> dict | None:
    """Run (or resume) the campaign in ``out``; write ``results.csv`` and the plots and return the summary (the
    lead; the other processes return ``None`` once their chunks are done). ``spec`` has its means filled in."""
    store, times = ChunkStore(out / "store"), StageTimes()
    with times.stage("simulations"):
        counts = compute_chunks(builder, spec, store, (), processes, progress, "montecarlo")
    if counts is None:
        return None
    declared = type(builder.scenario(())).outcomes
    with times.stage("statistics"):
        values, status, outcomes, kept = _collect(store, spec, out, bool(declared))
        summary = _summary(spec, values, status) | _outcomes(spec, declared, outcomes)
    with times.stage("nominal_run_and_local_sensitivities" if "local" in spec.sensitivity else "nominal_run"):
        summary |= _nominal(builder, spec)
    summary |= counts
    with times.stage("plots"):
        stats_rows = _statistics_rows(spec)
        plot_histograms(out / "histograms.png", {k: v[stats_rows] for k, v in values.items()}, summary["outputs"])
        plot_tornado(out / "tornado.png", summary, spec.input_keys, list(values))
        plot_outcomes(out / "outcomes.png", summary)
        plot_scatter(out / "scatter.png", {k: np.asarray([r[k] for r in kept]) for k in spec.input_keys},
                     {k: np.asarray([r[k] for r in kept], float) for k in values})
    summary["time_s"] = times.summary()
    return summary


def _collect(store: ChunkStore, spec: MonteCarloSpec, out: Path, with_outcomes: bool):
    """Stream the store into ``results.csv``; every run's outputs, status and outcome, and a subsample of rows."""
    values: dict[str, list] = {}
    status, outcomes, kept = [], [], []
    stride = max(1, spec.n_cases // PLOT_POINTS)
    with ResultsTable(out / "results.csv") as table:
        for rows, result in stored_rows(store, spec, spec.labels, outcomes=with_outcomes):
            table.write(rows)
            for name, column in result.values.items():
                values.setdefault(name, []).append(column)
            status.append(np.asarray(result.status))
            outcomes += result.outcomes
            kept += [r for r in rows if r["case"] % stride == 0]
    return {k: np.concatenate(v) for k, v in values.items()}, np.concatenate(status), outcomes, kept


def _statistics_rows(spec: MonteCarloSpec) -> np.ndarray:
    """The runs the output statistics use: all, or the ``A`` and ``B`` runs of Saltelli's scheme."""
    role = np.arange(spec.n_cases) % spec.runs_per_sample
    return role < 2 if spec.sobol else np.ones(spec.n_cases, bool)


def _summary(spec: MonteCarloSpec, values: dict[str, np.ndarray], status: np.ndarray) -> dict:
    run_failed = np.asarray(failed(status)) | (status == INVALID_CONFIG)
    rows = _statistics_rows(spec)
    labels, counts = np.unique([status_label(int(s)) for s in status], return_counts=True)
    summary = {
        "samples": spec.samples, "runs": spec.n_cases, "seed": spec.seed, "sensitivity": list(spec.sensitivity),
        **_inputs_summary(spec),
        "status_counts": {str(k): int(n) for k, n in zip(labels, counts)},
        "failed_runs": int(run_failed.sum()), "statistics_runs": int(rows.sum()),
        "outputs": {k: output_statistics(v[rows], run_failed[rows]) for k, v in values.items()},
    }
    summary["distribution_notes"] = mode_notes(summary["outputs"])
    if spec.sobol:
        width = spec.runs_per_sample
        indices = {k: sobol_indices(np.where(run_failed, np.nan, v).reshape(-1, width), spec.bootstrap, spec.seed)
                   for k, v in values.items()}
        summary |= sobol_summary(indices, spec.input_keys, spec.confidence)
        summary["confidence"] = spec.confidence
        summary["sobol_notes"] = sobol_notes(summary)
    return summary


def _inputs_summary(spec: MonteCarloSpec) -> dict:
    """``dispersions``: every key's distribution as given and its moments as sampled (a fitted key: ``from_fit``,
    the fit's directory); with ``from_fit``, the fitted keys' mean, covariance and correlation as sampled."""
    moments, c = spec.moments(), spec.correlated
    dispersions = {d.key: {"distribution": d.distribution, "mean": d.mean, "std": d.std, "lower": d.lower,
                           "upper": d.upper, "sampled_mean": moments[d.key][0], "sampled_std": moments[d.key][1]}
                   | ({"from_fit": c.source} if d.key in spec.fitted_keys else {}) for d in spec.marginals()}
    if c is None:
        return {"dispersions": dispersions}
    return {"dispersions": dispersions, "from_fit": {"directory": c.source, "keys": list(c.keys), "mean": list(c.mean),
                                                      "covariance": c.covariance, "correlation": c.correlation()}}


def _outcomes(spec: MonteCarloSpec, declared: tuple[str, ...], outcomes: list[str]) -> dict:
    """How often each declared outcome happens over the statistics runs that did not fail (with the Wilson
    interval) and, with Sobol indices, the indices of each outcome's indicator: the shares of the variance of
    ``1{outcome}`` (whose mean is the probability) due to each input."""
    if not declared:
        return {}
    rows = _statistics_rows(spec)
    summary = outcome_summary(declared, [label for label, use in zip(outcomes, rows) if use])
    if spec.sobol:
        width = spec.runs_per_sample
        indicators = outcome_indicators(declared, outcomes)
        indices = {k: sobol_indices(v.reshape(-1, width), spec.bootstrap, spec.seed) for k, v in indicators.items()
                   if np.nanstd(v) > 0}  # an outcome that always or never happens has no variance to apportion
        sobol = sobol_summary(indices, spec.input_keys, spec.confidence)
        kinds = ("sobol_first", "sobol_total", "sobol_first_ci", "sobol_total_ci")
        summary["outcome_sobol"] = {kind: sobol[kind] for kind in kinds}
    return summary


def _nominal(builder: cs.CaseBuilder, spec: MonteCarloSpec) -> dict:
    """The run at the inputs' means and, with ``"local"``, its derivatives times the inputs' deviations."""
    moments = spec.moments()
    means = {k: m for k, (m, _) in moments.items()}
    wrt = spec.input_keys if "local" in spec.sensitivity else ()
    # without derivatives, padded to a chunk: the campaign's own compiled program (no second compile)
    result = evaluate_cases(builder, [means], 1 if wrt else spec.chunk_size, spec.outputs, wrt)
    nominal = {"inputs": means, "status": status_label(int(result.status[0])), "reason": result.reasons[0],
               "outputs": {k: float(v[0]) for k, v in result.values.items()}}
    out = {"nominal": nominal}
    if wrt:
        gradients = {nk: float(g[0]) for nk, g in result.gradients.items()}
        out["local_sensitivity"] = local_sensitivity(gradients, {k: s for k, (_, s) in moments.items()})
        out["local_derivative"] = {}
        for (metric, key), value in gradients.items():
            out["local_derivative"].setdefault(metric, {})[key] = value if np.isfinite(value) else None
    return out


def print_montecarlo(summary: dict, title: str) -> None:
    """The campaign in a few lines: how often each outcome happened, each output's mean, deviation and 3-sigma
    band, and its largest effects."""
    print(f"== {title}")
    totals = status_totals(summary["status_counts"])
    by_status = ", ".join(f"{k} {n}" for k, n in summary["status_counts"].items() if k != "ok")
    statistics = (f"; the statistics use the {summary['statistics_runs']} A and B runs of Saltelli's scheme"
                  if summary["statistics_runs"] < summary["runs"] else "")
    print(f"  runs: {summary['runs']}: ok {totals['ok_cases']}, warnings {totals['warning_cases']}, failed "
          f"{totals['failed_cases']}{f' ({by_status})' if by_status else ''}{statistics}")
    for name, p in summary.get("outcome_probability", {}).items():
        low, high = summary["outcome_probability_ci"][name]
        print(f"  outcome {name:28s} {p:8.2%}  (95 % interval {low:.2%} to {high:.2%}, "
              f"{summary['outcome_counts'][name]} of {summary['outcome_runs']} runs)")
    print(f"  {'output':36s} {'mean':>11s} {'std':>11s} {'p0.135':>11s} {'p99.865':>11s} {'runs':>6s} "
          f"{'undef.':>6s} {'failed':>6s}")
    for name, s in summary["outputs"].items():
        numbers = [s[k] if s[k] is not None else float("nan") for k in ("mean", "std", "p0.135", "p99.865")]
        print(f"  {name:36s} " + " ".join(f"{v:11.5g}" for v in numbers)
              + f" {s['count']:6d} {s['undefined']:6d} {s['failed']:6d}")
    for kind in ("local_sensitivity", "sobol_total"):
        for name, effects in summary.get(kind, {}).items():
            ranked = sorted(((k, v) for k, v in effects.items() if v is not None), key=lambda kv: -abs(kv[1]))
            if ranked:
                text = ", ".join(f"{k} {v:.3g}" for k, v in ranked[:3])
                print(f"  {kind} of {name}: {text}")
    for note in summary.get("distribution_notes", []) + summary.get("sobol_notes", []):
        print(f"  note: {note}")
    if "time_s" in summary:
        print(f"  {time_line(summary['time_s'])}")
