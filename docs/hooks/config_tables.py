"""MkDocs hook: config-key tables generated from the scenarios' schemas.

Two markers, each on a line of its own in a page's Markdown, are replaced at build time:

- ``<!-- config-table: <name> -->``: a table of every key of ``scenario_class(<name>).schema()`` (section, key,
  type, unit, default, bounds or choices, help), so a scenario page always lists the keys the installed version
  accepts;
- ``<!-- scenario-table -->``: a table of every registered scenario with the first line of its class docstring
  and a link to its page (``<name>.md`` next to the page holding the marker).

A marker that cannot be rendered (an unknown scenario name, a malformed marker) fails the build with a message
naming the page and the marker.
"""

from __future__ import annotations

import html
import inspect
import math
import re

CONFIG_MARKER = re.compile(r"^ {0,3}<!--\s*config-table:\s*(?P<name>\S+)\s*-->[ \t]*$")
SCENARIO_MARKER = re.compile(r"^ {0,3}<!--\s*scenario-table\s*-->[ \t]*$")
ANY_MARKER = re.compile(r"^ {0,3}<!--\s*(?:config|scenario)-table\b")
FENCE = re.compile(r"^\s*(?P<fence>`{3,}|~{3,})(?P<info>.*)$")

KINDS = {
    "float": "float",
    "int": "integer",
    "str": "string",
    "bool": "boolean",
    "floats": "list of floats",
    "path": "file path",
    "any": "name or list",
}
HEADER = "| Key | Type | Unit | Default | Bounds / choices | Help |\n|---|---|---|---|---|---|"


class MarkerError(ValueError):
    """A documentation marker that cannot be rendered."""


def key_unit(key: str) -> str:
    """The unit a config key's suffix names: ``"spring_stiffness_N_m"`` -> ``"N/m"`` (a stiffness: force per
    length), ``"static_N_m"`` -> ``"N m"`` (a torque); ``""`` when the key has no unit suffix (the unit table,
    ``diffspace.io.units``)."""
    from diffspace.io.units import split_unit

    return split_unit(key)[1]


def _number(x) -> str:
    """The shortest text that reads back as ``x``: ``7850``, ``0.0025``, ``1e-10``, ``2.06e11``."""
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int) or not math.isfinite(x):
        return str(x)
    if x != 0 and (abs(x) >= 1e6 or abs(x) < 1e-3):
        digits = next(p for p in range(17) if float(f"{x:.{p}e}") == x)
        mantissa, exponent = f"{x:.{digits}e}".split("e")
        return f"{mantissa}e{int(exponent)}"
    text = repr(x)
    return text[:-2] if text.endswith(".0") else text


def format_default(value) -> str:
    """A default as TOML would write it (numbers in short form, lists element by element)."""
    if value is None:
        return "none"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(format_default(v) for v in value) + "]"
    if isinstance(value, (bool, int, float)):
        return _number(value)
    return str(value)


def format_bounds(field) -> str:
    """``"0 < x ≤ 0.01"``, ``"≥ 0"``, ``"≤ 180"``, or the allowed choices (bounds hold for every element of a
    list)."""
    if field.choices:
        return ", ".join(f"`{choice}`" for choice in field.choices)
    lower = ("<", field.gt) if field.gt is not None else ("≤", field.min) if field.min is not None else None
    upper = _number(field.max) if field.max is not None else None
    if lower and upper:
        return f"{_number(lower[1])} {lower[0]} x ≤ {upper}"
    if lower:
        return f"{'>' if lower[0] == '<' else '≥'} {_number(lower[1])}"
    return f"≤ {upper}" if upper else ""


def _type(field) -> str:
    kind = KINDS[field.kind]
    return f"{field.length} floats" if field.kind == "floats" and field.length is not None else kind


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell (no HTML, no cell separators, no emphasis)."""
    text = html.escape(text, quote=False).replace("|", "&#124;")
    return re.sub(r"([*_`\\])", r"\\\1", text)


def config_table(name: str) -> str:
    """The Markdown table of every config key of scenario ``name``, section by section in schema order.

    Raises:
        MarkerError: ``name`` is not a registered scenario.
    """
    from diffspace.scenarios import REGISTRY, scenario_class

    if name not in REGISTRY:
        raise MarkerError(f"unknown scenario '{name}' (known: {', '.join(REGISTRY)})")
    schema = scenario_class(name).schema()
    rows = [HEADER]
    for section, fields in schema.sections.items():
        for key, field in fields.items():
            default = "required" if field.required else f"`{format_default(field.default)}`"
            cells = [f"`{section}.{key}`", _type(field), key_unit(key), default, format_bounds(field)]
            rows.append("| " + " | ".join([*cells, _cell(field.help)]) + " |")
    if schema.open_sections:
        rows.append("")
        rows.append("Free-form sections: " + ", ".join(f"`[{s}]`" for s in schema.open_sections) + ".")
    return "\n".join(rows)


def summary_line(cls) -> str:
    """The first line of a class docstring (the scenario's one-line description)."""
    doc = inspect.getdoc(cls)
    if not doc:
        raise MarkerError(f"{cls.__qualname__} has no docstring to describe it")
    return doc.strip().splitlines()[0]


def scenario_table() -> str:
    """The Markdown table of every registered scenario: its name linked to ``<name>.md`` and its one line."""
    from diffspace.scenarios import REGISTRY, scenario_class

    rows = ["| Scenario | Description |", "|---|---|"]
    rows += [f"| [`{name}`]({name}.md) | {summary_line(scenario_class(name))} |" for name in REGISTRY]
    return "\n".join(rows)


def _marker_table(line: str, where: str) -> str | None:
    """The table a marker line stands for; ``None`` for a line that is no marker."""
    if not ANY_MARKER.match(line):
        return None
    config, scenarios = CONFIG_MARKER.match(line), SCENARIO_MARKER.match(line)
    try:
        if config:
            return config_table(config["name"])
        if scenarios:
            return scenario_table()
        raise MarkerError("expected '<!-- config-table: <name> -->' or '<!-- scenario-table -->' on a line of its own")
    except MarkerError as err:
        raise MarkerError(f"{where}: marker '{line.strip()}': {err}") from None


def render_markers(markdown: str, where: str) -> str:
    """``markdown`` with every marker line outside fenced code blocks replaced by its table (a marker shown in a
    code block stays as written); ``MarkerError`` naming ``where`` and the marker."""
    out, fence = [], None
    for line in markdown.split("\n"):
        opening = FENCE.match(line)
        if fence is None and opening:
            fence = opening["fence"]
        elif fence is not None and opening and opening["fence"].startswith(fence[0] * len(fence)) and not opening["info"].strip():
            fence = None
        table = _marker_table(line, where) if fence is None else None
        out.append(line if table is None else table)
    return "\n".join(out)


def on_page_markdown(markdown: str, page, config, files) -> str:
    return render_markers(markdown, page.file.src_uri)
