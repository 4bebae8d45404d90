"""Scenario configs: TOML loading, ``--set`` overrides and schema validation with one line per problem.

A schema maps ``section -> key -> Field``. Validation checks every key against it and collects all
problems (unknown key, wrong type, out-of-range value, missing file) into one :class:`ConfigError`
whose message has one line per problem, each naming the dotted key (at most :data:`MAX_PROBLEMS` lines,
then "and N more"; values are quoted cut short).

Configs are UTF-8 TOML (a byte-order mark is accepted). Integers must fit in 64 bits, as the TOML
standard requires (Python's reader accepts any size, which would overflow later when converted).
"""

from __future__ import annotations

import math
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..core.status import ConfigError, capped, shown
from .files import existing_file, read_text

MAX_PROBLEMS = 20
INT64 = 2**63


@dataclass(frozen=True)
class Field:
    """One config key. ``kind``: "float", "int", "str", "bool", "floats" (list of numbers), "path", "any"."""

    kind: str
    default: Any = None
    required: bool = False
    min: float | None = None  # inclusive
    gt: float | None = None  # exclusive lower bound
    max: float | None = None
    choices: tuple = ()
    length: int | None = None
    check: Callable[[Any], str | None] | None = None  # returns an error text or None
    help: str = ""


@dataclass
class Schema:
    sections: dict[str, dict[str, Field]] = field(default_factory=dict)
    open_sections: tuple[str, ...] = ()  # sections whose keys are free-form (e.g. sweep grids)


def parse_value(text: str) -> Any:
    """A ``--set`` value in TOML syntax (numbers, booleans, arrays, quoted strings); bare words are strings."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text
    except ValueError:  # an integer literal beyond Python's 4300-digit conversion limit
        raise ConfigError(f"{shown(text)}: integer literal out of range (integers must fit in 64 bits)") from None


def _assignment(item: str) -> tuple[str, str]:
    """``key=value`` split at the first ``=`` outside a quoted key segment."""
    quote = None
    for i, char in enumerate(item):
        if quote:
            quote = None if char == quote else quote
        elif char in "\"'":
            quote = char
        elif char == "=":
            return item[:i], item[i + 1:]
    raise ConfigError(f"--set {shown(item, bare=True)}: expected key=value")


def key_segments(key: str) -> list[str]:
    """The segments of a dotted TOML key, quoted ones kept whole: ``a."b.c".d`` -> ``["a", "b.c", "d"]``."""
    try:
        node = tomllib.loads(f"{key} = 0")
    except tomllib.TOMLDecodeError:
        if "'" in key or '"' in key:
            raise ConfigError(f"--set {shown(key, bare=True)}: not a valid TOML key (quote a segment that has dots: "
                              'a."b.c".d)') from None
        return key.strip().split(".")  # e.g. an indexed name: the schema names what is wrong with it
    parts = []
    while isinstance(node, dict):
        ((name, node),) = node.items()
        parts.append(name)
    return parts


def apply_overrides(cfg: dict, overrides: list[str]) -> dict:
    """Apply ``a.b=value`` overrides in place and return ``cfg`` (keys as in TOML: ``a."b.c".d=value`` sets
    ``cfg["a"]["b.c"]["d"]``)."""
    for item in overrides or []:
        key, value = _assignment(item)
        parts = key_segments(key)
        node = cfg
        for part in parts[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ConfigError(f"--set {shown(key, bare=True)}: '{shown(part, bare=True)}' is not a table")
        try:
            node[parts[-1]] = parse_value(value.strip())
        except ConfigError as err:
            raise ConfigError(f"--set {shown(key, bare=True)}: {err}") from None
        problems = _oversized_integers(node[parts[-1]], f"--set {shown(key, bare=True)}")
        if problems:
            raise ConfigError(problems[0])
    return cfg


def _oversized_integers(value: Any, key: str) -> list[str]:
    """One problem per integer (at any depth) outside the signed 64-bit range TOML allows."""
    if isinstance(value, dict):
        return [p for name, item in value.items() for p in _oversized_integers(item, f"{key}.{name}" if key else name)]
    if isinstance(value, list):
        return [p for k, item in enumerate(value) for p in _oversized_integers(item, f"{key}[{k}]")]
    if isinstance(value, int) and not isinstance(value, bool) and not -INT64 <= value < INT64:
        return [
            f"{key}: integer {shown(value)} is out of range (TOML integers are 64-bit; write 1e30 for a large number)"
        ]
    return []


def read_toml(path: str | Path) -> dict:
    """A config file as a dict; one-line ``ConfigError`` for a missing, unreadable, non-UTF-8 or invalid file."""
    text = read_text(path, "config file")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{path}: invalid TOML ({err})") from None
    except ValueError:  # an integer literal beyond Python's 4300-digit conversion limit
        raise ConfigError(f"{path}: invalid TOML (a number literal is too long)") from None


def _check(key: str, spec: Field, value: Any, base_dir: Path) -> tuple[Any, str | None]:
    kind = spec.kind
    if kind == "any":
        return value, None
    if kind == "bool":
        return (value, None) if isinstance(value, bool) else (value, f"{key}: expected true/false, got {shown(value)}")
    if kind == "str":
        if not isinstance(value, str):
            return value, f"{key}: expected a string, got {shown(value)}"
        if spec.choices and value not in spec.choices:
            return value, f"{key}: must be one of {', '.join(map(str, spec.choices))}; got {shown(value)}"
        return value, None
    if kind == "path":
        if not isinstance(value, str):
            return value, f"{key}: expected a file path string, got {shown(value)}"
        path = Path(value)
        path = path if path.is_absolute() else base_dir / path
        try:
            return existing_file(path, "file"), None
        except ConfigError as err:
            return path, f"{key}: {err}"
    if kind in ("float", "int"):
        if not _is_number(value):
            return value, f"{key}: expected a number, got {shown(value)}"
        if kind == "int" and not float(value).is_integer():
            return value, f"{key}: expected an integer, got {shown(value)}"
        value = int(value) if kind == "int" else float(value)
        return value, _range_error(key, spec, [value])
    if kind == "floats":
        if not isinstance(value, list) or not all(_is_number(x) for x in value):
            return value, f"{key}: expected a list of numbers, got {shown(value)}"
        if spec.length is not None and len(value) != spec.length:
            return value, f"{key}: expected {spec.length} numbers, got {len(value)}"
        value = [float(x) for x in value]
        return value, _range_error(key, spec, value)
    raise AssertionError(f"unknown field kind {kind}")


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _range_error(key: str, spec: Field, values: list[float]) -> str | None:
    for x in values:
        if not math.isfinite(x):
            return f"{key}: must be finite, got {x}"
        if spec.gt is not None and not x > spec.gt:
            return f"{key}: must be > {spec.gt:g}, got {x:g}"
        if spec.min is not None and x < spec.min:
            return f"{key}: must be >= {spec.min:g}, got {x:g}"
        if spec.max is not None and x > spec.max:
            return f"{key}: must be <= {spec.max:g}, got {x:g}"
    return None


def validate(cfg: dict, schema: Schema, base_dir: Path) -> dict:
    """Return a copy of ``cfg`` with defaults filled and paths resolved; raise ``ConfigError`` listing all problems."""
    problems = _oversized_integers(cfg, "")
    if problems:  # checked first: every later check may convert numbers
        raise ConfigError(capped(problems, MAX_PROBLEMS, "\n"))
    out: dict = {}
    for section, value in cfg.items():
        if section not in schema.sections and section not in schema.open_sections:
            problems.append(f"{shown(section, bare=True)}: unknown section (known: {', '.join(schema.sections)})")
        elif not isinstance(value, dict):
            problems.append(f"{section}: expected a table")
    for section, fields in schema.sections.items():
        given = cfg.get(section, {}) if isinstance(cfg.get(section, {}), dict) else {}
        result = {}
        for key in given:
            if key not in fields:
                problems.append(f"{section}.{shown(key, bare=True)}: unknown key (known: {', '.join(fields)})")
        for key, spec in fields.items():
            dotted = f"{section}.{key}"
            if key not in given:
                if spec.required:
                    problems.append(f"{dotted}: required key is missing")
                result[key] = spec.default
                continue
            value, error = _check(dotted, spec, given[key], base_dir)
            if error is None and spec.check is not None:
                error = spec.check(value)
                error = f"{dotted}: {error}" if error else None
            if error:
                problems.append(error)
            result[key] = value
        out[section] = result
    for section in schema.open_sections:
        if isinstance(cfg.get(section), dict):
            out[section] = dict(cfg[section])
    if problems:
        raise ConfigError(capped(problems, MAX_PROBLEMS, "\n"))
    return out


_INDEXED = re.compile(r"^(?P<key>[A-Za-z0-9_.]+?)\[(?P<index>\d+)\]$")


def split_indexed(key: str) -> tuple[str, int | None]:
    """``"a.b[2]"`` -> ``("a.b", 2)``; ``"a.b"`` -> ``("a.b", None)``: the one parser of indexed config keys."""
    match = _INDEXED.match(key)
    return (match["key"], int(match["index"])) if match else (key, None)


def set_key(raw: dict, key: str, value, defaults: dict | None = None) -> None:
    """Set a dotted config key in a raw config, in place; ``a.b[2]`` sets element 2 of the list ``a.b``
    (a list the raw config leaves at its default or names is first copied from ``defaults``, the validated
    config with names resolved by the scenario's ``resolved_config``)."""
    dotted, index = split_indexed(key)
    parts = dotted.split(".")
    node = raw
    for part in parts[:-1]:
        node = node.setdefault(part, {})
        if not isinstance(node, dict):
            raise ConfigError(f"{key}: '{part}' is not a table")
    if index is None:
        node[parts[-1]] = value
        return
    current = node.get(parts[-1])
    if not isinstance(current, list) and defaults is not None:  # a default or a name (e.g. a named attitude)
        resolved = get_key(defaults, dotted)
        if isinstance(resolved, list):
            current = node[parts[-1]] = list(resolved)
    if not isinstance(current, list):
        raise ConfigError(f"{key}: the config value of {dotted} is not a list (got {current!r})")
    if index >= len(current):
        raise ConfigError(f"{key}: index {index} out of range (the list has {len(current)} elements)")
    current[index] = value


def get_key(raw: dict, key: str):
    """Value of a dotted (optionally indexed) key in a raw config; ``KeyError`` if absent."""
    dotted, index = split_indexed(key)
    node = raw
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            raise KeyError(key)
        node = node[part]
    return node if index is None else node[index]
