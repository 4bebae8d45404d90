"""``diffspace run``: one simulation, or a *study* of several cases of the same scenario batched in one call.

A ``[study]`` table turns a run into a study::

    [study]
    cases = {"ejection.attitude" = ["attitude_1", "attitude_2"]}   # keys zipped: one case per position
    columns = ["separation_velocity_m_s", "stable_velocity_m_s"]  # summary keys printed and plotted

Every case is built like a sweep case (design variables traced, other keys through the config), all run in
one vmapped simulation; each case's time series and plots go to ``out/<label>/``, the summary holds every
case's summary, and failed cases are reported with their reason (the command then exits with status 3).
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import equinox as eqx
import jax
import numpy as np

from ..io.results import print_summary
from ..io.scene import save_scene
from ..scenarios import AbstractScenario
from ..core.status import ConfigError, SolverFailure, Status, failed
from . import cases as cs
from .stored import stored_jit


@stored_jit
def simulate_default(scenario: AbstractScenario):
    """``scenario.simulate(scenario.params)``, compiled once per scenario structure."""
    return scenario.simulate(scenario.params)


@stored_jit
def _simulate_batch(scenarios: AbstractScenario, design: dict):
    return eqx.filter_vmap(lambda s, d: s.simulate(s.with_design(s.params, d)))(scenarios, design)


def run_single(scenario: AbstractScenario, out: Path) -> dict:
    """Simulate, refuse failed outcomes (``SolverFailure`` naming the phase), write the outputs."""
    outcome = simulate_default(scenario)
    status = int(outcome.status)
    if failed(status):
        raise SolverFailure(f"{scenario.name}: {scenario.diagnose(outcome)}")
    if status != Status.OK:
        print(f"warning: {Status(status).description}", file=sys.stderr)
    summary = scenario.summary(outcome)
    scenario.write(outcome, out)
    write_scene(scenario, outcome, out)
    print_summary(summary, scenario.name)
    return summary


def write_scene(scenario: AbstractScenario, outcome, out: Path) -> None:
    """``out/scene.npz``: the outcome's 3-D scene for the report (nothing for a scenario without one)."""
    scene = scenario.scene(outcome)
    if scene is not None:
        save_scene(out / "scene.npz", scene)


@dataclasses.dataclass(frozen=True)
class StudySpec:
    cases: dict[str, list]
    columns: tuple[str, ...]

    @property
    def size(self) -> int:
        return len(next(iter(self.cases.values())))

    def labels(self) -> list[str]:
        first = next(iter(self.cases.values()))
        if all(isinstance(v, str) for v in first) and len(set(first)) == len(first):
            return list(first)
        return [f"case_{i + 1}" for i in range(self.size)]


def parse_study(table: dict) -> StudySpec:
    unknown = sorted(set(table) - {"cases", "columns"})
    if unknown:
        raise ConfigError(f"study.{unknown[0]}: unknown key (known: cases, columns)")
    cases = table.get("cases")
    if not isinstance(cases, dict) or not cases or not all(isinstance(v, list) and v for v in cases.values()):
        raise ConfigError("study.cases: expected a table {config key = [value per case, ...]}")
    sizes = {len(v) for v in cases.values()}
    if len(sizes) != 1:
        raise ConfigError("study.cases: every key needs the same number of values (one per case)")
    columns = table.get("columns", [])
    if not isinstance(columns, list) or not all(isinstance(c, str) for c in columns):
        raise ConfigError("study.columns: expected a list of summary keys")
    return StudySpec(cases, tuple(columns))


def run_study(builder: cs.CaseBuilder, spec: StudySpec, out: Path) -> dict:
    """All cases in one vmapped simulation; per-case outputs in ``out/<label>/``; a table and ``study.png``."""
    from .study_report import plot_study, print_study

    labels = spec.labels()
    cases = [{k: v[i] for k, v in spec.cases.items()} for i in range(spec.size)]
    splits = [builder.split(c) for c in cases]
    built = [builder.scenario(host) for host, _ in splits]
    bad = [(label, s) for label, s in zip(labels, built) if isinstance(s, ConfigError)]
    if bad:
        raise ConfigError(f"study case {bad[0][0]}: {bad[0][1]}")
    host_keys = sorted({k for host, _ in splits for k, _ in host})
    stacked = cs.stack(built, host_keys)
    design = {k: np.asarray([float(d[k]) for _, d in splits]) for k in splits[0][1]}
    outcomes = _simulate_batch(stacked, design)
    table, failures = {}, []
    for i, (label, scenario) in enumerate(zip(labels, built)):
        outcome = jax.tree_util.tree_map(lambda x: x[i], outcomes)
        if failed(int(outcome.status)):
            failures.append(f"{label}: {scenario.diagnose(outcome)}")
            table[label] = {"status": Status(int(outcome.status)).label}
            continue
        table[label] = scenario.summary(outcome)
        scenario.write(outcome, out / label)
        write_scene(scenario, outcome, out / label)
    columns = spec.columns or tuple(k for k, v in next(iter(table.values())).items() if isinstance(v, float))[:8]
    print_study(table, columns)
    plot_study(out / "study.png", table, columns)
    summary = {"study_cases": labels, "cases": table}
    if failures:
        summary["failures"] = failures
    return summary
