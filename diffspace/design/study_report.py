"""Study table (printed) and ``study.png`` (one bar chart per numeric column)."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def _cell(value) -> str:
    if isinstance(value, float):
        return f"{value:.5g}"
    if isinstance(value, list):
        return " ".join(_cell(v) for v in value)
    return "n/a" if value is None else str(value)


def print_study(table: dict, columns: tuple[str, ...]) -> None:
    labels = list(table)
    cells = [[_cell(table[label].get(c)) for c in columns] for label in labels]
    widths = [max([len(c)] + [len(row[j]) for row in cells]) for j, c in enumerate(columns)]
    label_width = max(len("case"), *(len(label) for label in labels))
    print("  ".join(["case".ljust(label_width)] + [c.rjust(w) for c, w in zip(columns, widths)]))
    for label, row in zip(labels, cells):
        print("  ".join([label.ljust(label_width)] + [cell.rjust(w) for cell, w in zip(row, widths)]))


def plot_study(path: Path, table: dict, columns: tuple[str, ...]) -> None:
    numeric = [c for c in columns if all(isinstance(table[k].get(c), (int, float)) or table[k].get(c) is None
                                         for k in table) and any(isinstance(table[k].get(c), float) for k in table)]
    if not numeric:
        return
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = list(table)
    x = np.arange(len(labels))
    fig, axes = plt.subplots(1, len(numeric), figsize=(3.6 * len(numeric), 3.4), squeeze=False)
    for ax, column in zip(axes[0], numeric):
        ax.bar(x, [np.nan if table[k].get(column) is None else table[k][column] for k in labels])
        ax.set_title(column, fontsize=8)
        ax.set_xticks(x, labels, rotation=30, fontsize=7)
        ax.grid(alpha=0.3, axis="y")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
