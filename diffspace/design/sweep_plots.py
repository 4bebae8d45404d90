"""Sweep plots: outputs against a single axis (lines), a 2-D grid (heatmaps), random samples (scatter matrix)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .sweep_spec import SweepSpec

MAX_PANELS = 6


def _outputs(rows: list[dict], spec: SweepSpec) -> list[str]:
    skip = {"case", "status", "reason", *(a.key for a in spec.axes)}
    names = [k for k in rows[0] if k not in skip and not k.startswith("d(")]
    return names[:MAX_PANELS]


def plot_sweep(out: Path, spec: SweepSpec, rows: list[dict]) -> None:
    """Write ``sweep.png`` (numeric axes only; string-valued axes are plotted by their index)."""
    if not rows:
        return
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    outputs = _outputs(rows, spec)
    if not outputs:
        return
    axes = [a for a in spec.axes]
    columns = {a.key: _numeric([r[a.key] for r in rows], a.values) for a in axes}
    values = {k: np.array([r[k] for r in rows], float) for k in outputs}
    if spec.method == "grid" and len(axes) == 2:
        fig = _heatmaps(plt, axes, columns, values)
    elif len(axes) == 1:
        fig, panels = plt.subplots(len(outputs), 1, figsize=(6, 2.4 * len(outputs)), sharex=True, squeeze=False)
        x = columns[axes[0].key]
        order = np.argsort(x)
        for ax, name in zip(panels[:, 0], outputs):
            ax.plot(x[order], values[name][order], "o-" if spec.method == "grid" else ".", ms=3)
            ax.set_ylabel(name, fontsize=8)
            ax.grid(alpha=0.3)
        panels[-1, 0].set_xlabel(axes[0].key)
    else:
        fig = _scatter_matrix(plt, axes, columns, values)
    fig.tight_layout()
    fig.savefig(out / "sweep.png", dpi=100)
    plt.close(fig)


def _numeric(column: list, values: tuple) -> np.ndarray:
    if all(isinstance(v, (int, float)) for v in column):
        return np.asarray(column, float)
    index = {v: i for i, v in enumerate(values)}
    return np.asarray([index.get(v, np.nan) for v in column], float)


def _heatmaps(plt, axes, columns, values):
    (ax0, ax1), names = axes, list(values)
    fig, panels = plt.subplots(1, len(names), figsize=(4.2 * len(names), 3.6), squeeze=False)
    n0, n1 = len(ax0.values), len(ax1.values)
    for panel, name in zip(panels[0], names):
        grid = values[name].reshape(n0, n1) if values[name].size == n0 * n1 else np.full((n0, n1), np.nan)
        image = panel.imshow(grid, origin="lower", aspect="auto", extent=(
            columns[ax1.key].min(), columns[ax1.key].max(), columns[ax0.key].min(), columns[ax0.key].max()))
        fig.colorbar(image, ax=panel)
        panel.set_title(name, fontsize=8)
        panel.set_xlabel(ax1.key, fontsize=8)
        panel.set_ylabel(ax0.key, fontsize=8)
    return fig


def _scatter_matrix(plt, axes, columns, values):
    names = list(values)
    fig, panels = plt.subplots(len(names), len(axes), figsize=(2.6 * len(axes), 2.2 * len(names)), squeeze=False)
    for i, name in enumerate(names):
        for j, axis in enumerate(axes):
            panel = panels[i, j]
            panel.plot(columns[axis.key], values[name], ".", ms=2, alpha=0.6)
            if i == len(names) - 1:
                panel.set_xlabel(axis.key, fontsize=7)
            if j == 0:
                panel.set_ylabel(name, fontsize=7)
            panel.tick_params(labelsize=6)
    return fig
