"""The ``diffspace`` command: ``run | sweep | montecarlo | optimize | fit | bench | view``.

A config selects its scenario (``scenario = "<name>"`` or its scenario section). Bad input prints one line
per problem naming the key or file and exits with status 2, without a traceback; a simulation that fails
exits with status 3 naming the phase; Ctrl-C exits with status 130 saying what was kept.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ..io.packaged import packaged_config
from ..core.status import ConfigError, SolverFailure

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

        run_bench(quick=args.quick, out=Path(args.out))
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


def _distributed_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("several processes sharing the chunks (one --out on a shared filesystem)")
    group.add_argument("--distributed", action="store_true",
                       help="join the job's processes (SLURM, Open MPI, Kubernetes: detected by JAX)")
    group.add_argument("--coordinator", default=None, metavar="HOST:PORT", help="process 0's address")
    group.add_argument("--num-processes", type=int, default=None, metavar="N")
    group.add_argument("--process-id", type=int, default=None, metavar="I", help="0 .. N-1; 0 writes the results")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="diffspace", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("run", "sweep", "montecarlo", "optimize", "fit"):
        p = sub.add_parser(name)
        p.add_argument("config", nargs="?" if name == "run" else None, default=None)
        p.add_argument("--out", default=None, help="output directory (default runs/<config>_<command>)")
        p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a config key")
        p.add_argument("--overwrite", action="store_true", help="replace results of another command or config")
        p.add_argument("--quiet", action="store_true", help="no progress bars")
        p.add_argument("--no-cache", action="store_true", help="do not use the persistent compilation cache")
        if name == "fit":
            p.add_argument("--data", default=None, help="measured data CSV")
        if name in ("sweep", "montecarlo", "optimize"):
            _distributed_flags(p)
    bench = sub.add_parser("bench")
    bench.add_argument("--quick", action="store_true", help="small batches, few repeats")
    bench.add_argument("--out", default="runs/bench")
    view = sub.add_parser("view", help="open DIR/report.html in the default browser (or print its path)")
    view.add_argument("directory", metavar="DIR")
    return parser


def main(argv: list[str] | None = None) -> int:
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
        kept = (f"finished chunks kept in {args.out}.partial; rerun the same command to resume"
                if args.command in ("sweep", "montecarlo") else f"nothing written; previous results in {args.out} kept")
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
