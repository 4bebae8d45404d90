"""Scenarios: one package per simulated system, each implementing `base.AbstractScenario`.

A config selects its scenario by a top-level ``scenario = "<name>"`` key or, without it, by containing the
scenario's *selector* section (``[ejection]``, ``[impact]``, ...). Scenario modules are imported lazily, so
loading one config does not import (or compile) the others.
"""

from __future__ import annotations

import copy
import importlib
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..io.config import apply_overrides, read_toml, validate
from ..core.status import ConfigError
from .base import AbstractOutcome, AbstractParams, AbstractScenario, FitData, Parameter
from .declare import Declaration, declared
from .declare import from_config as params_from_config
from .robot_config import simulation_fields, solver_settings

# read by the design commands, not by the scenario
COMMAND_SECTIONS = ("sweep", "montecarlo", "optimize", "fit", "study")

# name -> (selector section or None, "module:Class")
REGISTRY: dict[str, tuple[str | None, str]] = {
    "ejection": ("ejection", "diffspace.scenarios.ejection:Ejection"),
    "free_floating": ("motion", "diffspace.scenarios.free_floating:FreeFloating"),
    "impact": ("impact", "diffspace.scenarios.impact:Impact"),
    "capture": ("capture", "diffspace.scenarios.capture:Capture"),
    "snare": ("snare", "diffspace.scenarios.snare:Snare"),
    "snare_closing": ("closing", "diffspace.scenarios.snare_closing:SnareClosing"),
    "deployment": ("mast", "diffspace.scenarios.deployment:Deployment"),
    "unilateral": ("unilateral", "diffspace.scenarios.unilateral:Unilateral"),
    "flexible_arm": (None, "diffspace.scenarios.flexible_arm:FlexibleArm"),
    "capture_snare": (None, "diffspace.scenarios.capture_snare:CaptureSnare"),
}


def scenario_class(name: str) -> type[AbstractScenario]:
    """The scenario class registered under ``name``."""
    if name not in REGISTRY:
        raise ConfigError(f"scenario: unknown scenario '{name}' (known: {', '.join(REGISTRY)})")
    module, cls = REGISTRY[name][1].split(":")
    return getattr(importlib.import_module(module), cls)


def scenario_name(cfg: dict, where: str = "config") -> str:
    """The scenario a raw config selects: its ``scenario`` key, or its one selector section."""
    if "scenario" in cfg:
        name = cfg["scenario"]
        if not isinstance(name, str) or name not in REGISTRY:
            raise ConfigError(f"{where}: scenario: expected one of {', '.join(REGISTRY)}; got {name!r}")
        return name
    found = [name for name, (section, _) in REGISTRY.items() if section is not None and section in cfg]
    if len(found) != 1:
        selectors = ", ".join(f"[{s}]" for s, _ in REGISTRY.values() if s)
        raise ConfigError(
            f"{where}: set scenario = \"<name>\" or give exactly one scenario section ({selectors}); "
            f"found {', '.join(found) or 'none'}"
        )
    return found[0]


def resolve_config(raw: dict, base_dir: Path, where: str = "config") -> tuple[type[AbstractScenario], dict]:
    """The scenario class a raw config selects and the config validated against its schema (defaults
    filled, paths resolved against ``base_dir``); the command sections are left to the commands."""
    cls = scenario_class(scenario_name(raw, where))
    body = {key: value for key, value in raw.items() if key != "scenario" and key not in COMMAND_SECTIONS}
    return cls, validate(body, cls.schema(), base_dir)


def load_scenario(config: str | Path | Mapping, overrides: Sequence[str] = ()) -> AbstractScenario:
    """Build the scenario a config describes.

    Args:
        config: Path of a TOML config file, or a config already in memory (a dict with the same tables as
            the file, e.g. ``{"robot": {...}, "motion": {...}}``). Relative paths inside a file resolve
            against the file's folder; inside a dict, against the current directory. A dict is copied, never
            modified.
        overrides: ``--set``-style ``"section.key=value"`` strings (values in TOML syntax), applied before
            validation.

    Returns:
        The scenario (an `AbstractScenario`), its ``params`` holding the config's values in SI units.

    Raises:
        ConfigError: A missing or invalid file, an unknown scenario, section or key, a wrong type or an
            out-of-range value (one line per problem). Design tables (``[sweep]``, ``[optimize]``, ...) are
            ignored.
    """
    if isinstance(config, Mapping):
        raw, base_dir, where = copy.deepcopy(dict(config)), Path.cwd(), "config"
    else:
        path = Path(config)
        raw, base_dir, where = read_toml(path), path.parent, str(path)
    raw = {k: v for k, v in apply_overrides(raw, list(overrides)).items() if k not in COMMAND_SECTIONS}
    cls, cfg = resolve_config(raw, base_dir, where)
    return cls.from_config(cfg)


__all__ = [
    "COMMAND_SECTIONS",
    "REGISTRY",
    "AbstractOutcome",
    "AbstractParams",
    "AbstractScenario",
    "Declaration",
    "FitData",
    "Parameter",
    "declared",
    "load_scenario",
    "params_from_config",
    "resolve_config",
    "scenario_class",
    "scenario_name",
    "simulation_fields",
    "solver_settings",
]
