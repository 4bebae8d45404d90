"""Files of ``diffspace fit``: ``fitted.toml`` (runnable), ``fit_report.json``, ``fit_rows.csv``, ``fit.png``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ..design import FitResult
from ..io.results import plot_panels, write_summary, write_timeseries
from ..scenarios import FitData


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
    rows = np.arange(len(next(iter(data.measured.values()))))
    columns = {"row": rows}
    for key, values in data.measured.items():
        columns[f"measured_{key}"] = values
        columns[f"fitted_{key}"] = predicted[key]
        columns[f"relative_error_{key}"] = predicted[key] / values - 1.0
    write_timeseries(out, columns, "fit_rows")
    plot_panels(out / "fit.png", rows, [(key, {"measured": data.measured[key], "fitted": predicted[key]})
                                        for key in data.measured], xlabel="data row")
    summary = {
        "fitted": dict(result.params),
        "std_errors": dict(result.std_errors),
        "rms_normalised_residual": result.rms,
        "max_abs_relative_error": {k: float(np.max(np.abs(predicted[k] / v - 1.0))) for k, v in data.measured.items()},
        "iterations": result.n_iter,
        "converged": result.converged,
        "at_bound": list(result.at_bound),
        "message": result.message,
    }
    write_summary(out, summary)
    return summary
