"""Files of ``diffspace fit``: ``fitted.toml`` (runnable), ``fit_report.json``, ``fit_rows.csv`` and two plots:

* ``fit.png``: measured against fitted-model values, one panel per measured metric, the measurements' error
  bars (one standard deviation where the data give measurement noise; the residual scale otherwise), the line
  where prediction equals measurement;
* ``fit_residuals.png``: per experiment (named by its conditions), fitted minus measured for every metric with
  the same bars and the zero line. Experiments are independent: points, never joined by lines.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ..design import FitResult
from ..design.labels import key_label
from ..io.results import Figure, Panel, Series, plot_figure, quantity_label, write_summary, write_timeseries
from ..scenarios import FitData


def _experiment_axis(data: FitData) -> str:
    """The experiments' axis label: what the tick labels list besides the row number."""
    return f"experiment (number: {', '.join(key_label(k) for k in data.conditions)})" if data.conditions else (
        "experiment")


def _experiment_names(data: FitData) -> list[str]:
    """``"1: attitude_2"``, ``"2: 0.08"``: each row's number (from 1) and the conditions set in it."""
    names = []
    for row in range(data.rows):
        values = [v[row] for v in data.conditions.values()]
        text = ", ".join(str(v) if isinstance(v, str) else f"{float(v):.4g}" for v in values)
        names.append(f"{row + 1}: {text}" if text else str(row + 1))
    return names


def _bar_name(data: FitData) -> str:
    return "measured ±1 sd" if data.absolute_sigma else "measured (bars: residual scale)"


def plot_fit(out: Path, name: str, data: FitData, result: FitResult, predicted: dict, data_path: Path) -> None:
    """``fit.png`` (parity) and ``fit_residuals.png`` (per experiment); see the module docstring."""
    fitted = ", ".join(f"{k} = {v:.4g} ± {result.std_errors[k]:.2g}" for k, v in result.params.items())
    title = (f"{name} fit to {Path(data_path).name} ({data.rows} experiments): {fitted}; "
             f"rms normalised residual {result.rms:.3g}")
    parity = []
    for key, measured in data.measured.items():
        label = quantity_label(key)
        both = np.concatenate([np.asarray(measured, float), np.asarray(predicted[key], float)])
        span = np.array([np.nanmin(both), np.nanmax(both)])
        parity.append(Panel(f"fitted model: {label}", (
            Series(_bar_name(data), np.asarray(predicted[key], float), np.asarray(measured, float),
                   xerror=np.asarray(data.sigma[key], float), style="points"),
            Series("fitted = measured", span, span)), xlabel=f"measured {label}"))
    plot_figure(out / "fit.png", Figure(title, tuple(parity), sharex=False))
    rows = np.arange(1, data.rows + 1, dtype=float)
    residuals = [Panel(f"fitted - measured: {quantity_label(key)}", (
        Series(f"fitted - measured ({'±1 sd' if data.absolute_sigma else 'bars: residual scale'})",
               np.asarray(predicted[key], float) - np.asarray(measured, float), rows,
               error=np.asarray(data.sigma[key], float), style="points"),), ((0.0, "measured"),))
        for key, measured in data.measured.items()]
    plot_figure(out / "fit_residuals.png", Figure(f"{name} fit residuals per experiment", tuple(residuals), rows,
                                                  xlabel=_experiment_axis(data), xticks=tuple(zip(rows, _experiment_names(data)))))


def write_fit(out: Path, loaded, data_path: Path, data: FitData, result: FitResult, predicted: dict) -> dict:
    """Write every fit output into ``out``; return the summary."""
    (out / "fitted.toml").write_text(loaded.derived_config(
        result.params, f"fitted by diffspace fit to {data_path}\nfitted: {', '.join(result.names)}; "
                       f"rms normalised residual {result.rms:.4g}"))
    report = result.to_dict()
    report["data"] = str(data_path)
    report["conditions"] = {k: np.asarray(v).tolist() for k, v in data.conditions.items()}
    report["measured"] = {k: np.asarray(v).tolist() for k, v in data.measured.items()}
    report["predicted"] = {k: np.asarray(v).tolist() for k, v in predicted.items()}
    (out / "fit_report.json").write_text(json.dumps(report, indent=2) + "\n")
    columns = {"row": np.arange(data.rows)}
    for key, values in data.measured.items():
        columns[f"measured_{key}"] = values
        columns[f"fitted_{key}"] = predicted[key]
        columns[f"relative_error_{key}"] = predicted[key] / values - 1.0
    write_timeseries(out, columns, "fit_rows")
    plot_fit(out, loaded.name, data, result, predicted, data_path)
    summary = {
        "fitted": dict(result.params),
        "std_errors": dict(result.std_errors),
        "covariance": result.covariance,  # rows and columns in the order of "fitted"; read by montecarlo.from_fit
        "rms_normalised_residual": result.rms,
        "max_abs_relative_error": {k: float(np.max(np.abs(predicted[k] / v - 1.0))) for k, v in data.measured.items()},
        "iterations": result.n_iter,
        "converged": result.converged,
        "at_bound": list(result.at_bound),
        "message": result.message,
    }
    write_summary(out, summary)
    return summary
