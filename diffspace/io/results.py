"""Result files every command writes: ``summary.json``, ``timeseries.csv``/``.npz`` and PNG plots."""

from __future__ import annotations

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


def plot_panels(path: Path, x, panels: list[tuple[str, dict[str, np.ndarray]]], xlabel: str = "time [s]") -> Path:
    """Stacked line plots sharing the x axis: ``panels = [(ylabel, {label: y}), ...]``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(panels), 1, figsize=(7, 2.4 * len(panels)), sharex=True, squeeze=False)
    for ax, (ylabel, series) in zip(axes[:, 0], panels):
        for label, y in series.items():
            ax.plot(np.asarray(x), np.asarray(y), label=label)
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
        if len(series) > 1:
            ax.legend(fontsize=7, ncol=min(len(series), 4))
    axes[-1, 0].set_xlabel(xlabel)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


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
