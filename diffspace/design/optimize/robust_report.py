r"""The robust optimum against the nominal one: statistics with their sampling errors, and the out-of-sample check.

At the robust optimum, the optimisation's own draws give each statistic the problem reads and its sampling
error (the standard deviation over ``BOOTSTRAP`` resamples of the runs, drawn with replacement). Then both the
robust and the nominal optimum run ``validation_samples`` fresh draws (the next cases of the same stream,
:meth:`~diffspace.design.optimize.robust.Uncertainty.draws`): per read output the mean, standard deviation and the
percentiles 0.135 / 50 / 99.865, the problem's statistics, and per constrained output the probability of
violating its bounds, counted over the runs that did not fail, with its Wilson 95 % interval
(:func:`~diffspace.design.outcomes.wilson_interval`). ``summary.json`` gets them under ``out_of_sample.robust``
and ``out_of_sample.nominal``; ``robust.png`` overlays the two designs' distributions and ``out_of_sample.csv``
keeps every run.
"""

from __future__ import annotations

import jax
import numpy as np

from ...core.status import SolverFailure, failed
from ...io.results import quantity_label
from .. import cases as cs
from ..evaluate import evaluate_cases, status_label
from ..montecarlo.plots import pyplot
from ..montecarlo.stats import PERCENTILES, output_statistics
from ..outcomes import wilson_interval
from ..progress import Spinner
from ..stages import StageStore
from ..sweep.command import ResultsTable
from .report import metrics_at
from .robust import statistics

BOOTSTRAP = 1000


def read_metrics(problem) -> list[str]:
    """The outputs a problem reads: the objective's metrics, then the constrained ones."""
    names = list(problem.weights) + [c.metric for c in problem.constraints]
    return list(dict.fromkeys(names))


class DispersedRuns:
    """One design's dispersed runs (host side): per-run metrics, status and usability."""

    def __init__(self, builder: cs.CaseBuilder, problem, design: dict, validation: bool):
        draws = problem.uncertainty.draws(validation)
        designs = {k: np.asarray(v) for k, v in problem.uncertainty.case_designs(design, draws).items()}
        self.cases = [{k: float(v[i]) for k, v in designs.items()} for i in range(len(draws))]
        chunk = problem.options["chunk_size"]
        parts = [evaluate_cases(builder, self.cases[i:i + chunk], chunk) for i in range(0, len(self.cases), chunk)]
        self.metrics = {k: np.concatenate([p.values[k] for p in parts]) for k in read_metrics(problem)}
        self.status = np.concatenate([p.status for p in parts])
        self.failed = failed(self.status)
        finite = np.all([np.isfinite(v) for v in self.metrics.values()], axis=0)
        self.weights = (finite & ~self.failed).astype(float)


def statistic_values(problem, runs: DispersedRuns) -> dict[str, float]:
    return {k: float(v) for k, v in statistics(problem, runs.metrics, runs.weights).items()}


def _bootstrap_errors(problem, runs: DispersedRuns, seed: int) -> dict[str, float]:
    n = len(runs.weights)
    counts = np.random.default_rng(seed).multinomial(n, np.full(n, 1.0 / n), size=BOOTSTRAP)
    resampled = jax.jit(jax.vmap(lambda w: statistics(problem, runs.metrics, w)))(runs.weights * counts)
    return {k: float(np.std(np.asarray(v), ddof=1)) for k, v in resampled.items()}


def _violations(problem, runs: DispersedRuns) -> dict[str, dict]:
    usable = runs.weights > 0
    out = {}
    for c in problem.constraints:
        x = runs.metrics[c.metric][usable]
        outside = int(np.sum(((x > c.upper) if c.upper is not None else False)
                             | ((x < c.lower) if c.lower is not None else False)))
        out[c.metric] = {"value": outside / max(x.size, 1), "ci95": list(wilson_interval(outside, int(x.size))),
                         "violations": outside, "runs": int(x.size)}
    return out


def _check(problem, runs: DispersedRuns, design: dict) -> dict:
    outputs = {}
    for name, values in runs.metrics.items():
        stats = output_statistics(values, runs.failed)
        outputs[name] = {k: stats[k] for k in ("mean", "std", *PERCENTILES, "count", "undefined")}
    return {"design": design, "samples": len(runs.weights), "outputs": outputs,
            "statistics": statistic_values(problem, runs),
            "violation_probability": _violations(problem, runs), "failed": int(runs.failed.sum())}


def robust_report(builder: cs.CaseBuilder, problem, nominal_summary: dict, candidates: list, searches: list, out,
                  progress: bool, stages: StageStore) -> tuple[dict, dict]:
    """The summary of a robust optimisation (the nominal one's keys, ``optimum`` now the robust design) and the
    robust optimum; writes ``robust.png`` and ``out_of_sample.csv``."""
    u = problem.uncertainty
    if not candidates:
        raise SolverFailure(f"optimize: no design met the constraints over the {u.samples} dispersed runs (the "
                            f"nominal optimum {nominal_summary['optimum']} meets them for the nominal case only); "
                            "widen the bounds, relax the constraints or their statistics")
    value, z, choice = candidates[0]
    design = {k: float(v) for k, v in problem.to_design(np.asarray(z)).items()}
    if problem.choice_key is not None:
        design[problem.choice_key] = float(choice)
    nominal = nominal_summary["optimum"]
    with Spinner("optimize under uncertainty", progress) as spin:
        spin.stage(f"the robust optimum's statistics and their bootstrap errors ({u.samples} runs)")
        own = stages.get("robust_runs", lambda: DispersedRuns(builder, problem, design, validation=False))
        values = statistic_values(problem, own)
        errors = _bootstrap_errors(problem, own, u.spec.seed)
        spin.stage(f"the out-of-sample check: {u.validation_samples} fresh runs of the robust and the nominal optimum")
        checks = {label: stages.get(f"{label}_out_of_sample_runs",
                                    lambda d=d: DispersedRuns(builder, problem, d, validation=True))
                  for label, d in (("robust", design), ("nominal", nominal))}
        optimum_metrics = metrics_at(builder, design)
    summary = {**nominal_summary, "optimum": design, "optimum_objective": problem.sign * value,
               "optimum_metrics": optimum_metrics,
               "nominal_optimum": {"design": nominal, "objective": nominal_summary["optimum_objective"],
                                   "metrics": nominal_summary["optimum_metrics"]},
               "uncertainty": _uncertainty_summary(problem),
               "robust_statistics": {k: {"value": values[k], "standard_error": errors[k],
                                         "statistic": _statistic_name(problem, k)} for k in values},
               "violation_probability_in_sample": _violations(problem, own),  # exact counts over the same runs
               "dispersed_runs_failed": {"optimization": int(sum(s.failed_runs for s in searches)),
                                         "at_optimum": int(own.failed.sum())},
               "out_of_sample": {label: _check(problem, runs, d) for (label, runs), d
                                 in zip(checks.items(), (design, nominal))}}
    plot_distributions(out / "robust.png", problem, checks, summary["out_of_sample"])
    _write_runs(out / "out_of_sample.csv", problem, checks)
    return summary, design


def _statistic_name(problem, key: str) -> str:
    if key == "objective":
        return problem.statistic.name
    c = next(c for c in problem.constraints if c.metric == key)
    return c.statistic.name if c.probability is None else f"probability of leaving the bounds (<= {c.probability:g})"


def _uncertainty_summary(problem) -> dict:
    u = problem.uncertainty
    moments = u.spec.moments()
    return {"samples": u.samples, "validation_samples": u.validation_samples, "seed": u.spec.seed,
            "dispersions": {k: {"mean": moments[k][0], "std": moments[k][1],
                                "centred_on_design": k in problem.keys} for k in u.keys}}


def _write_runs(path, problem, checks: dict) -> None:
    with ResultsTable(path) as table:
        for label, runs in checks.items():
            table.write([{"design": label, **runs.cases[i], **{k: v[i] for k, v in runs.metrics.items()},
                          "status": status_label(int(runs.status[i]))} for i in range(len(runs.cases))])


def plot_distributions(path, problem, checks: dict, results: dict) -> None:
    """``robust.png``: per read output, the fresh runs of the nominal and the robust optimum overlaid, with the
    constraint's bounds and each design's violation probability."""
    plt = pyplot()
    names = read_metrics(problem)
    fig, axes = plt.subplots(len(names), 1, figsize=(7.0, 2.6 * len(names)), squeeze=False)
    bounds = {c.metric: c for c in problem.constraints}
    for ax, name in zip(axes[:, 0], names):
        data = {label: runs.metrics[name][runs.weights > 0] for label, runs in checks.items()}
        edges = np.histogram_bin_edges(np.concatenate(list(data.values())), bins=60)
        parts = []
        for label, color in (("nominal", "grey"), ("robust", "steelblue")):
            ax.hist(data[label], bins=edges, color=color, alpha=0.55, label=f"{label} optimum")
            violation = results[label]["violation_probability"].get(name)
            if violation is not None:
                parts.append(f"{label}: {violation['value']:.2%} outside "
                             f"[{violation['ci95'][0]:.2%}, {violation['ci95'][1]:.2%}]")
        c = bounds.get(name)
        for bound, side in ((c.upper, "upper"), (c.lower, "lower")) if c is not None else ():
            if bound is not None:
                ax.axvline(bound, color="crimson", linewidth=1.5, label=f"{side} limit {bound:g}")
        ax.set_xlabel(quantity_label(name), fontsize=8)
        ax.set_ylabel("runs", fontsize=8)
        title = f"{quantity_label(name)}: {len(data['robust'])} fresh dispersed runs per design"
        ax.set_title(title + ("\n" + "; ".join(parts) + " (Wilson 95 %)" if parts else ""), fontsize=8)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
