"""The ``diffspace`` command: ``run | sweep | optimize | fit | bench`` (SPEC section 4).

A config's scenario is the scenario section it contains (``[motion]``, ``[ejection]``, ``[impact]``, ...).
User errors (bad config, missing file, bad data) print one message per problem and exit with status 2,
without a traceback; solver failures exit with status 3 and name the phase.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

from ..io.packaged import DATA_DIR
from ..io.config import apply_overrides, read_toml, validate
from ..status import ConfigError

SCENARIOS = {
    "motion": "diffspace.scenarios.free_floating",
    "ejection": "diffspace.scenarios.ejection_study",
    "impact": "diffspace.scenarios.impact",
    "snare": "diffspace.scenarios.snare",
    "capture": "diffspace.scenarios.capture",
    "closing": "diffspace.scenarios.snare_closing",
}
CONFIG_DIR = DATA_DIR
DEFAULT_CONFIG = CONFIG_DIR / "ejection_plane.toml"


def _scenario_of(cfg: dict, path: Path):
    present = [name for name in SCENARIOS if name in cfg]
    if len(present) != 1:
        raise ConfigError(
            f"{path}: a config needs exactly one scenario section ({', '.join(SCENARIOS)}); found {present or 'none'}"
        )
    return importlib.import_module(SCENARIOS[present[0]])


def load_scenario(path: Path, overrides: list[str]):
    """Read, override and validate a config; return ``(module, validated config)``."""
    cfg = apply_overrides(read_toml(path), overrides)
    module = _scenario_of(cfg, path)
    return module, validate(cfg, module.schema(), path.parent)


def _config_path(args) -> Path:
    if args.config is not None:
        return Path(args.config)
    if not DEFAULT_CONFIG.is_file():
        raise ConfigError(f"default config {DEFAULT_CONFIG} not found: pass a CONFIG path")
    return DEFAULT_CONFIG


def _dispatch(args) -> int:
    if args.command == "bench":
        from .bench import run_bench

        run_bench(quick=args.quick, out=Path(args.out))
        return 0
    path = _config_path(args)
    module, cfg = load_scenario(path, args.set)
    out = Path(args.out) if args.out else Path("runs") / f"{path.stem}_{args.command}"
    action = getattr(module, args.command if args.command != "run" else "run", None)
    if action is None:
        raise ConfigError(f"{path}: scenario '{module.__name__.rsplit('.', 1)[-1]}' has no '{args.command}' command")
    if args.command == "fit":
        if not args.data:
            raise ConfigError("fit: --data CSV is required")
        action(cfg, Path(args.data), out)
    elif args.command == "run" and args.config is None and hasattr(module, "run_default"):
        module.run_default(cfg, out)
    else:
        action(cfg, out)
    print(f"results written to {out}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="diffspace", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("run", "sweep", "optimize", "fit"):
        p = sub.add_parser(name)
        p.add_argument("config", nargs="?" if name == "run" else None, default=None)
        p.add_argument("--out", default=None, help="output directory (default runs/<config>_<command>)")
        p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a config key")
        if name == "fit":
            p.add_argument("--data", default=None, help="measured data CSV")
    bench = sub.add_parser("bench")
    bench.add_argument("--quick", action="store_true", help="small batches, few repeats")
    bench.add_argument("--out", default="runs/bench")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from ..status import SolverFailure

    try:
        return _dispatch(args)
    except (ConfigError, FileNotFoundError) as err:
        for line in str(err).splitlines():
            print(f"error: {line}", file=sys.stderr)
        return 2
    except SolverFailure as err:
        print(f"solver failure: {err}", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
