"""Study table (printed) and ``study.png`` (one bar panel per numeric column)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ...io.results import Figure, Panel, Series, plot_figure, quantity_label


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


def plot_study(path: Path, table: dict, columns: tuple[str, ...], title: str) -> None:
    """``study.png`` (and its ``.plot.json``): one bar panel per numeric column, stacked, labelled with the
    quantity's name and unit, the cases named on the x axis; a failed case (no value) is a red cross at zero."""
    numeric = [c for c in columns if all(isinstance(table[k].get(c), (int, float)) or table[k].get(c) is None
                                         for k in table) and any(isinstance(table[k].get(c), float) for k in table)]
    if not numeric:
        return
    labels = list(table)
    x = np.arange(1, len(labels) + 1, dtype=float)
    panels = []
    for column in numeric:
        values = np.array([np.nan if table[k].get(column) is None else float(table[k][column]) for k in labels])
        series = [Series(quantity_label(column), values, style="bar")]
        missing = ~np.isfinite(values)
        if missing.any():
            series.append(Series("no value (failed case)", np.zeros(int(missing.sum())), x[missing], style="failed"))
        panels.append(Panel(quantity_label(column), tuple(series)))
    plot_figure(path, Figure(title, tuple(panels), x, xlabel="case", xticks=tuple(zip(x, labels))))
