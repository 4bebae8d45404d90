"""Sweep plots, labelled with human names and units (design variables through their parameters: joint numbers
counted from 1), failed cases marked as red crosses:

* ``sweep.png``: one axis: every output against it (interactive in the report); a 2-D grid: heatmaps with
  the failed cells crossed; otherwise the parallel coordinates below;
* ``sweep_parallel.png`` (two or more axes): parallel coordinates of the inputs and outputs, failed cases in
  red at a "failed" mark below each output's range (interactive in the report);
* ``sweep_vs_<n>.png`` (two or more axes): every output against axis ``n`` (counted from 1), interactive.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ...core.status import ConfigError
from ...io.results import Figure, Panel, Parallel, Series, plot_figure, plot_parallel
from ..labels import design_parameters, key_label
from .spec import SweepSpec

MAX_PANELS = 6


def _outputs(rows: list[dict], spec: SweepSpec) -> list[str]:
    skip = {"case", "status", "reason", *(a.key for a in spec.axes)}
    names = [k for k in rows[0] if k not in skip and not k.startswith("d(")]
    return names[:MAX_PANELS]


def _numeric(column: list, values: tuple) -> np.ndarray:
    if all(isinstance(v, (int, float)) for v in column):
        return np.asarray(column, float)
    index = {v: i for i, v in enumerate(values)}
    return np.asarray([index.get(v, np.nan) for v in column], float)


class _Sweep:
    """The plotted cases: inputs (numeric; string values by their index), outputs, labels, failed cases."""

    def __init__(self, spec: SweepSpec, rows: list[dict], scenario):
        parameters = design_parameters(scenario) if scenario is not None else {}
        self.spec, self.axes, self.outputs = spec, spec.axes, _outputs(rows, spec)
        self.label = {k: key_label(k, parameters) for k in [a.key for a in spec.axes] + self.outputs}
        self.inputs = {a.key: _numeric([r[a.key] for r in rows], a.values) for a in spec.axes}
        self.values = {k: np.array([r[k] for r in rows], float) for k in self.outputs}
        self.failed = np.array([r["status"] != "ok" for r in rows])
        shown = f", {len(rows)} of {spec.n_cases} shown" if len(rows) < spec.n_cases else ""
        name = scenario.name if scenario is not None else "scenario"
        self.title = (f"{name} sweep: {spec.n_cases} cases ({spec.method}){shown}, "
                      f"{int(self.failed.sum())} failed")

    def ticks(self, axis) -> tuple:
        """Named ticks of a string-valued axis."""
        return () if axis.numeric else tuple((float(i), str(v)) for i, v in enumerate(axis.values))

    def against(self, axis, lines: bool) -> Figure:
        """Every output against ``axis``; failed cases as crosses at the bottom of each panel's data."""
        x = self.inputs[axis.key]
        order = np.argsort(x, kind="stable")
        panels = []
        for name in self.outputs:
            y = self.values[name]
            ok = ~self.failed & np.isfinite(y)
            series = [Series("case", y[order][ok[order]], x[order][ok[order]], style="line" if lines else "points")]
            bad = ~ok
            if bad.any():
                floor = float(np.min(y[ok])) if ok.any() else 0.0
                series.append(Series(f"failed ({int(bad.sum())})", np.full(int(bad.sum()), floor), x[bad],
                                     style="failed"))
            panels.append(Panel(self.label[name], tuple(series)))
        return Figure(f"{self.title}: outputs against {self.label[axis.key]}", tuple(panels),
                      xlabel=self.label[axis.key], xticks=self.ticks(axis))

    def parallel(self) -> Parallel:
        columns = [(self.label[a.key], self.inputs[a.key]) for a in self.axes]
        columns += [(self.label[k], np.where(self.failed, np.nan, self.values[k])) for k in self.outputs]
        return Parallel(self.title, tuple(columns), color=len(self.axes))


def plot_sweep(out: Path, spec: SweepSpec, rows: list[dict], scenario=None) -> None:
    """Write the sweep's plots (module docstring); ``scenario``: names the run and its design variables."""
    if not rows or not _outputs(rows, spec):
        return
    sweep = _Sweep(spec, rows, None if isinstance(scenario, ConfigError) else scenario)
    if len(spec.axes) == 1:
        plot_figure(out / "sweep.png", sweep.against(spec.axes[0], lines=spec.method == "grid"))
        return
    heatmap = spec.method == "grid" and len(spec.axes) == 2
    if heatmap:
        _heatmaps(out / "sweep.png", sweep)
    plot_parallel(out / ("sweep_parallel.png" if heatmap else "sweep.png"), sweep.parallel())
    for n, axis in enumerate(spec.axes, start=1):
        plot_figure(out / f"sweep_vs_{n}.png", sweep.against(axis, lines=False))


def _heatmaps(path: Path, sweep: _Sweep) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    (ax0, ax1), names = sweep.axes, sweep.outputs
    n0, n1 = len(ax0.values), len(ax1.values)
    cols = min(len(names), 3)
    rows = -(-len(names) // cols)
    fig, panels = plt.subplots(rows, cols, figsize=(4.6 * cols, 3.8 * rows + 0.6), squeeze=False)
    x, y = sweep.inputs[ax1.key], sweep.inputs[ax0.key]
    full = sweep.failed.size == n0 * n1
    for panel, name in zip(panels.ravel(), names):
        grid = (np.where(sweep.failed, np.nan, sweep.values[name]).reshape(n0, n1) if full
                else np.full((n0, n1), np.nan))
        image = panel.imshow(grid, origin="lower", aspect="auto", extent=(*_cell_edges(x, n1), *_cell_edges(y, n0)))
        fig.colorbar(image, ax=panel, label=sweep.label[name])
        if sweep.failed.any():
            panel.plot(x[sweep.failed], y[sweep.failed], "x", color="crimson", ms=8, mew=2,
                       label=f"failed ({int(sweep.failed.sum())})")
            panel.legend(fontsize=7, loc="upper right")
        panel.set_title(sweep.label[name], fontsize=9)
        panel.set_xlabel(sweep.label[ax1.key], fontsize=8)
        panel.set_ylabel(sweep.label[ax0.key], fontsize=8)
    for panel in panels.ravel()[len(names):]:
        panel.set_visible(False)
    fig.suptitle(sweep.title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _cell_edges(values: np.ndarray, n: int) -> tuple[float, float]:
    """Outer edges of ``n`` evenly spaced grid cells centred on the axis's values."""
    low, high = float(np.nanmin(values)), float(np.nanmax(values))
    half = 0.5 * (high - low) / (n - 1) if n > 1 and high > low else 0.5
    return low - half, high + half
