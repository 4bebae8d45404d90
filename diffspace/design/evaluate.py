"""Evaluate a list of cases in one compiled, vmapped call: metrics (and optionally their gradients with
respect to design variables) plus a per-case status and reason. A case whose config is invalid, or whose
run fails, is recorded with its reason; it never aborts the batch or changes the other cases' numbers."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from ..scenarios import AbstractScenario
from ..core.status import ConfigError, Status, describe, failed
from . import cases as cs
from .gradient import design_metrics
from .outcomes import outcome_labels

INVALID_CONFIG = -1  # host-side status of a case whose config was rejected


@dataclasses.dataclass
class CaseResults:
    """Per-case outputs of one batch (NumPy): ``values[name]`` (NaN where unusable, or undefined for the run's
    outcome), ``status`` codes, ``reasons`` (empty where ok), ``gradients[(name, key)]`` when asked for, and
    ``outcomes``: each run's physical outcome (``""`` where it failed or the scenario declares none)."""

    values: dict[str, np.ndarray]
    status: np.ndarray
    reasons: list[str]
    gradients: dict[tuple[str, str], np.ndarray]
    outcomes: list[str] = dataclasses.field(default_factory=list)


def _metrics_and_gradients(scenario: AbstractScenario, design: dict, names: tuple, wrt: tuple):
    if not wrt:
        return design_metrics(scenario, design), {}

    def floats(d):
        m = design_metrics(scenario, d)
        return {n: jnp.asarray(m[n], float) for n in names}, m

    # one simulation: the forward-mode Jacobian of design_metrics, contracted once per output
    jac, metrics = jax.jacrev(floats, has_aux=True)(design)
    return metrics, {(n, k): jac[n][k] for n in names for k in wrt}


_BATCHED = {}
_NAMES = {}


def _metric_names(scenario: AbstractScenario, design: dict) -> tuple[str, ...]:
    """The scenario's metric names (shapes only; traced once per scenario structure and design keys)."""
    key = (jax.tree_util.tree_structure(scenario), tuple(design))
    if key not in _NAMES:
        shapes = jax.eval_shape(design_metrics, scenario, design)
        _NAMES[key] = tuple(k for k in shapes if k not in ("status", "outcome"))
    return _NAMES[key]


def _batched(names: tuple, wrt: tuple):
    key = (names, wrt)
    if key not in _BATCHED:
        _BATCHED[key] = cs.batched(lambda s, d: _metrics_and_gradients(s, d, names, wrt))
    return _BATCHED[key]


def evaluate_cases(builder: cs.CaseBuilder, cases: list[dict], pad_to: int, outputs: tuple = (),
                   gradient_keys: tuple = ()) -> CaseResults:
    """Metrics of every case; the batch is padded to ``pad_to`` (one compiled shape for every chunk)."""
    splits = [builder.split(case) for case in cases]
    built = [builder.scenario(host) for host, _ in splits]
    good = [i for i, s in enumerate(built) if not isinstance(s, ConfigError)]
    n = len(cases)
    if not good:
        reasons = [f"invalid config: {s}" for s in built]
        return CaseResults({}, np.full(n, INVALID_CONFIG), reasons, {}, [""] * n)
    order = [i if i in good else good[0] for i in range(n)] + [good[-1]] * (pad_to - n)
    host_keys = sorted({k for host, _ in splits for k, _ in host})
    distinct = {splits[i][0] for i in good}
    scenario = (cs.broadcast(built[good[0]], len(order)) if len(distinct) == 1
                else cs.stack([built[i] for i in order], host_keys))
    design = {k: jnp.asarray([float(splits[i][1][k]) for i in order]) for k in splits[good[0]][1]}
    available = _metric_names(built[good[0]], {k: v[0] for k, v in design.items()})
    names = tuple(k for k in available if not outputs or k in outputs)
    unknown = [o for o in outputs if o not in available]
    if unknown:
        raise ConfigError(f"sweep.outputs: unknown metric(s) {', '.join(unknown)} (known: "
                          f"{', '.join(available)})")
    metrics, grads = _batched(names, tuple(gradient_keys))(cs.shard(scenario), cs.shard(design))
    status = np.asarray(metrics["status"])[:n].astype(int)
    values = {k: np.asarray(metrics[k], float)[:n] for k in names}
    bad = np.array([i not in good for i in range(n)])
    status = np.where(bad, INVALID_CONFIG, status)
    unusable = bad | np.asarray(failed(status))
    values = {k: np.where(unusable, np.nan, v) for k, v in values.items()}
    gradients = {nk: np.where(unusable, np.nan, np.asarray(g, float)[:n]) for nk, g in grads.items()}
    reasons = [f"invalid config: {built[i]}" if bad[i] else ("" if status[i] == 0 else describe(status[i]))
               for i in range(n)]
    codes = np.asarray(metrics["outcome"])[:n] if "outcome" in metrics else np.zeros(n, int)
    outcomes = outcome_labels(type(built[good[0]]).outcomes, codes, ~unusable)
    return CaseResults(values, status, reasons, gradients, outcomes)


def status_totals(counts: dict[str, int]) -> dict[str, int]:
    """``ok_cases``, ``warning_cases`` and ``failed_cases`` of counts by status label (an invalid config and an
    unknown code are failures): a warning is a valid run and never counts as failed."""
    kinds = {"ok": 0, "warning": 0, "failed": 0}
    for label, n in counts.items():
        try:
            status = Status[label.upper()]
        except KeyError:
            kinds["failed"] += n
            continue
        kinds["ok" if status == Status.OK else "failed" if status.failed else "warning"] += n
    return {f"{kind}_cases": n for kind, n in kinds.items()}


def status_label(code: int) -> str:
    """Text for the status column of results tables."""
    if code == INVALID_CONFIG:
        return "invalid_config"
    try:
        return Status(code).label
    except ValueError:
        return f"status_{code}"

