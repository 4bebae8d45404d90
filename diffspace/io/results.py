"""Result files every command writes: ``summary.json``, ``timeseries.csv``/``.npz`` and plots.

A plot is data first (:class:`Figure` of :class:`Panel` s of :class:`Series`, with titles, units, event markers
and limits): :func:`plot_figure` draws it to a PNG and keeps its data beside it (``<name>.plot.json``), from which
the run's HTML report draws the same plot interactively."""

from __future__ import annotations

import dataclasses
import json
import math
import re
import textwrap
from pathlib import Path

import numpy as np

from .units import DIMENSIONLESS, split_unit


def _plain(value):
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    arr = np.asarray(value) if not isinstance(value, (str, bool, type(None))) else None
    if arr is not None and arr.dtype.kind in "fiu":
        if arr.ndim:
            return _plain(arr.tolist())
        x = arr.item()
        return None if isinstance(x, float) and not math.isfinite(x) else x
    return value


def name_and_unit(key: str) -> tuple[str, str]:
    """``"joint2_change_at_separation_deg"`` -> ``("joint 2 change at separation", "deg")`` (the key's unit suffix
    read off by :func:`~diffspace.io.units.split_unit`; joint numbers in keys already count from 1);
    ``"spring_stiffness_N_m"`` -> ``"N/m"`` but ``"drive_torque_N_m"`` -> ``"N m"``; ``"cases_per_s"`` ->
    ``("cases per second", "1/s")``."""
    stem, unit = split_unit(key)
    if unit and key == stem + "_per_s":
        stem += "_per_second"
    stem = re.sub(r"joint(\d+)", r"joint \1", stem)
    return stem.replace("_", " ").replace(".", ": "), unit


def with_unit(name: str, unit: str) -> str:
    """``"name [unit]"``; no unit (``""``) or a dimensionless one (``"-"``) is left out."""
    return f"{name} [{unit}]" if unit not in ("", DIMENSIONLESS) else name


def quantity_label(key: str) -> str:
    """An axis label of a unit-suffixed key: ``"separation_velocity_m_s"`` -> ``"separation velocity [m/s]"``."""
    return with_unit(*name_and_unit(key))


def write_summary(out: Path, summary: dict) -> Path:
    """Write ``out/summary.json`` (SI units, unit-suffixed keys); undefined (non-finite) numbers become ``null``."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / "summary.json"
    path.write_text(json.dumps(_plain(summary), indent=2) + "\n")
    return path


def write_timeseries(out: Path, columns: dict[str, np.ndarray], name: str = "timeseries") -> None:
    """Write equal-length 1D columns to ``name.csv`` and ``name.npz``."""
    out.mkdir(parents=True, exist_ok=True)
    arrays = {k: np.asarray(v, dtype=float) for k, v in columns.items()}
    np.savez(out / f"{name}.npz", **arrays)
    header = ",".join(arrays)
    np.savetxt(out / f"{name}.csv", np.column_stack(list(arrays.values())), delimiter=",", header=header, comments="")


@dataclasses.dataclass(frozen=True)
class Series:
    """One curve or point set. ``x``: its own abscissae (``None``: the figure's ``x``); ``error``/``xerror``:
    one-sigma bars; ``style``: ``"line"``, ``"points"``, ``"step"``, ``"bar"`` or ``"failed"`` (red crosses:
    cases that have no value, drawn where the caller puts them)."""

    label: str
    y: np.ndarray
    x: np.ndarray | None = None
    error: np.ndarray | None = None
    xerror: np.ndarray | None = None
    style: str = "line"


@dataclasses.dataclass(frozen=True)
class Panel:
    """One axis: ``ylabel`` with its unit, the series, horizontal ``limits`` ``(value, label)`` and, for a
    panel of discrete states, ``categories`` (value -> name) shown as the axis's tick labels. ``xlabel``: this
    panel's own x label (figures whose panels do not share x)."""

    ylabel: str
    series: tuple[Series, ...]
    limits: tuple[tuple[float, str], ...] = ()
    categories: dict[int, str] | None = None
    xlabel: str | None = None


@dataclasses.dataclass(frozen=True)
class Figure:
    """A plot as data: drawn to PNG here and interactively in the report (``<name>.plot.json`` beside the PNG).
    ``events``: vertical markers ``(x, label)``; ``xlim``: the x range shown (``None``: all data); ``xticks``:
    named x positions ``(x, label)`` (cases, experiments) instead of numbers; ``sharex``: the panels share one x
    axis (else each has its own range and ``Panel.xlabel``)."""

    title: str
    panels: tuple[Panel, ...]
    x: np.ndarray | None = None
    xlabel: str = "time [s]"
    events: tuple[tuple[float, str], ...] = ()
    xlim: tuple[float, float] | None = None
    xticks: tuple[tuple[float, str], ...] = ()
    sharex: bool = True


TITLE_WIDTH = 100
"""Characters per line of a PNG's title (longer titles wrap)."""

LONG_LABEL = 28
"""A panel label longer than this is drawn as the panel's title rather than along its y axis."""

MAX_POINTS = 2000
"""Points kept per line in a ``.plot.json`` (min-max decimation keeps every peak); PNGs use all points."""


def _decimated(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Indices keeping the first, last, and each bucket's minimum and maximum of ``y``."""
    n = len(y)
    if n <= MAX_POINTS:
        return np.arange(n)
    edges = np.linspace(0, n, MAX_POINTS // 2 + 1).astype(int)
    finite = np.where(np.isfinite(y), y, np.nan)
    keep = [0, n - 1]
    for a, b in zip(edges[:-1], edges[1:]):
        chunk = finite[a:b]
        if np.all(np.isnan(chunk)):
            keep.append(a)
            continue
        keep += [a + int(np.nanargmin(chunk)), a + int(np.nanargmax(chunk))]
    return np.unique(keep)


def _series_json(series: Series, x) -> dict:
    xs = np.asarray(series.x if series.x is not None else x, float)
    ys = np.asarray(series.y, float)
    keep = _decimated(xs, ys) if series.style in ("line", "step") else np.arange(len(ys))
    out = {"label": series.label, "style": series.style, "x": xs[keep], "y": ys[keep]}
    for name in ("error", "xerror"):
        if getattr(series, name) is not None:
            out[name] = np.asarray(getattr(series, name), float)[keep]
    return out


ZERO_FLOOR = 1e-9
"""A panel whose data never exceeds this magnitude (SI units) is drawn on +-ZERO_FLOOR: a rate that is zero up
to 1e-33 round-off is a flat line at zero, not autoscaled noise."""


def panel_ylim(panel: Panel, figure: Figure) -> tuple[float, float] | None:
    """The y range of a panel's data inside the figure's ``xlim`` (and its limits), padded by 5 %; ``None``
    without an ``xlim`` (the whole data: autoscaled) or without finite data there; ``+-ZERO_FLOOR`` for data
    that is zero up to round-off."""
    values = [value for value, _ in panel.limits]
    low_x, high_x = figure.xlim or (-np.inf, np.inf)
    for series in panel.series:
        xs = np.asarray(series.x if series.x is not None else figure.x, float)
        ys = np.asarray(series.y, float)
        shown = (xs >= low_x) & (xs <= high_x) & np.isfinite(ys)
        values += list(ys[shown])
    if values and max(abs(v) for v in values) < ZERO_FLOOR:
        return -ZERO_FLOOR, ZERO_FLOOR
    if not values or not figure.xlim:
        return None
    low, high = float(min(values)), float(max(values))
    pad = 0.05 * (high - low) if high > low else max(abs(high), 1.0) * 0.05
    return low - pad, high + pad


def event_labels(events, span: float) -> list[tuple[float, str]]:
    """Events closer than 2 % of ``span`` to the previous one share its marker: ``(x, "a / b")``."""
    merged: list[tuple[float, str]] = []
    for x, label in sorted(events):
        if merged and x - merged[-1][0] < 0.02 * span:
            merged[-1] = (merged[-1][0], f"{merged[-1][1]} / {label}")
        else:
            merged.append((x, label))
    return merged


def figure_json(figure: Figure) -> dict:
    """The plain (JSON-ready) form of a figure, lines decimated to :data:`MAX_POINTS`."""
    return _plain({
        "title": figure.title, "xlabel": figure.xlabel, "events": [list(e) for e in figure.events],
        "xlim": list(figure.xlim) if figure.xlim else None, "xticks": [list(t) for t in figure.xticks],
        "sharex": figure.sharex,
        "panels": [{"ylabel": p.ylabel, "xlabel": p.xlabel, "limits": [list(v) for v in p.limits],
                    "ylim": panel_ylim(p, figure), "categories": {str(k): v for k, v in (p.categories or {}).items()},
                    "series": [_series_json(s, figure.x) for s in p.series]} for p in figure.panels]})


PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f")
"""Series colours of the PNGs and the report's interactive plots alike (no red: red marks limits and failures)."""


def series_colour(k: int, count: int, panel: int) -> str:
    """Colour of series ``k`` of ``count`` in panel ``panel`` (0-based): the series of one panel take the
    palette in order (x, y, z alike in every panel); a panel's only series takes the panel's own colour, so
    stacked single curves (a force above an indentation) are told apart."""
    return PALETTE[(k if count > 1 else panel) % len(PALETTE)]


def _draw_series(ax, series: Series, x, index: int, count: int, colour: str) -> None:
    xs = np.asarray(series.x if series.x is not None else x, float)
    ys = np.asarray(series.y, float)
    if series.style == "failed":
        ax.plot(xs, ys, "x", color="crimson", markersize=8, markeredgewidth=2, label=series.label)
    elif series.style == "bar":
        width = 0.8 / count
        ax.bar(xs + (index - (count - 1) / 2) * width, ys, width, yerr=series.error, label=series.label, capsize=3,
               color=colour)
    elif series.style == "points" or series.error is not None or series.xerror is not None:
        ax.errorbar(xs, ys, yerr=series.error, xerr=series.xerror, label=series.label, capsize=3,
                    fmt="o" if series.style == "points" else "-", markersize=5, color=colour)
    elif series.style == "step":
        ax.step(xs, ys, where="post", label=series.label, color=colour)
    else:
        ax.plot(xs, ys, label=series.label, color=colour)


def _draw_panel(ax, panel: Panel, figure: Figure, row: int) -> None:
    bars = [k for k, series in enumerate(panel.series) if series.style == "bar"]
    for k, series in enumerate(panel.series):
        _draw_series(ax, series, figure.x, bars.index(k) if k in bars else 0, max(len(bars), 1),
                     series_colour(k, len(panel.series), row))
    for value, label in panel.limits:
        ax.axhline(value, color="crimson", linestyle="--", linewidth=1.0, label=label)
    for x, _ in figure.events:
        ax.axvline(x, color="0.35", linestyle=":", linewidth=1.0)
    if panel.categories:
        ax.set_yticks(list(panel.categories), list(panel.categories.values()))
    if len(panel.ylabel) > LONG_LABEL:  # a long quantity name reads as the panel's title
        ax.set_title(panel.ylabel, fontsize=9, loc="left")
    else:
        ax.set_ylabel(panel.ylabel)
    if not figure.sharex:
        ax.set_xlabel(panel.xlabel or figure.xlabel)
    ax.grid(alpha=0.3)
    if len(panel.series) + len(panel.limits) > 1 or panel.limits:
        ax.legend(fontsize=7, ncol=min(len(panel.series) + len(panel.limits), 4))


def _name_ticks(axes, ticks) -> None:
    """Every panel names the cases (a panel of a tall stack is read without scrolling to the bottom one)."""
    long = max(len(label) for _, label in ticks) > 12
    for ax in axes:
        ax.set_xticks([t for t, _ in ticks], [label for _, label in ticks], rotation=25 if long else 0,
                      ha="right" if long else "center")
        ax.tick_params(labelbottom=True)


def plot_figure(path: Path, figure: Figure) -> Path:
    """Draw ``figure`` to the PNG ``path`` and write its data to ``<stem>.plot.json`` beside it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = figure.panels
    height = 2.3 if len(panels) <= 4 else 1.7
    fig, axes = plt.subplots(len(panels), 1, figsize=(7.5, 1.0 + height * len(panels)), sharex=figure.sharex,
                             squeeze=False, layout="constrained")
    for row, (ax, panel) in enumerate(zip(axes[:, 0], panels)):
        _draw_panel(ax, panel, figure, row)
    top = axes[0, 0]
    if figure.xlim:
        top.set_xlim(*figure.xlim)
    for ax, panel in zip(axes[:, 0], panels):
        if (ylim := panel_ylim(panel, figure)) is not None:
            ax.set_ylim(*ylim)
    span = np.subtract(*top.get_xlim()[::-1])
    for x, label in event_labels(figure.events, span):
        top.annotate(label, (x, 1.0), xycoords=("data", "axes fraction"), rotation=90, fontsize=7, va="top",
                     ha="right", color="0.25")
    if figure.xticks:
        _name_ticks(axes[:, 0], figure.xticks)
    if figure.sharex:
        axes[-1, 0].set_xlabel(figure.xlabel)
    fig.suptitle(textwrap.fill(figure.title, TITLE_WIDTH), fontsize=10)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    path.with_suffix(".plot.json").write_text(json.dumps(figure_json(figure)) + "\n")
    return path


@dataclasses.dataclass(frozen=True)
class Parallel:
    """Cases as polylines across parallel axes: ``columns`` ``(label, value per case)`` (inputs, then outputs),
    lines coloured by the column ``color``. A case without a finite value on an axis (a failed case) is drawn
    in red at that axis's "failed" mark, below the axis's range."""

    title: str
    columns: tuple[tuple[str, np.ndarray], ...]
    color: int = -1


FAILED_BELOW = 0.12
"""Where a parallel axis puts its failed cases: this fraction of the axis's range below its minimum."""


def parallel_axis(values: np.ndarray) -> tuple[float, float, float]:
    """``(low, span, failed mark)`` of one parallel axis from its finite values (``span``: the range, or the
    value's size where every case has the same value)."""
    finite = np.asarray(values, float)[np.isfinite(values)]
    low, high = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    span = high - low if high > low else max(abs(low), 1.0)
    return low, span, low - FAILED_BELOW * span


def plot_parallel(path: Path, parallel: Parallel) -> Path:
    """Draw the parallel coordinates to the PNG ``path`` and write ``<stem>.plot.json`` (kind ``parallel``)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.collections import LineCollection

    values = np.column_stack([np.asarray(v, float) for _, v in parallel.columns])
    axes = [parallel_axis(values[:, j]) for j in range(values.shape[1])]
    scaled = np.column_stack([(np.where(np.isfinite(values[:, j]), values[:, j], mark) - low) / span
                              for j, (low, span, mark) in enumerate(axes)])
    failed = ~np.all(np.isfinite(values), axis=1)
    x = np.arange(values.shape[1])
    fig, ax = plt.subplots(figsize=(max(6.0, 1.6 * len(x)), 4.2))
    color = values[:, parallel.color]
    ok = ~failed
    lines = LineCollection([np.column_stack([x, row]) for row in scaled[ok]], cmap="viridis", linewidths=0.8,
                           alpha=0.7)
    lines.set_array(color[ok])
    ax.add_collection(lines)
    if failed.any():
        ax.add_collection(LineCollection([np.column_stack([x, row]) for row in scaled[failed]], colors="crimson",
                                         linewidths=0.8, linestyles="--", label=f"failed ({int(failed.sum())})"))
        ax.legend(fontsize=7, loc="upper right")
    for j in x:
        finite = values[np.isfinite(values[:, j]), j]
        ax.axvline(j, color="0.2", linewidth=0.8)
        if finite.size:
            ax.annotate(f"{finite.max():.4g}", (j, scaled[np.isfinite(values[:, j]), j].max()), xytext=(2, 2),
                        textcoords="offset points", fontsize=7)
            ax.annotate(f"{finite.min():.4g}", (j, 0.0), xytext=(2, -8), textcoords="offset points", fontsize=7)
    if failed.any():
        ax.axhline(-FAILED_BELOW, color="crimson", linewidth=0.6, linestyle=":")
        ax.annotate("failed", (len(x) - 1, -FAILED_BELOW), xytext=(4, -3), textcoords="offset points", fontsize=7,
                    color="crimson")
    fig.colorbar(lines, ax=ax, label=parallel.columns[parallel.color][0])
    ax.set_xticks(x, [label for label, _ in parallel.columns], rotation=20, ha="right", fontsize=7)
    ax.set_yticks([])
    ax.set_xlim(-0.2, len(x) - 0.8)
    ax.set_ylim(-FAILED_BELOW - 0.08, 1.08)
    ax.set_title(parallel.title, fontsize=10)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    spec = {"kind": "parallel", "title": parallel.title, "color": parallel.color % len(parallel.columns),
            "columns": [{"label": label, "values": np.asarray(v, float)} for label, v in parallel.columns]}
    path.with_suffix(".plot.json").write_text(json.dumps(_plain(spec)) + "\n")
    return path


def plot_panels(path: Path, x, panels: list[tuple[str, dict[str, np.ndarray]]], xlabel: str = "time [s]",
                title: str = "", events=(), xlim=None) -> Path:
    """Stacked line plots sharing the x axis: ``panels = [(ylabel, {label: y}), ...]`` (see :func:`plot_figure`)."""
    figure = Figure(title or Path(path).stem, tuple(Panel(ylabel, tuple(Series(k, y) for k, y in series.items()))
                                                    for ylabel, series in panels),
                    np.asarray(x), xlabel, tuple(events), xlim)
    return plot_figure(path, figure)


def print_summary(summary: dict, title: str) -> None:
    print(f"== {title}")
    for key, value in summary.items():
        if isinstance(value, float):
            print(f"  {key:40s} {value:.6g}")
        elif isinstance(value, (int, str, bool)):
            print(f"  {key:40s} {value}")
        elif isinstance(value, (list, tuple)) and value and all(isinstance(x, float) for x in value):
            print(f"  {key:40s} [{', '.join(f'{x:.4g}' for x in value)}]")
        elif isinstance(value, dict) and value and all(isinstance(x, (int, float, str, bool)) for x in value.values()):
            for name, x in value.items():
                print(f"  {key + '.' + name:40s} {x:.6g}" if isinstance(x, float) else f"  {key + '.' + name:40s} {x}")
