"""Result files every command writes: ``summary.json``, ``timeseries.csv``/``.npz`` and plots.

A plot is data first (:class:`Figure` of :class:`Panel` s of :class:`Series`, with titles, units, event markers
and limits): :func:`plot_figure` draws it to a PNG and keeps its data beside it (``<name>.plot.json``), from which
the run's HTML report draws the same plot interactively."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import numpy as np


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
    one-sigma bars; ``style``: ``"line"``, ``"points"`` or ``"step"``."""

    label: str
    y: np.ndarray
    x: np.ndarray | None = None
    error: np.ndarray | None = None
    xerror: np.ndarray | None = None
    style: str = "line"


@dataclasses.dataclass(frozen=True)
class Panel:
    """One axis: ``ylabel`` with its unit, the series, horizontal ``limits`` ``(value, label)`` and, for a
    panel of discrete states, ``categories`` (value -> name) shown as the axis's tick labels."""

    ylabel: str
    series: tuple[Series, ...]
    limits: tuple[tuple[float, str], ...] = ()
    categories: dict[int, str] | None = None


@dataclasses.dataclass(frozen=True)
class Figure:
    """A plot as data: drawn to PNG here and interactively in the report (``<name>.plot.json`` beside the PNG).
    ``events``: vertical markers ``(x, label)``; ``xlim``: the x range shown (``None``: all data)."""

    title: str
    panels: tuple[Panel, ...]
    x: np.ndarray | None = None
    xlabel: str = "time [s]"
    events: tuple[tuple[float, str], ...] = ()
    xlim: tuple[float, float] | None = None


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
    keep = _decimated(xs, ys) if series.style != "points" else np.arange(len(ys))
    out = {"label": series.label, "style": series.style, "x": xs[keep], "y": ys[keep]}
    for name in ("error", "xerror"):
        if getattr(series, name) is not None:
            out[name] = np.asarray(getattr(series, name), float)[keep]
    return out


def figure_json(figure: Figure) -> dict:
    """The plain (JSON-ready) form of a figure, lines decimated to :data:`MAX_POINTS`."""
    return _plain({
        "title": figure.title, "xlabel": figure.xlabel, "events": [list(e) for e in figure.events],
        "xlim": list(figure.xlim) if figure.xlim else None,
        "panels": [{"ylabel": p.ylabel, "limits": [list(v) for v in p.limits],
                    "categories": {str(k): v for k, v in (p.categories or {}).items()},
                    "series": [_series_json(s, figure.x) for s in p.series]} for p in figure.panels]})


def _draw_series(ax, series: Series, x) -> None:
    xs = np.asarray(series.x if series.x is not None else x)
    ys = np.asarray(series.y)
    if series.style == "points" or series.error is not None or series.xerror is not None:
        ax.errorbar(xs, ys, yerr=series.error, xerr=series.xerror, label=series.label, capsize=3,
                    fmt="o" if series.style == "points" else "-", markersize=5)
    elif series.style == "step":
        ax.step(xs, ys, where="post", label=series.label)
    else:
        ax.plot(xs, ys, label=series.label)


def plot_figure(path: Path, figure: Figure) -> Path:
    """Draw ``figure`` to the PNG ``path`` and write its data to ``<stem>.plot.json`` beside it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = figure.panels
    fig, axes = plt.subplots(len(panels), 1, figsize=(7.5, 1.0 + 2.3 * len(panels)), sharex=True, squeeze=False)
    for ax, panel in zip(axes[:, 0], panels):
        for series in panel.series:
            _draw_series(ax, series, figure.x)
        for value, label in panel.limits:
            ax.axhline(value, color="crimson", linestyle="--", linewidth=1.0, label=label)
        for x, label in figure.events:
            ax.axvline(x, color="0.35", linestyle=":", linewidth=1.0)
        if panel.categories:
            ax.set_yticks(list(panel.categories), list(panel.categories.values()))
        ax.set_ylabel(panel.ylabel)
        ax.grid(alpha=0.3)
        if len(panel.series) + len(panel.limits) > 1 or panel.limits:
            ax.legend(fontsize=7, ncol=min(len(panel.series) + len(panel.limits), 4))
    top = axes[0, 0]
    for x, label in figure.events:
        top.annotate(label, (x, 1.0), xycoords=("data", "axes fraction"), rotation=90, fontsize=7, va="top",
                     ha="right", color="0.25")
    if figure.xlim:
        top.set_xlim(*figure.xlim)
    axes[-1, 0].set_xlabel(figure.xlabel)
    fig.suptitle(figure.title, fontsize=10)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    path.with_suffix(".plot.json").write_text(json.dumps(figure_json(figure)) + "\n")
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
