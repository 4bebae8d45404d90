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

from ...core.status import ConfigError, Status, failed
from ...io.results import print_summary, write_summary
from ...io.scene import save_scene
from ...scenarios import AbstractScenario
from .. import cases as cs
from ..labels import design_parameters, key_label
from ..progress import Spinner
from ..stored import stored_jit


@stored_jit
def simulate_default(scenario: AbstractScenario):
    """``scenario.simulate(scenario.params)``, compiled once per scenario structure."""
    return scenario.simulate(scenario.params)


@stored_jit
def _simulate_batch(scenarios: AbstractScenario, design: dict):
    return eqx.filter_vmap(lambda s, d: s.simulate(s.with_design(s.params, d)))(scenarios, design)


def run_single(scenario: AbstractScenario, out: Path, progress: bool = True) -> dict:
    """Simulate and write the outputs (a failed run too: its summary names the failure, ``"failures"`` lists it
    and the caller raises ``SolverFailure`` once the results are in place); ``progress``: a spinner on stderr
    while the simulation compiles and runs and while the outputs are written."""
    with Spinner(scenario.name, progress) as spin:
        spin.compile_stage("the simulation")
        outcome = jax.block_until_ready(simulate_default(scenario))
        status = int(outcome.status)
        spin.stage("writing the results, plots and 3-D scene")
        summary = write_outcome(scenario, outcome, out)
    if failed(status):
        summary["failures"] = [f"{scenario.name}: {summary['reason']}"]
        return summary
    if status != Status.OK:
        print(f"warning: {Status(status).description}", file=sys.stderr)
    print_summary(summary, scenario.name)
    return summary


def write_outcome(scenario: AbstractScenario, outcome, out: Path) -> dict:
    """The run's summary, time series, plots and 3-D scene in ``out``; the summary (returned, not written).

    A failed run is written as far as its numbers allow: its summary starts with ``status``, ``reason`` and
    ``time_reached_s`` (the last time at which every written time series is finite), then whatever of the
    scenario's summary and files could be computed (``not_written`` says what could not, and why), so that the
    trajectory up to the failure can be looked at."""
    if not failed(int(outcome.status)):
        summary = scenario.summary(outcome)
        scenario.write(outcome, out)
        write_scene(scenario, outcome, out)
        return summary
    summary = {"status": Status(int(outcome.status)).label, "reason": scenario.diagnose(outcome)}
    problems = []
    for what, write in (("summary", lambda: summary.update({**scenario.summary(outcome), **summary})),
                        ("time series and plots", lambda: scenario.write(outcome, out)),
                        ("3-D scene", lambda: write_scene(scenario, outcome, out))):
        try:
            write()
        except Exception as err:  # noqa: BLE001 - a failed run's numbers may break any writer: say which
            problems.append(f"{what}: {type(err).__name__}: {err}")
    summary["time_reached_s"] = time_reached(out)
    if problems:
        summary["not_written"] = problems
    return {"status": summary.pop("status"), "reason": summary.pop("reason"),
            "time_reached_s": summary.pop("time_reached_s"), **summary}


def time_reached(out: Path) -> float | None:
    """The last time of ``out/timeseries.npz`` (column ``t_s``) at which every column is finite; ``None`` when
    there is no such file or time."""
    path = out / "timeseries.npz"
    if not path.is_file():
        return None
    with np.load(path) as data:
        if "t_s" not in data:
            return None
        finite = np.all([np.isfinite(data[k]) for k in data.files], axis=0)
        return float(data["t_s"][np.flatnonzero(finite)[-1]]) if finite.any() else None


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


def _simulate_cases(builder: cs.CaseBuilder, labels: list[str], cases: list[dict]) -> list[tuple]:
    """``(label, scenario, outcome)`` of every case, all in one vmapped simulation (a case whose config is
    invalid raises ``ConfigError`` naming it)."""
    splits = [builder.split(c) for c in cases]
    built = [builder.scenario(host) for host, _ in splits]
    bad = [(label, s) for label, s in zip(labels, built) if isinstance(s, ConfigError)]
    if bad:
        raise ConfigError(f"study case {bad[0][0]}: {bad[0][1]}")
    host_keys = sorted({k for host, _ in splits for k, _ in host})
    stacked = cs.stack(built, host_keys)
    design = {k: np.asarray([float(d[k]) for _, d in splits]) for k in splits[0][1]}
    outcomes = jax.block_until_ready(_simulate_batch(stacked, design))
    return [(label, scenario, jax.tree_util.tree_map(lambda x, i=i: x[i], outcomes))
            for i, (label, scenario) in enumerate(zip(labels, built))]


def baseline_design(scenario: AbstractScenario, design: dict) -> dict:
    """The configured values of the keys of ``design`` (config units): the design an optimisation started from."""
    values = scenario.design_values()
    return {k: values[k] for k in design}


def write_cases(builder: cs.CaseBuilder, cases: dict[str, dict], out: Path) -> None:
    """Simulate the designs ``cases`` (label -> design-key values) in one vmapped call and write each one's
    summary, results, plots and 3-D scene to ``out/<label>/`` (the report shows their scenes side by side);
    a failed case is written as far as it got (:func:`write_outcome`)."""
    for label, scenario, outcome in _simulate_cases(builder, list(cases), list(cases.values())):
        write_summary(out / label, write_outcome(scenario, outcome, out / label))


def run_study(builder: cs.CaseBuilder, spec: StudySpec, out: Path, progress: bool = True) -> dict:
    """All cases in one vmapped simulation; per-case outputs in ``out/<label>/``; a table and ``study.png``."""
    from .report import plot_study, print_study

    labels = spec.labels()
    cases = [{k: v[i] for k, v in spec.cases.items()} for i in range(spec.size)]
    table, failures = {}, []
    with Spinner(f"{builder.scenario(()).name} study", progress) as spin:
        spin.compile_stage(f"the batched simulation of {len(labels)} cases")
        simulated = _simulate_cases(builder, labels, cases)
        spin.stage("writing each case's results, plots and 3-D scene")
        for label, scenario, outcome in simulated:
            table[label] = write_outcome(scenario, outcome, out / label)
            if failed(int(outcome.status)):
                failures.append(f"{label}: {table[label]['reason']}")
                write_summary(out / label, table[label])
    columns = spec.columns or tuple(k for k, v in next(iter(table.values())).items() if isinstance(v, float))[:8]
    print_study(table, columns)
    scenario = simulated[0][1]
    varied = ", ".join(key_label(k, design_parameters(scenario)) for k in spec.cases)
    plot_study(out / "study.png", table, columns, f"{scenario.name} study: {len(labels)} cases of {varied}"
               + (f", {len(failures)} failed" if failures else ""))
    summary = {"study_cases": labels, "cases": table}
    if failures:
        summary["failures"] = failures
    return summary
