"""CSV and TOML helpers shared by the commands: numeric CSV columns with clear errors, config -> TOML text."""

from __future__ import annotations

import csv
import io
import json
import math
import re
from pathlib import Path

import numpy as np

from ..core.status import ConfigError, capped, shown
from .files import read_text

MAX_PROBLEMS = 20


def _rows(path: Path) -> list[list[str]]:
    """Non-blank CSV rows of a UTF-8 file (a byte-order mark, as Excel writes, is accepted)."""
    reader = csv.reader(io.StringIO(read_text(path, "data file"), newline=""))
    try:
        return [row for row in reader if any(cell.strip() for cell in row)]
    except csv.Error as err:
        raise ConfigError(f"{path}: line {reader.line_num}: not valid CSV ({err})") from None


def read_csv_columns(path, columns: list[str]) -> dict[str, np.ndarray]:
    """Read numeric ``columns`` (by header name) from a CSV file into float arrays.

    Raises :class:`~diffspace.core.status.ConfigError` naming the file, row (1 = first data row) and column for a
    missing, unreadable or non-UTF-8 file, an empty file, missing or repeated columns, short rows and
    non-numeric or non-finite cells (the first few problems, then how many more).
    """
    path = Path(path)
    rows = _rows(path)
    if not rows:
        raise ConfigError(f"{path}: empty file (expected a header with {', '.join(columns)})")
    header = [h.strip() for h in rows[0]]
    missing = [c for c in columns if c not in header]
    if missing:
        found = capped(shown(h, 40) for h in header)
        raise ConfigError(f"{path}: missing column(s) {', '.join(missing)} (found: {found})")
    repeated = [c for c in columns if header.count(c) > 1]
    if repeated:
        raise ConfigError(f"{path}: column(s) {', '.join(repeated)} appear more than once in the header")
    if len(rows) < 2:
        raise ConfigError(f"{path}: no data rows")
    index = {c: header.index(c) for c in columns}
    values = {c: [] for c in columns}
    problems = []
    for r, row in enumerate(rows[1:], start=1):
        for c, i in index.items():
            cell = row[i].strip() if i < len(row) else ""
            try:
                x = float(cell)
            except ValueError:
                problems.append(f"{path}: row {r}, column {c}: not a number: {shown(cell)}")
                continue
            if not math.isfinite(x):
                problems.append(f"{path}: row {r}, column {c}: not finite: {shown(cell)}")
            values[c].append(x)
    if problems:
        raise ConfigError(capped(problems, MAX_PROBLEMS, "\n"))
    return {c: np.asarray(v, dtype=float) for c, v in values.items()}


def _toml_key(key: str) -> str:
    """A bare key where TOML allows one, else a quoted key (``"contact.mu"``: a dot would nest)."""
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key)


def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"cannot write non-finite value {value} to TOML")
        return repr(value)
    if isinstance(value, (str, Path)):
        return json.dumps(str(value))
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):  # an inline table, e.g. [optimize] bounds or [fit] initial
        return "{" + ", ".join(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"cannot write {type(value).__name__} to TOML")


def dump_toml(cfg: dict, header: str = "") -> str:
    """Serialise a validated config (``section -> key -> scalar | list | inline table``, plus top-level scalars such as
    ``scenario``) to TOML text (``None`` values skipped); floats use ``repr`` so they round-trip exactly.
    ``header`` lines are written as ``#`` comments."""
    lines = [f"# {line}" for line in header.splitlines()]
    lines += [f"{key} = {_toml_value(v)}" for key, v in cfg.items() if not isinstance(v, dict) and v is not None]
    for section, table in ((s, t) for s, t in cfg.items() if isinstance(t, dict)):
        lines += ["", f"[{section}]"]
        lines += [f"{key} = {_toml_value(v)}" for key, v in table.items() if v is not None]
    return "\n".join(lines).lstrip("\n") + "\n"
