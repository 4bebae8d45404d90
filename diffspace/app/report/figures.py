"""A run's plots (``<name>.plot.json``, written with its PNGs by :func:`diffspace.io.results.plot_figure`) as
interactive Plotly figures: stacked panels sharing x, error bars, limits as dashed lines, events as vertical
markers, discrete-state panels with named ticks."""

from __future__ import annotations

import json
from pathlib import Path

LIMIT_COLOR = "crimson"
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f")


def _trace(series: dict, color: str, row: int, legend: str) -> dict:
    trace = {"type": "scatter", "x": series["x"], "y": series["y"], "name": series["label"], "legendgroup": legend,
             "xaxis": "x" if row == 1 else f"x{row}", "yaxis": "y" if row == 1 else f"y{row}",
             "line": {"color": color, "shape": "hv" if series["style"] == "step" else "linear"},
             "marker": {"color": color, "size": 7}, "mode": "markers" if series["style"] == "points" else "lines"}
    for key, axis in (("error", "error_y"), ("xerror", "error_x")):
        if series.get(key) is not None:
            trace[axis] = {"type": "data", "array": series[key], "visible": True, "color": color}
    return trace


def plotly_figure(spec: dict) -> dict:
    """Plotly ``{"data": [...], "layout": {...}}`` of one figure spec (as ``figure_json`` writes it)."""
    panels = spec["panels"]
    n = len(panels)
    gap = 0.06 if n > 1 else 0.0
    height = (1.0 - gap * (n - 1)) / n
    data, layout = [], {"title": {"text": spec["title"], "font": {"size": 14}}, "height": 160 + 220 * n,
                        "margin": {"l": 70, "r": 20, "t": 60, "b": 50}, "legend": {"font": {"size": 10}},
                        "shapes": [], "annotations": [], "hovermode": "closest"}
    for row, panel in enumerate(panels, start=1):
        suffix = "" if row == 1 else str(row)
        top = 1.0 - (row - 1) * (height + gap)
        yaxis = {"domain": [top - height, top], "title": {"text": panel["ylabel"]}, "anchor": f"x{suffix}"}
        if panel.get("categories"):
            yaxis.update(tickmode="array", tickvals=[float(k) for k in panel["categories"]],
                         ticktext=list(panel["categories"].values()))
        xaxis = {"anchor": f"y{suffix}", "matches": "x" if row > 1 else None,
                 "showticklabels": row == n, "range": spec.get("xlim")}
        if row == n:
            xaxis["title"] = {"text": spec["xlabel"]}
        layout[f"yaxis{suffix}"], layout[f"xaxis{suffix}"] = yaxis, {k: v for k, v in xaxis.items() if v is not None}
        for k, series in enumerate(panel["series"]):
            data.append(_trace(series, PALETTE[k % len(PALETTE)], row, f"{row}"))
        for value, label in panel["limits"]:
            layout["shapes"].append({"type": "line", "xref": f"x{suffix} domain", "yref": f"y{suffix}", "x0": 0,
                                     "x1": 1, "y0": value, "y1": value,
                                     "line": {"color": LIMIT_COLOR, "dash": "dash", "width": 1.5}})
            layout["annotations"].append({"xref": f"x{suffix} domain", "yref": f"y{suffix}", "x": 1, "y": value,
                                          "text": label, "showarrow": False, "xanchor": "right",
                                          "yanchor": "bottom", "font": {"color": LIMIT_COLOR, "size": 10}})
        for x, _ in spec["events"]:
            layout["shapes"].append({"type": "line", "xref": f"x{suffix}", "yref": f"y{suffix} domain", "x0": x,
                                     "x1": x, "y0": 0, "y1": 1, "line": {"color": "#555", "dash": "dot", "width": 1}})
    for x, label in spec["events"]:
        layout["annotations"].append({"xref": "x", "yref": "paper", "x": x, "y": 1.0, "text": label,
                                      "showarrow": False, "textangle": -90, "xanchor": "right", "yanchor": "top",
                                      "font": {"size": 10, "color": "#333"}})
    return {"data": data, "layout": layout}


def figure_specs(directory: Path) -> list[tuple[str, dict]]:
    """``(name, spec)`` of every ``*.plot.json`` in ``directory``, by name."""
    return [(p.name.removesuffix(".plot.json"), json.loads(p.read_text()))
            for p in sorted(Path(directory).glob("*.plot.json"))]


def images_without_spec(directory: Path) -> list[Path]:
    """PNG plots of ``directory`` that have no ``.plot.json`` (shown as pictures)."""
    return [p for p in sorted(Path(directory).glob("*.png")) if not p.with_suffix(".plot.json").is_file()]
