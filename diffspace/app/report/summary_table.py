"""The summary table: ``summary.json`` keys as human names with their units (the unit table, ``diffspace.io.units``,
reading the keys' unit suffixes)."""

from __future__ import annotations

import html

from ...io.results import name_and_unit

UNITLESS_PREFIXES = ("sobol_", "outcome_")
UNITLESS_SUFFIXES = ("_samples", "_counts", "_by_process", "_runs")


def _flat(summary: dict, prefix: str = "") -> list[tuple[str, object]]:
    rows = []
    for key, value in summary.items():
        if isinstance(value, dict) and value and not prefix.count("."):
            rows += _flat(value, f"{prefix}{key}.")
        else:
            rows.append((prefix + key, value))
    return rows


def _text(value) -> str:
    """A value as table text: numbers to 4 significant digits at every depth (an interval inside a dict too)."""
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, dict) for v in value):
        return "; ".join(f"({_text(v)})" for v in value)  # records: one group each
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_text(v) for v in value) + "]"
    if isinstance(value, dict):
        return ", ".join(f"{k} = {_text(v)}" for k, v in value.items()) or "—"
    return "—" if value is None else str(value)


def _cell(value) -> str:
    if isinstance(value, float):
        return f'<td class="num">{value:.6g}</td>'
    if value is None:
        return '<td class="num">—</td>'
    return f"<td>{html.escape(_text(value))}</td>"


def _unitless(key: str) -> bool:
    """Entries of families whose values are indices, probabilities or counts although each is named by a
    metric with a unit (``sobol_first.separation_velocity_m_s`` is a Sobol index, not a velocity)."""
    family = key.split(".", 1)[0]
    return family.startswith(UNITLESS_PREFIXES) or family.endswith(UNITLESS_SUFFIXES)


def _case_table(cases: dict) -> str:
    labels = list(cases)
    keys = list(dict.fromkeys(k for case in cases.values() for k in case))
    head = "<tr><th>quantity</th><th>unit</th>" + "".join(f"<th>{html.escape(c)}</th>" for c in labels) + "</tr>"
    rows = []
    for key in keys:
        name, unit = name_and_unit(key)
        rows.append(f"<tr><td>{html.escape(name)}</td><td>{html.escape(unit)}</td>"
                    + "".join(_cell(cases[c].get(key)) for c in labels) + "</tr>")
    return f"<table>{head}{''.join(rows)}</table>"


def _name(key: str) -> tuple[str, str]:
    """Row name and unit of a flattened key: ``"max_holding_torque_N_m.joint 1"`` -> ``("max holding torque:
    joint 1", "N m")`` (the family's unit where the entry has none), ``"sobol_first.separation_velocity_m_s"``
    -> ``("sobol first: separation velocity", "")``."""
    if "." not in key:
        return name_and_unit(key)
    family, entry = key.rsplit(".", 1)
    name, unit = name_and_unit(entry)
    family_name, family_unit = name_and_unit(family)
    if _unitless(key):
        return f"{family_name}: {name}", ""
    return f"{family_name}: {name}", unit or family_unit


def summary_html(summary: dict) -> str:
    """A table of every summary entry; a study's ``cases`` become one column per case."""
    if not summary:
        return "<p>no summary</p>"
    rest = {k: v for k, v in summary.items() if k != "cases"}
    rows = []
    for key, value in _flat(rest):
        name, unit = _name(key)
        rows.append(f"<tr><td>{html.escape(name)}</td><td>{html.escape(unit)}</td>{_cell(value)}</tr>")
    table = "<table><tr><th>quantity</th><th>unit</th><th>value</th></tr>" + "".join(rows) + "</table>" if rows else ""
    cases = summary.get("cases")
    if isinstance(cases, dict) and all(isinstance(c, dict) for c in cases.values()):
        table += _case_table(cases)
    return table
