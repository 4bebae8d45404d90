"""CSV and TOML helpers shared by the commands: numeric CSV columns with clear errors, config -> TOML text."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np

from ..status import ConfigError



def read_csv_columns(path, columns: list[str]) -> dict[str, np.ndarray]:
    """Read numeric ``columns`` (by header name) from a CSV file into float arrays.

    Raises :class:`~diffspace.config.ConfigError` naming the file, row (1 = first data row) and column for a
    missing file, an empty file, missing columns, short rows and non-numeric or non-finite cells.
    """
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"data file not found: {path}")
    with path.open(newline="") as fh:
        rows = [row for row in csv.reader(fh) if any(cell.strip() for cell in row)]
    if not rows:
        raise ConfigError(f"{path}: empty file (expected a header with {', '.join(columns)})")
    header = [h.strip() for h in rows[0]]
    missing = [c for c in columns if c not in header]
    if missing:
        raise ConfigError(f"{path}: missing column(s) {', '.join(missing)} (found: {', '.join(header)})")
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
                problems.append(f"{path}: row {r}, column {c}: not a number: {cell!r}")
                continue
            if not math.isfinite(x):
                problems.append(f"{path}: row {r}, column {c}: not finite: {cell!r}")
            values[c].append(x)
    if problems:
        raise ConfigError("\n".join(problems))
    return {c: np.asarray(v, dtype=float) for c, v in values.items()}


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
    raise TypeError(f"cannot write {type(value).__name__} to TOML")


def dump_toml(cfg: dict, header: str = "") -> str:
    """Serialise a validated config (``section -> key -> scalar | list``) to TOML text (``None`` values skipped);
    floats use ``repr`` so they round-trip exactly. ``header`` lines are written as ``#`` comments."""
    lines = [f"# {line}" for line in header.splitlines()]
    for section, table in cfg.items():
        lines += ["", f"[{section}]"]
        lines += [f"{key} = {_toml_value(v)}" for key, v in table.items() if v is not None]
    return "\n".join(lines).lstrip("\n") + "\n"
