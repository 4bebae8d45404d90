"""The report's summary table as a user reads it: intervals to 4 digits at any depth, no physical unit on a
Sobol index or a count named after a metric, throughput as a rate, the run's start and the report's time."""

from __future__ import annotations

import json
import re

from diffspace.app.report.summary_table import summary_html
from diffspace.app.report.writer import write_report
from diffspace.app.version import package_version
from diffspace.io.results import name_and_unit


def _rows(table: str) -> dict[str, tuple[str, str]]:
    cells = re.findall(r"<tr><td>(.*?)</td><td>(.*?)</td><td[^>]*>(.*?)</td></tr>", table)
    return {name: (unit, value) for name, unit, value in cells}


def test_intervals_units_and_rates():
    summary = {"outcome_probability_ci": {"captured": [0.49937716258741726, 0.6203316981474539]},
               "sobol_first_ci": {"separation_velocity_m_s": {"ejection.spring_stiffness_N_m": [0.9123456789, 0.95]}},
               "sobol_first": {"separation_velocity_m_s": {"ejection.spring_stiffness_N_m": 0.9123456789}},
               "sobol_samples": {"separation_velocity_m_s": 512},
               "local_sensitivity": {"separation_velocity_m_s": {"ejection.spring_stiffness_N_m": 0.00123456789}},
               "cases_per_s": 229.123456, "max_holding_torque_N_m": {"joint 1": 1.5}, "contacts": {},
               "contact_intervals": [{"mode": "stick", "start_s": 0.01, "end_s": 0.66},
                                     {"mode": "slip+", "start_s": 0.66, "end_s": 3.6123456}]}
    rows = _rows(summary_html(summary))
    assert rows["outcome probability ci: captured"] == ("", "[0.4994, 0.6203]")
    assert rows["sobol first ci: separation velocity"] == ("", "ejection.spring_stiffness_N_m = [0.9123, 0.95]")
    assert rows["sobol first: separation velocity"] == ("", "ejection.spring_stiffness_N_m = 0.9123")
    assert rows["sobol samples: separation velocity"] == ("", "512")
    assert rows["local sensitivity: separation velocity"][0] == "m/s"  # a derivative times a deviation: m/s
    assert rows["cases per second"] == ("1/s", "229.123")
    assert rows["max holding torque: joint 1"] == ("N m", "1.5")  # the family's unit
    assert rows["contact intervals"] == ("", "(mode = stick, start_s = 0.01, end_s = 0.66); "
                                              "(mode = slip+, start_s = 0.66, end_s = 3.612)")  # records, not a dict
    assert rows["contacts"] == ("", "—")  # an empty entry is marked, not an empty cell
    assert name_and_unit("sims_per_s") == ("sims per second", "1/s")


def test_report_header_names_the_runs_start_and_the_report_time(tmp_path):
    (tmp_path / "manifest.json").write_text(json.dumps({"command": "run", "scenario": "toy", "version": "9.9",
                                                        "started": "2026-01-02T03:04:05", "time": "2026-01-02T03:09:00"}))
    (tmp_path / "summary.json").write_text(json.dumps({"status": "ok"}))
    text = write_report(tmp_path).read_text()
    meta = re.search(r'<div class="meta">(.*?)</div>', text).group(1)
    assert "run started 2026-01-02T03:04:05" in meta and "report written 20" in meta and "diffspace 9.9" in meta
    assert not package_version().startswith("unknown")  # installed, or read from the source tree's pyproject
