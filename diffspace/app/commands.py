"""The commands behind the CLI: load a config, build its scenario, run the design layer, write the results.

Config loading: read the TOML, apply ``--set`` overrides, pick the scenario (``scenario`` key or selector
section), split off the design sections (``[sweep]``, ``[montecarlo]``, ``[optimize]``, ``[fit]``,
``[study]``), make every path-valued key absolute (so derived configs such as ``fitted.toml`` run from
anywhere; the design keys of ``DESIGN_PATHS`` too), validate against the scenario's schema and build the
scenario.
"""

from __future__ import annotations

import copy
import dataclasses
import sys
from pathlib import Path

from .. import design
from ..io.config import Schema, apply_overrides, read_toml
from ..io.results import print_summary, write_summary
from ..io.tables import dump_toml
from ..scenarios import AbstractScenario, resolve_config, scenario_class, scenario_name
from ..core.status import ConfigError, SolverFailure
from .processes import shared_result_dir
from .resultdir import ResultDir, config_hash


@dataclasses.dataclass
class Loaded:
    name: str
    scenario: AbstractScenario
    raw: dict  # scenario sections (and the scenario key), paths absolute
    design: dict  # design sections
    config: dict  # validated scenario config
    files: list[Path]

    def builder(self) -> design.CaseBuilder:
        keys = {p.key for p in self.scenario.design_space()}
        return design.CaseBuilder(self.raw, Path("."), keys)

    def derived_config(self, values: dict, header: str) -> str:
        """TOML text of this config with ``values`` (config keys) applied: a runnable config."""
        raw = {k: v for k, v in copy.deepcopy(self.raw).items() if k != "scenario"}
        for key, value in values.items():
            design.set_key(raw, key, value, defaults=self.scenario.resolved_config(self.config))
        comments = "".join(f"# {line}\n" for line in header.splitlines())
        return comments + f'scenario = "{self.name}"\n\n' + dump_toml(raw)


def _absolute_paths(raw: dict, schema: Schema, base_dir: Path) -> list[Path]:
    files = []
    for section, fields in schema.sections.items():
        table = raw.get(section)
        if not isinstance(table, dict):
            continue
        for key, spec in fields.items():
            value = table.get(key)
            if spec.kind == "path" and isinstance(value, str):
                path = Path(value) if Path(value).is_absolute() else (base_dir / value).resolve()
                table[key] = str(path)
                files.append(path)
    return files


DESIGN_PATHS = {"montecarlo": ("from_fit",)}  # design keys naming another command's results directory


def _absolute_design_paths(tables: dict, base_dir: Path) -> list[Path]:
    """Make the ``DESIGN_PATHS`` keys absolute (relative to ``base_dir``, the config's folder); returns the
    ``summary.json`` each names, which joins the config's files (hashed with it: a refit is a new campaign)."""
    files = []
    for section, keys in DESIGN_PATHS.items():
        for key in keys:
            value = tables.get(section, {}).get(key)
            if isinstance(value, str) and value:
                directory = Path(value) if Path(value).is_absolute() else (base_dir / value).resolve()
                tables[section][key] = str(directory)
                files.append(directory / "summary.json")
    return files


def load(path: Path, overrides: list[str]) -> Loaded:
    raw = apply_overrides(read_toml(path), overrides)
    name = scenario_name(raw, str(path))
    tables = {}
    for section in design.SECTIONS:
        if section in raw:
            if not isinstance(raw[section], dict):
                raise ConfigError(f"{section}: expected a table")
            tables[section] = raw.pop(section)
    files = _absolute_paths(raw, scenario_class(name).schema(), path.resolve().parent)
    files += _absolute_design_paths(tables, path.resolve().parent)
    cls, cfg = resolve_config(raw, path.resolve().parent, str(path))
    return Loaded(name, cls.from_config(cfg), raw, tables, cfg, files)


def _result_dir(args, loaded: Loaded, extra_files: list[Path] = ()) -> ResultDir:
    digest = config_hash({"scenario": loaded.name, "config": loaded.raw, "design": loaded.design},
                         loaded.files + list(extra_files))
    return ResultDir(Path(args.out), args.command, digest, args.overwrite, loaded.name)


def _processes(args) -> design.Processes:
    """The processes sharing this command (``--distributed`` / ``--coordinator``), or this one alone."""
    joined = getattr(args, "joined", None)
    return design.SOLO if joined is None else design.CoordinatedProcesses(*joined)


def _shared_result_dir(args, loaded: Loaded, processes: design.Processes):
    """The results directory; among several processes, process 0 prepares and commits it."""
    if processes.size == 1:
        return _result_dir(args, loaded)
    return shared_result_dir(lambda: _result_dir(args, loaded), processes)


def write_html_report(work: Path, loaded: Loaded) -> None:
    """``report.html`` in the results being written (every command's last file; see :mod:`diffspace.app.report`)."""
    import time

    from .report import write_report

    start = time.perf_counter()
    write_report(work, config={**loaded.raw, **loaded.design}, robot_files=loaded.files)  # the config as run
    print(f"report written in {time.perf_counter() - start:.1f} s (open it with: diffspace view DIR)", file=sys.stderr)


def command_run(args, loaded: Loaded) -> dict:
    study = "study" in loaded.design
    spec = design.parse_study(loaded.design["study"]) if study else None
    with _result_dir(args, loaded) as work:
        if study:
            summary = design.run_study(loaded.builder(), spec, work, progress=not args.quiet)
        else:
            summary = design.run_single(loaded.scenario, work, progress=not args.quiet)
        write_summary(work, summary)
        write_html_report(work, loaded)
    if summary.get("failures"):
        written = "the other cases are" if study else "the run up to its failure is"
        raise SolverFailure("; ".join(summary["failures"]) + f" ({written} in {args.out})")
    return summary


def command_sweep(args, loaded: Loaded) -> dict:
    if "sweep" not in loaded.design:
        raise ConfigError(f"{args.config}: no [sweep] table (axes over config keys) in this config")
    spec = design.parse_sweep(loaded.design["sweep"])
    builder = loaded.builder()
    for axis in spec.axes:  # every axis must be a design variable or an existing config key
        if axis.key not in builder.design_keys:
            try:
                design.get_key(loaded.raw, axis.key)
            except (KeyError, IndexError, TypeError):
                raise ConfigError(f"sweep.axes.{axis.key}: not a design variable of '{loaded.name}' nor a key "
                                  "of this config") from None
    n_outputs = len(spec.outputs) or len(loaded.scenario.metrics_names())
    design.check_disk(spec, Path(args.out), n_outputs)
    processes = _processes(args)
    with _shared_result_dir(args, loaded, processes) as work:
        summary = design.run_sweep(builder, spec, work, progress=not args.quiet, processes=processes)
        if summary is None:  # not the lead: its chunks are done
            return None
        write_summary(work, summary)
        write_html_report(work, loaded)
    print_summary(summary, f"{loaded.name} sweep ({spec.n_cases} cases)")
    return summary


def command_montecarlo(args, loaded: Loaded) -> dict | None:
    if "montecarlo" not in loaded.design:
        raise ConfigError(f"{args.config}: no [montecarlo] table (dispersed design keys) in this config")
    builder = loaded.builder()
    spec = design.prepare_montecarlo(design.parse_montecarlo(loaded.design["montecarlo"]), loaded.scenario, builder)
    design.check_disk(spec, Path(args.out), len(spec.outputs))
    processes = _processes(args)
    with _shared_result_dir(args, loaded, processes) as work:
        summary = design.run_montecarlo(builder, spec, work, progress=not args.quiet, processes=processes)
        if summary is None:
            return None
        write_summary(work, summary)
        write_html_report(work, loaded)
    design.print_montecarlo(summary, f"{loaded.name} Monte-Carlo ({spec.n_cases} runs)")
    return summary


def command_optimize(args, loaded: Loaded) -> dict:
    if "optimize" not in loaded.design:
        raise ConfigError(f"{args.config}: no [optimize] table in this config")
    table, builder = loaded.design["optimize"], loaded.builder()
    dispersions = None
    if "uncertainty" in table and "montecarlo" in loaded.design:  # optimization under uncertainty
        dispersions = design.prepare_montecarlo(design.parse_montecarlo(loaded.design["montecarlo"]),
                                                loaded.scenario, builder)
    problem = design.parse_problem(loaded.scenario, table, dispersions)
    processes = _processes(args)
    with _shared_result_dir(args, loaded, processes) as work:
        summary, optimum = design.run_optimize(builder, loaded.scenario, problem, work,
                                               progress=not args.quiet, processes=processes)
        if summary is None:  # not the lead: its share of the sweep is done
            return None
        (work / "optimum.toml").write_text(loaded.derived_config(
            optimum, f"optimum found by diffspace optimize {args.config}; run it with diffspace run"))
        write_summary(work, summary)
        write_html_report(work, loaded)
    print_summary(summary, f"{loaded.name} optimisation")
    return summary


def command_fit(args, loaded: Loaded) -> dict:
    from .fit_report import write_fit

    if "fit" not in loaded.design:
        raise ConfigError(f"{args.config}: no [fit] table in this config")
    if not args.data:
        raise ConfigError("fit: --data CSV is required")
    data_path = Path(args.data)
    params, initial, options = design.parse_fit(loaded.scenario, loaded.design["fit"], loaded.raw)
    data = loaded.scenario.read_data(data_path)
    with _result_dir(args, loaded, [data_path]) as work:
        result, predicted = design.run_fit(loaded.scenario, data, params, initial, options,
                                           progress=not args.quiet)
        summary = write_fit(work, loaded, data_path, data, result, predicted)
        write_html_report(work, loaded)
    if not result.converged:
        print(f"warning: the fit did not converge: {result.message}", file=sys.stderr)
    print_summary(summary, f"{loaded.name} identification")
    return summary


COMMANDS = {"run": command_run, "sweep": command_sweep, "optimize": command_optimize, "fit": command_fit,
            "montecarlo": command_montecarlo}
