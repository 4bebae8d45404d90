"""A run's plots (``<name>.plot.json``, written with its PNGs by :func:`diffspace.io.results.plot_figure` and
:func:`~diffspace.io.results.plot_parallel`) as interactive Plotly figures: stacked panels (sharing x, or each
with its own x), lines, points, bars, error bars, failed cases as red crosses, limits as dashed lines, events as
vertical markers, named x ticks, discrete-state panels with named ticks; parallel coordinates of sweeps."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy as np

from ...io.results import LONG_LABEL, TITLE_WIDTH, event_labels, parallel_axis, series_colour

LIMIT_COLOR = "crimson"
VIRIDIS = ("#440154", "#3b528b", "#21918c", "#5ec962", "#fde725")


def _trace(series: dict, color: str, row: int, legend: str) -> dict:
    axes = {"xaxis": "x" if row == 1 else f"x{row}", "yaxis": "y" if row == 1 else f"y{row}"}
    base = {"x": series["x"], "y": series["y"], "name": series["label"], "legendgroup": legend, **axes}
    style = series["style"]
    if style == "bar":
        # grouped within its own panel: bars of panels with matched x axes would otherwise share the slots
        trace = {"type": "bar", **base, "marker": {"color": color}, "offsetgroup": series["label"],
                 "alignmentgroup": legend}
    elif style == "failed":
        return {"type": "scatter", "mode": "markers", **base,
                "marker": {"color": LIMIT_COLOR, "symbol": "x", "size": 10, "line": {"width": 2}}}
    else:
        trace = {"type": "scatter", **base, "line": {"color": color, "shape": "hv" if style == "step" else "linear"},
                 "marker": {"color": color, "size": 7}, "mode": "markers" if style == "points" else "lines"}
    for key, axis in (("error", "error_y"), ("xerror", "error_x")):
        if series.get(key) is not None:
            trace[axis] = {"type": "data", "array": series[key], "visible": True, "color": color}
    return trace


def _axes(spec: dict, panel: dict, row: int, n: int, domain: list[float]) -> tuple[dict, dict]:
    suffix = "" if row == 1 else str(row)
    shared = spec.get("sharex", True)
    long = len(panel["ylabel"]) > LONG_LABEL  # drawn as the panel's title (plotly_figure)
    yaxis = {"domain": domain, "title": {"text": "" if long else panel["ylabel"]}, "anchor": f"x{suffix}"}
    if panel.get("ylim"):
        yaxis["range"] = panel["ylim"]
    if panel.get("categories"):
        yaxis.update(tickmode="array", tickvals=[float(k) for k in panel["categories"]],
                     ticktext=list(panel["categories"].values()))
    named = bool(spec.get("xticks"))  # named cases: every panel names them
    xaxis = {"anchor": f"y{suffix}", "matches": "x" if row > 1 and shared else None,
             "showticklabels": row == n or not shared or named, "range": spec.get("xlim")}
    if row == n or not shared:
        xaxis["title"] = {"text": (panel.get("xlabel") if not shared else None) or spec["xlabel"]}
    if named:
        xaxis.update(tickmode="array", tickvals=[t for t, _ in spec["xticks"]],
                     ticktext=[label for _, label in spec["xticks"]])
    return yaxis, {k: v for k, v in xaxis.items() if v is not None}


def _limit(layout: dict, suffix: str, value: float, label: str) -> None:
    layout["shapes"].append({"type": "line", "xref": f"x{suffix} domain", "yref": f"y{suffix}", "x0": 0, "x1": 1,
                             "y0": value, "y1": value, "line": {"color": LIMIT_COLOR, "dash": "dash", "width": 1.5}})
    layout["annotations"].append({"xref": f"x{suffix} domain", "yref": f"y{suffix}", "x": 1, "y": value,
                                  "text": label, "showarrow": False, "xanchor": "right", "yanchor": "bottom",
                                  "font": {"color": LIMIT_COLOR, "size": 10}})


def plotly_figure(spec: dict) -> dict:
    """Plotly ``{"data": [...], "layout": {...}}`` of one figure spec (as ``figure_json`` or ``plot_parallel``
    writes it)."""
    if spec.get("kind") == "parallel":
        return parallel_figure(spec)
    panels = spec["panels"]
    n = len(panels)
    gap = (0.06 if spec.get("sharex", True) else 0.12) if n > 1 else 0.0
    height = (1.0 - gap * (n - 1)) / n
    title = textwrap.wrap(spec["title"], TITLE_WIDTH)
    data, layout = [], {"title": {"text": "<br>".join(title), "font": {"size": 14}}, "height": 160 + 220 * n,
                        "margin": {"l": 70, "r": 20, "t": 40 + 20 * len(title), "b": 50},
                        "legend": {"font": {"size": 10}},
                        "shapes": [], "annotations": [], "hovermode": "closest", "barmode": "group"}
    for row, panel in enumerate(panels, start=1):
        suffix = "" if row == 1 else str(row)
        top = 1.0 - (row - 1) * (height + gap)
        layout[f"yaxis{suffix}"], layout[f"xaxis{suffix}"] = _axes(spec, panel, row, n, [top - height, top])
        for k, series in enumerate(panel["series"]):
            data.append(_trace(series, series_colour(k, len(panel["series"]), row - 1), row, f"{row}"))
        for value, label in panel["limits"]:
            _limit(layout, suffix, value, label)
        if len(panel["ylabel"]) > LONG_LABEL:
            layout["annotations"].append({"xref": f"x{suffix} domain", "yref": f"y{suffix} domain", "x": 0, "y": 1,
                                          "text": panel["ylabel"], "showarrow": False, "xanchor": "left",
                                          "yanchor": "bottom", "font": {"size": 12}})
        for x, _ in spec["events"]:
            layout["shapes"].append({"type": "line", "xref": f"x{suffix}", "yref": f"y{suffix} domain", "x0": x,
                                     "x1": x, "y0": 0, "y1": 1, "line": {"color": "#555", "dash": "dot", "width": 1}})
    xs = [x for p in panels for series in p["series"] for x in series["x"] if x is not None]
    span = (spec["xlim"][1] - spec["xlim"][0]) if spec.get("xlim") else (max(xs) - min(xs) if xs else 1.0)
    for x, label in event_labels(spec["events"], span):
        layout["annotations"].append({"xref": "x", "yref": "paper", "x": x, "y": 1.0, "text": label,
                                      "showarrow": False, "textangle": -90, "xanchor": "right", "yanchor": "top",
                                      "font": {"size": 10, "color": "#333"}})
    return {"data": data, "layout": layout}


def parallel_figure(spec: dict) -> dict:
    """A Plotly ``parcoords`` figure: each column an axis; failed cases (no value) at a red "failed" tick below
    the axis's range and drawn red; the others coloured by the colour column."""
    columns = [np.asarray([np.nan if v is None else v for v in c["values"]], float) for c in spec["columns"]]
    failed = ~np.all(np.isfinite(np.column_stack(columns)), axis=1)
    dimensions = []
    for column, values in zip(spec["columns"], columns):
        low, span, mark = parallel_axis(values)
        ticks = list(np.linspace(low, low + span, 5)) if np.isfinite(values).any() else []
        tickvals, ticktext = ([mark] if failed.any() else []) + ticks, (["failed"] if failed.any() else []) + [
            f"{t:.4g}" for t in ticks]
        dimensions.append({"label": column["label"], "values": np.where(np.isfinite(values), values, mark).tolist(),
                           "range": [mark if failed.any() else low, low + span], "tickvals": tickvals,
                           "ticktext": ticktext})
    color = columns[spec["color"]]
    low, span, _ = parallel_axis(color)
    # the colour scale: red for failed cases (0), a gap (Plotly samples the scale coarsely), viridis for the rest
    shade = np.where(failed | ~np.isfinite(color), 0.0, 0.1 + 0.9 * (np.nan_to_num(color) - low) / span)
    scale = [[0.0, LIMIT_COLOR], [0.05, LIMIT_COLOR]] + [[0.1 + 0.9 * k / (len(VIRIDIS) - 1), c]
                                                        for k, c in enumerate(VIRIDIS)]
    title = f"{spec['title']}<br><sub>coloured by {spec['columns'][spec['color']]['label']}" + (
        f"; {int(failed.sum())} failed case(s) in red at the 'failed' ticks" if failed.any() else "") + "</sub>"
    return {"data": [{"type": "parcoords", "dimensions": dimensions,
                      "line": {"color": shade.tolist(), "colorscale": scale, "cmin": 0.0, "cmax": 1.0}}],
            "layout": {"title": {"text": title, "font": {"size": 14}}, "height": 480,
                       "margin": {"l": 80, "r": 80, "t": 110, "b": 40}}}


def figure_specs(directory: Path) -> list[tuple[str, dict]]:
    """``(name, spec)`` of every ``*.plot.json`` in ``directory``, by name."""
    return [(p.name.removesuffix(".plot.json"), json.loads(p.read_text()))
            for p in sorted(Path(directory).glob("*.plot.json"))]


def images_without_spec(directory: Path) -> list[Path]:
    """PNG plots of ``directory`` that have no ``.plot.json`` (shown as pictures)."""
    return [p for p in sorted(Path(directory).glob("*.png")) if not p.with_suffix(".plot.json").is_file()]
