"""Optimisation bookkeeping: the seeding sweep's table, the best sweep rows per choice, and the report."""

from __future__ import annotations

import numpy as np

from ...core.status import SolverFailure, failed
from ...io.results import Figure, Panel, Series, plot_figure, quantity_label
from ...scenarios import AbstractScenario
from .. import cases as cs
from ..evaluate import evaluate_cases, status_label
from ..outcomes import outcome_summary
from ..progress import Bar, compiling
from ..sweep.command import ResultsTable
from .problem import Problem


def sweep_cases(problem: Problem, samples: np.ndarray) -> list[dict]:
    """The sweep's cases: every sample for every choice."""
    rows = []
    for choice in problem.choices:
        for x in samples:
            case = dict(zip(problem.keys, (float(v) for v in x)))
            if problem.choice_key is not None:
                case[problem.choice_key] = float(choice)
            rows.append(case)
    return rows


def sweep_table(builder: cs.CaseBuilder, problem: Problem, samples: np.ndarray, progress: bool) -> dict:
    """Evaluate the sweep in chunks; columns: inputs, ``choice``, objective (maximised), feasible, metrics."""
    cases = sweep_cases(problem, samples)
    chunk = problem.options["chunk_size"]
    parts = []
    with Bar("optimize sweep", len(cases), "case", progress, batch="chunk",
             first=compiling(f"the batched metrics ({chunk} cases per chunk)")) as bar:
        for start in range(0, len(cases), chunk):
            parts.append(evaluate_cases(builder, cases[start:start + chunk], chunk))
            bar.update(len(parts[-1].status))
    return tabulate(problem, cases, parts)


def tabulate(problem: Problem, cases: list[dict], parts: list) -> dict:
    """The sweep's table from its cases and their results (chunk by chunk, in order)."""
    values = {k: np.concatenate([p.values[k] for p in parts]) for k in parts[0].values}
    status = np.concatenate([p.status for p in parts])
    outcomes = [label for p in parts for label in p.outcomes]
    reasons = [reason for p in parts for reason in p.reasons]
    objective = np.asarray(problem.objective(values), float)
    g = np.asarray(problem.g(values), float).reshape(-1, len(cases)) if problem.constraints else np.zeros((0, len(cases)))
    usable = np.isfinite(objective) & np.all(np.isfinite(g), axis=0) & outcomes_met(problem, outcomes)
    table = {"x": np.array([[c[k] for k in problem.keys] for c in cases]),
             "choice": np.array([c.get(problem.choice_key, np.nan) for c in cases]) if problem.choice_key else
             np.full(len(cases), np.nan),
             "objective": objective, "feasible": usable & np.all(g <= 0.0, axis=0), "status": status,
             "reason": reasons, "outcome": outcomes, **values}
    return table


def outcomes_met(problem: Problem, labels: list[str]) -> np.ndarray:
    """Per run: its outcome meets the problem's outcome bounds (a failed run has no outcome and meets none
    when there are bounds)."""
    if not problem.outcome_bounds:
        return np.ones(len(labels), bool)
    return np.array([bool(label) and all(b.allows(float(label == b.name)) for b in problem.outcome_bounds)
                     for label in labels], bool)


def best_sweep_rows(table: dict, problem: Problem, choice, n_starts: int) -> np.ndarray:
    """Design points of the best feasible sweep rows of ``choice`` (half the starts, rounded up)."""
    mask = table["feasible"] & ((table["choice"] == choice) if choice is not None else True)
    order = np.argsort(-np.where(mask, table["objective"], -np.inf))
    n = min((n_starts + 1) // 2, int(mask.sum()))
    return table["x"][order[:n]]


def metrics_at(builder: cs.CaseBuilder, design: dict) -> dict:
    result = evaluate_cases(builder, [design], 1)
    out = {k: float(v[0]) for k, v in result.values.items()}
    out["status"] = status_label(int(result.status[0]))
    if result.outcomes[0]:
        out["outcome"] = result.outcomes[0]
    return out


def report(builder, scenario: AbstractScenario, problem: Problem, table: dict, candidates: list, excluded: int):
    """Summary dict and the optimum design (config keys, config units)."""
    feasible = table["feasible"]
    best_row = int(np.argmax(np.where(feasible, table["objective"], -np.inf))) if feasible.any() else None
    sweep_best = float(table["objective"][best_row]) if best_row is not None else -np.inf
    if best_row is not None and (not candidates or sweep_best > candidates[0][0]):
        z = problem.to_z(table["x"][best_row])
        choice = table["choice"][best_row] if problem.choice_key else None
        candidates.insert(0, (sweep_best, z, choice))
    if not candidates:
        raise_no_feasible(table)
    value, z, choice = candidates[0]
    design = {k: float(v) for k, v in problem.to_design(np.asarray(z)).items()}
    if problem.choice_key is not None:
        design[problem.choice_key] = _number(choice)
    sign = problem.sign
    initial = metrics_at(builder, {})
    violations = violated(problem, initial)
    summary = {
        "objective": objective_formula(problem),
        "objective_terms": [{"metric": k, "weight": w * sign} for k, w in problem.weights.items()],
        "direction": problem.direction,
        "optimum": design,
        "optimum_objective": sign * value,
        "optimum_metrics": metrics_at(builder, design),
        "initial_metrics": initial,
        "initial_objective": sign * float(problem.objective(initial)),
        "initial_feasible": not violations,
        "initial_violations": violations,
        "sweep_samples": int(len(table["objective"])),
        "sweep_feasible": int(feasible.sum()),
        "sweep_failed": int(np.sum(failed(table["status"]))),
        "sweep_undefined": int(np.sum(~failed(table["status"]) & ~np.isfinite(table["objective"]))),
        "sweep_best_objective": sign * sweep_best if best_row is not None else None,
        "sweep_best_design": dict(zip(problem.keys, table["x"][best_row].tolist())) if best_row is not None else None,
        "optimizer_not_beaten_by_sweep": bool(value >= sweep_best - 1e-12 * max(abs(sweep_best), 1.0)),
        "nan_gradient_steps": excluded,
        **outcome_summary(type(scenario).outcomes, table["outcome"]),
    }
    if problem.outcome_bounds:
        summary["outcome_constraints"] = {f"outcome.{b.name}": {k: v for k, v in (("lower", b.lower), ("upper", b.upper))
                                                                if v is not None} for b in problem.outcome_bounds}
    if problem.choice_key is not None:
        best = {}
        for v, _, c in candidates:
            best[_number(c)] = max(best.get(_number(c), -np.inf), v)
        summary["best_objective_per_choice"] = {str(c): sign * v for c, v in sorted(best.items())}
    return summary, design


def objective_formula(problem: Problem) -> str:
    """``"maximize stable_velocity_m_s"``, ``"minimize 2 x peak_force_N - 0.5 x impulse_N_s"``: the objective
    as the user wrote it (the weights are factors, never values of the metrics)."""
    terms = []
    for k, (name, weight) in enumerate(problem.weights.items()):
        w = weight * problem.sign
        sign = ("-" if w < 0 else "") if k == 0 else (" - " if w < 0 else " + ")
        terms.append(f"{sign}{'' if abs(w) == 1 else f'{abs(w):g} x '}{name}")
    return f"{problem.direction} {''.join(terms)}"


def violated(problem: Problem, metrics: dict) -> list[str]:
    """The constraints ``metrics`` violate, as ``"peak_force_N = 812.4 above its upper limit 500"``; a metric
    that is not finite violates every bound on it."""
    out = []
    for c in problem.constraints:
        value = float(metrics[c.metric])
        for bound, side, bad in ((c.upper, "above its upper", value > (c.upper or 0.0)),
                                 (c.lower, "below its lower", value < (c.lower or 0.0))):
            if bound is not None and (bad or not np.isfinite(value)):
                out.append(f"{c.metric} = {value:.6g} {side} limit {bound:g}")
    for b in problem.outcome_bounds:
        if not b.allows(float(metrics.get("outcome") == b.name)):
            out.append(f"outcome {metrics.get('outcome', 'none (the run failed)')}: the probability of {b.name} "
                       f"must lie in [{b.lower or 0.0:g}, {1.0 if b.upper is None else b.upper:g}]")
    return out


def _number(value) -> int | float:
    """A discrete choice as written to configs and summaries: an integer where it is one."""
    value = float(value)
    return int(value) if value.is_integer() else value


def write_sweep_table(path, problem: Problem, table: dict, outcomes: bool) -> None:
    """``sweep.csv``: one row per sweep case: design, choice, objective (the user's sign), feasibility, the
    status label and its reason, the outcome (for a scenario that declares outcomes) and every metric."""
    metrics = [k for k in table if k not in ("x", "choice", "objective", "feasible", "status", "reason", "outcome")]
    with ResultsTable(path) as out:
        out.write([{**dict(zip(problem.keys, table["x"][i].tolist())),
                    **({problem.choice_key: table["choice"][i]} if problem.choice_key is not None else {}),
                    "objective": problem.sign * table["objective"][i], "feasible": bool(table["feasible"][i]),
                    "status": status_label(int(table["status"][i])), "reason": table["reason"][i],
                    **({"outcome": table["outcome"][i]} if outcomes else {}),
                    **{k: table[k][i] for k in metrics}} for i in range(len(table["objective"]))])


def raise_no_feasible(table: dict):
    usable = int(np.sum(np.isfinite(table["objective"])))
    raise SolverFailure(f"optimize: no feasible point found ({usable} of {len(table['objective'])} sweep cases "
                        "ran; none met the constraints, and no Adam iterate did); widen the bounds or relax "
                        "the constraints")


def _constraint_values(constraint, g_rows: np.ndarray) -> np.ndarray:
    """The constrained metric from its normalised ``g`` rows (upper bound first, as ``Constraint.values``)."""
    bound, sign = (constraint.upper, 1.0) if constraint.upper is not None else (constraint.lower, -1.0)
    scale = abs(bound) if bound != 0 else 1.0
    return bound + sign * g_rows[..., 0] * scale


def plot_history(path, name: str, problem: Problem, history: np.ndarray, g: np.ndarray, summary: dict) -> None:
    """``optimize.png``: the user's objective (in its own units) per Adam start, feasible iterates marked, the
    configured design's, the sweep's best and the final optimum's values; each constrained metric per start with
    its limits. ``name``: the scenario."""
    steps = np.arange(len(history))
    feasible = np.all(np.nan_to_num(g, nan=1.0) <= 0.0, axis=2) if g.shape[2] else np.isfinite(history)
    series = [Series(f"start {s + 1}", history[:, s]) for s in range(history.shape[1])]
    series.append(Series("feasible iterate", np.where(feasible, history, np.nan).ravel(),
                         x=np.repeat(steps, history.shape[1]), style="points"))
    robust = problem.uncertainty is not None
    named = ((("optimum_objective", "robust optimum"),) if robust else (
        ("initial_objective", "configured design"), ("sweep_best_objective", "sweep's best"),
        ("optimum_objective", "optimum")))  # a robust history is of a statistic: nominal values do not belong
    marks = [(summary[key], f"{label} {summary[key]:.4g}") for key, label in named
             if isinstance(summary.get(key), float) and np.isfinite(summary[key])]
    objective = " + ".join(f"{w * problem.sign:g} x {quantity_label(k)}" if w * problem.sign != 1
                           else quantity_label(k) for k, w in problem.weights.items())
    over = f" over {problem.uncertainty.samples} dispersed runs" if robust else ""
    statistic = f"{problem.statistic.name} of " if robust else ""
    panels = [Panel(f"objective ({problem.direction}): {statistic}{objective}{over}", tuple(series), tuple(marks))]
    offset = 0
    for c in problem.constraints:
        width = 1 if robust and c.probability is not None else (c.upper is not None) + (c.lower is not None)
        rows = g[:, :, offset:offset + width]
        if robust and c.probability is not None:  # g = P / P_max - 1
            values, limits = (rows[..., 0] + 1.0) * c.probability, ((c.probability, f"allowed {c.probability:g}"),)
            title = f"constraint: probability that {quantity_label(c.metric)} leaves its bounds{over}"
        else:
            values = _constraint_values(c, rows)
            limits = tuple((b, f"{side} limit {b:g}") for b, side in ((c.upper, "upper"), (c.lower, "lower"))
                           if b is not None)
            title = f"constraint: {c.statistic.name + ' of ' if robust else ''}{quantity_label(c.metric)}{over}"
        panels.append(Panel(title, tuple(Series(f"start {s + 1}", values[:, s]) for s in range(values.shape[1])),
                            limits))
        offset += width
    infeasible_start = ("; the configured design (start 1) violates a constraint"
                        if summary.get("started_from_config") and not summary.get("initial_feasible", True) else "")
    plot_figure(path, Figure(f"{name} optimize: convergence of {history.shape[1]} Adam starts{infeasible_start}",
                             tuple(panels), steps, xlabel="Adam step"))
