"""The ``diffspace`` command line: run, sweep, montecarlo, optimize, fit, bench and view.

The help texts below are what ``diffspace --help`` and ``diffspace <command> --help`` print: plain sentences,
since users read them in a terminal.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ..io.packaged import packaged_config
from ..core.status import ConfigError, SolverFailure
from .processes import DEFAULT_TIMEOUT_S
from .version import package_version
from .xla_flags import set_command_xla_flags

DEFAULT_CONFIG = packaged_config("ejection_study.toml")


def _config_path(args) -> Path:
    if args.config is not None:
        return Path(args.config)
    if not DEFAULT_CONFIG.is_file():
        raise ConfigError(f"default config {DEFAULT_CONFIG} not found: pass a CONFIG path")
    return DEFAULT_CONFIG


def _dispatch(args) -> int:
    if args.command == "view":
        from .report.open import view

        return view(Path(args.directory))
    if args.command == "bench":  # measures compile times: never from the cache
        from .bench import run_bench

        run_bench(quick=args.quick, out=Path(args.out), gpu=args.gpu)
        return 0
    from .processes import joined

    with joined(args) as args.joined:  # before JAX starts its backend (a process's own devices)
        return _command(args)


def _command(args) -> int:
    from .cache import enable_cache
    from .commands import COMMANDS, load

    enable_cache(disabled=args.no_cache)
    path = _config_path(args)
    args.out = args.out or str(Path("runs") / f"{path.stem}_{args.command}")
    loaded = load(path, args.set)
    summary = COMMANDS[args.command](args, loaded)
    if summary is None:  # one of several processes, not the lead
        print(f"this process's chunks are done; process 0 writes the results to {args.out}")
    else:
        print(f"results written to {args.out}")
    return 0


DESCRIPTION = """\
Differentiable simulation of space mechanisms: run a scenario, sweep it, run a Monte-Carlo campaign,
optimise a design or fit parameters to measured data. Every command but bench and view reads a TOML
config that names its scenario (scenario = "<name>", or the scenario's own section).
"""

EPILOG = """\
exit status:
  0    success
  1    internal error (a diffspace defect; DIFFSPACE_TRACEBACK=1 prints the traceback)
  2    bad input: one line per problem, naming the config key or file
  3    a simulation failed (the message names the phase)
  130  interrupted (Ctrl-C); the message says what was kept

Run "diffspace <command> --help" for the options of one command.
"""

COMMAND_HELP = {
    "run": ("simulate one config (or the cases of its [study] table)",
            "Simulate the scenario of CONFIG once, or every case of its [study] table in one batched run, and\n"
            "write summary.json, time series, plots and report.html to --out. Without CONFIG, runs the\n"
            "five-attitude ejection study shipped with diffspace."),
    "sweep": ("evaluate the grid or samples of the config's [sweep] table",
              "Evaluate the scenario over the axes of the config's [sweep] table (a grid, random or Latin\n"
              "hypercube samples), in chunks of batched simulations. Finished chunks are kept: rerunning the\n"
              "same command after an interruption resumes where it stopped."),
    "montecarlo": ("propagate the dispersions of the config's [montecarlo] table",
                   "Draw the dispersed config keys of the [montecarlo] table, simulate every draw in batched\n"
                   "chunks and write the statistics of each output (mean, standard deviation, extremes,\n"
                   "percentiles, counts of failed runs), local sensitivities at the means and, on request\n"
                   "(sensitivity = [\"local\", \"sobol\"]), Sobol indices by Saltelli sampling. Finished chunks are\n"
                   "kept, as for sweep."),
    "optimize": ("optimise design variables ([optimize] table)",
                 "Optimise the design variables of the [optimize] table: a sweep of the box, then gradient\n"
                 "steps (Adam) through the simulation from several starts, then a polish onto active\n"
                 "constraints. The config's own design is the first start and the baseline of the report;\n"
                 "optimum.toml in --out is a runnable config of the optimum."),
    "fit": ("fit parameters to measured data ([fit] table, --data CSV)",
            "Fit the parameters of the [fit] table to the measured data in --data (Levenberg-Marquardt with\n"
            "gradients through the simulation). Writes fit_report.json (values, standard errors,\n"
            "correlations, residuals) and fitted.toml, a runnable config with the fitted values."),
    "bench": ("measure speed against Pinocchio and MuJoCo on this machine",
              "Measure speed on this machine: the rigid-body dynamics kernels (batched) against Pinocchio,\n"
              "the ejection simulation (one at a time and batched) against MuJoCo at the same accuracy,\n"
              "and compile times. A part whose reference engine is not installed is skipped with a message.\n"
              "Writes the tables and plots to --out; never uses the compilation cache."),
    "view": ("open DIR/report.html in the default browser (or print its path)",
             "Open the report.html of a results directory in the default web browser; where no browser is\n"
             "available, print the report's path."),
}


def _add_command(sub, name: str) -> argparse.ArgumentParser:
    summary, description = COMMAND_HELP[name]
    return sub.add_parser(name, help=summary, description=description,
                          formatter_class=argparse.RawDescriptionHelpFormatter)


def _distributed_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("several processes sharing the chunks (one --out on a shared filesystem)")
    group.add_argument("--distributed", action="store_true",
                       help="join the job's processes (SLURM, Open MPI, Kubernetes: detected by JAX)")
    group.add_argument("--coordinator", default=None, metavar="HOST:PORT", help="process 0's address")
    group.add_argument("--num-processes", type=int, default=None, metavar="N", help="number of processes")
    group.add_argument("--process-id", type=int, default=None, metavar="I", help="0 .. N-1; 0 writes the results")
    group.add_argument("--coordinator-timeout", type=float, default=DEFAULT_TIMEOUT_S, metavar="SECONDS",
                       help=f"how long the processes wait for each other to start (default {DEFAULT_TIMEOUT_S:g})")


def _config_command(sub, name: str) -> None:
    p = _add_command(sub, name)
    p.add_argument("config", nargs="?" if name == "run" else None, default=None, metavar="CONFIG",
                   help="TOML config file" + (" (default: the shipped ejection study)" if name == "run" else ""))
    p.add_argument("--out", default=None, metavar="DIR", help="output directory (default runs/<config>_<command>)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a config key, e.g. --set simulation.t_final_s=2.0 (repeatable)")
    p.add_argument("--overwrite", action="store_true", help="replace results of another command or config in --out")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.add_argument("--no-cache", action="store_true", help="do not use the persistent compilation cache")
    if name == "fit":
        p.add_argument("--data", default=None, metavar="CSV", help="measured data CSV (required)")
    if name in ("sweep", "montecarlo", "optimize"):
        _distributed_flags(p)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="diffspace", description=DESCRIPTION, epilog=EPILOG,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"diffspace {package_version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in ("run", "sweep", "montecarlo", "optimize", "fit"):
        _config_command(sub, name)
    bench = _add_command(sub, "bench")
    bench.add_argument("--quick", action="store_true", help="small batches, few repeats")
    bench.add_argument("--gpu", action="store_true",
                       help="throughput against batch size on the default JAX device (a GPU where installed): "
                            "batched ejections, gradients, forward dynamics, a Monte-Carlo campaign, MuJoCo's "
                            "multi-threaded CPU rate; with --quick, small batches (runs on a CPU)")
    bench.add_argument("--out", default="runs/bench", metavar="DIR", help="output directory (default runs/bench)")
    view = _add_command(sub, "view")
    view.add_argument("directory", metavar="DIR", help="a results directory written by diffspace")
    return parser


def main(argv: list[str] | None = None) -> int:
    set_command_xla_flags()  # this process's own XLA settings, before JAX starts its backend
    args = build_parser().parse_args(argv)
    try:
        return _dispatch(args)
    except ConfigError as err:
        for line in str(err).splitlines():
            print(f"error: {line}", file=sys.stderr)
        return 2
    except SolverFailure as err:
        print(f"solver failure: {err}", file=sys.stderr)
        return 3
    except KeyboardInterrupt:
        kept = {"sweep": "finished chunks", "montecarlo": "finished chunks", "optimize": "finished stages"}.get(args.command)
        kept = (f"{kept} kept in {args.out}.partial; rerun the same command to resume" if kept
                else f"nothing written; previous results in {args.out} kept")
        print(f"interrupted: {kept}", file=sys.stderr)
        return 130
    except Exception as err:  # a defect of diffspace, not of the input: one line, the traceback on request
        if os.environ.get("DIFFSPACE_TRACEBACK") == "1":
            raise
        print(f"internal error: {type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''} "
              "(a diffspace defect: please report it; DIFFSPACE_TRACEBACK=1 shows the traceback)", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
