"""The summary table: ``summary.json`` keys as human names with their units (from the keys' unit suffixes)."""

from __future__ import annotations

import html

from ...io.results import name_and_unit


def _flat(summary: dict, prefix: str = "") -> list[tuple[str, object]]:
    rows = []
    for key, value in summary.items():
        if isinstance(value, dict) and value and not prefix.count("."):
            rows += _flat(value, f"{prefix}{key}.")
        else:
            rows.append((prefix + key, value))
    return rows


def _cell(value) -> str:
    if isinstance(value, float):
        return f'<td class="num">{value:.6g}</td>'
    if value is None:
        return '<td class="num">—</td>'
    if isinstance(value, (list, tuple)):
        return "<td>" + html.escape(", ".join(f"{v:.4g}" if isinstance(v, float) else str(v) for v in value)) + "</td>"
    if isinstance(value, dict):
        return "<td>" + html.escape(", ".join(f"{k} = {v:.4g}" if isinstance(v, float) else f"{k} = {v}"
                                              for k, v in value.items())) + "</td>"
    return f"<td>{html.escape(str(value))}</td>"


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


def summary_html(summary: dict) -> str:
    """A table of every summary entry; a study's ``cases`` become one column per case."""
    if not summary:
        return "<p>no summary</p>"
    rest = {k: v for k, v in summary.items() if k != "cases"}
    rows = []
    for key, value in _flat(rest):
        name, unit = name_and_unit(key.rsplit(".", 1)[-1])
        prefix = key.rsplit(".", 1)[0] + ": " if "." in key else ""
        rows.append(f"<tr><td>{html.escape(prefix + name)}</td><td>{html.escape(unit)}</td>{_cell(value)}</tr>")
    table = "<table><tr><th>quantity</th><th>unit</th><th>value</th></tr>" + "".join(rows) + "</table>" if rows else ""
    cases = summary.get("cases")
    if isinstance(cases, dict) and all(isinstance(c, dict) for c in cases.values()):
        table += _case_table(cases)
    return table
