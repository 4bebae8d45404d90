"""Plots that say what they show, checked through their data (``<name>.plot.json``) and the report's Plotly
figures: human labels (joint numbers counted from 1, units), failed sweep and study cases marked, fit parity and
residuals per experiment with their bars, impact plots zoomed to the contact with events and limits, and the
optimisation's report with the configured design's and the optimum's scenes side by side."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from diffspace import scenarios
from diffspace.app.cli import main
from diffspace.app.report.figures import plotly_figure
from diffspace.design.labels import design_parameters, key_label
from diffspace.design.run.report import plot_study
from diffspace.io.results import PALETTE, Figure, Panel, Series, plot_figure
from diffspace.scenarios import load_scenario

from .toy_scenario import ENTRY

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def registered(monkeypatch):
    monkeypatch.setitem(scenarios.REGISTRY, "toy", ENTRY)


def spec(path: Path) -> dict:
    return json.loads(path.with_suffix(".plot.json").read_text())


def test_design_keys_are_labelled_with_joint_numbers_from_one_and_units():
    ejection = design_parameters(load_scenario(ROOT / "configs" / "ejection_plane.toml"))
    robot = load_scenario(ROOT / "configs" / "ejection_plane.toml").robot
    label = key_label("ejection.attitude[1]", ejection)
    assert "joint 2" in label and robot.joint_names[1] in label and label.endswith("[deg]")
    assert key_label("friction.viscous_N_m_s_rad", ejection) == "friction viscous [N m s/rad]"
    assert key_label("separation_velocity_m_s") == "separation velocity [m/s]"
    assert key_label("rope.linear_density_kg_m") == "rope linear density [kg/m]"
    assert key_label("spring.stiffness_N_m") == "spring stiffness [N/m]"  # a stiffness, not a torque
    assert key_label("drive_torque_N_m") == "drive torque [N m]"
    assert key_label("shaft.initial_position_m[1]") == "shaft initial position, element 2 [m]"  # no parameter
    unilateral = design_parameters(load_scenario(ROOT / "configs" / "unilateral_contact.toml"))
    assert key_label("contact.mu", unilateral) == "Coulomb friction coefficient"


SWEEP = """
[sweep]
chunk_size = 4
[sweep.axes]
"toy.rate" = {start = 0.0, stop = 12.0, num = 13}
"toy.amplitude" = [1.0, 3.0]
"""


def test_sweep_plots_name_the_inputs_and_mark_the_failed_cases(tmp_path):
    """The toy fails for rates above 10/s: 4 of the 26 cases (rates 11 and 12 at both amplitudes)."""
    config = tmp_path / "toy.toml"
    config.write_text("[toy]\nrate = 1.0\namplitude = 2.0\n" + SWEEP)
    out = tmp_path / "sweep"
    assert main(["sweep", str(config), "--out", str(out), "--quiet"]) == 0
    against_rate = spec(out / "sweep_vs_1.png")
    assert against_rate["xlabel"] == "toy rate [1/s]" and "4 failed" in against_rate["title"]
    failed = [s for p in against_rate["panels"] for s in p["series"] if s["style"] == "failed"]
    assert len(failed) == len(against_rate["panels"]) and all(sorted(s["x"]) == [11, 11, 12, 12] for s in failed)
    parallel = spec(out / "sweep_parallel.png")
    labels = [c["label"] for c in parallel["columns"]]
    assert labels[:2] == ["toy rate [1/s]", "toy amplitude"] and parallel["color"] == 2
    outputs = np.array([[np.nan if v is None else v for v in c["values"]] for c in parallel["columns"][2:]])
    rates = np.array(parallel["columns"][0]["values"])
    assert np.array_equal(np.isnan(outputs).all(axis=0), rates > 10)
    figure = plotly_figure(parallel)  # failed cases at the "failed" tick below each axis, coloured apart
    trace = figure["data"][0]
    dimension = trace["dimensions"][2]
    assert dimension["ticktext"][0] == "failed"
    assert all(v == dimension["tickvals"][0] for v, r in zip(dimension["values"], rates) if r > 10)
    assert all((c == 0.0) == (r > 10) for c, r in zip(trace["line"]["color"], rates))
    report = (out / "report.html").read_text()
    assert "parcoords" in report and report.count('class="figure"') == 3


def test_one_axis_sweep_plot_is_interactive_with_failures(tmp_path):
    config = tmp_path / "toy.toml"
    config.write_text('[toy]\nrate = 1.0\namplitude = 2.0\n[sweep]\nchunk_size = 4\n[sweep.axes]\n'
                      '"toy.rate" = [1.0, 5.0, 11.0]\n')
    out = tmp_path / "sweep"
    assert main(["sweep", str(config), "--out", str(out), "--quiet"]) == 0
    data = spec(out / "sweep.png")
    ok, failed = data["panels"][0]["series"]
    assert ok["x"] == [1.0, 5.0] and failed["x"] == [11.0] and failed["style"] == "failed"


def test_study_plot_names_cases_and_marks_a_failed_one(tmp_path):
    table = {"attitude_1": {"separation_velocity_m_s": 0.25, "stable_time_s": 1.5},
             "attitude_2": {"status": "solver_failure"},
             "attitude_3": {"separation_velocity_m_s": 0.21, "stable_time_s": 0.6}}
    plot_study(tmp_path / "study.png", table, ("separation_velocity_m_s", "stable_time_s"), "ejection study")
    data = spec(tmp_path / "study.png")
    assert [t[1] for t in data["xticks"]] == list(table) and [t[0] for t in data["xticks"]] == [1, 2, 3]
    velocity = data["panels"][0]
    assert velocity["ylabel"] == "separation velocity [m/s]"
    bars, failed = velocity["series"]
    assert bars["style"] == "bar" and bars["y"] == [0.25, None, 0.21]
    assert failed["style"] == "failed" and failed["x"] == [2]


def test_study_chart_bars_sit_on_their_cases_every_panel_names_them_and_zero_stays_flat(tmp_path):
    """Bars of each panel grouped in that panel only (not shifted by the other panels' slots), the cases named
    under every panel, and a rate that is zero up to 1e-33 drawn on +-1e-9 instead of autoscaled noise."""
    table = {f"attitude_{k}": {"separation_velocity_m_s": 0.2 + 0.01 * k, "stable_time_s": 1.0 + k,
                               "stable_angular_velocity_deg_s": 1e-33 * (-1) ** k} for k in range(1, 4)}
    columns = ("separation_velocity_m_s", "stable_time_s", "stable_angular_velocity_deg_s")
    plot_study(tmp_path / "study.png", table, columns, "ejection study")
    figure = plotly_figure(spec(tmp_path / "study.png"))
    bars = [t for t in figure["data"] if t["type"] == "bar"]
    assert [t["alignmentgroup"] for t in bars] == ["1", "2", "3"]
    for row in ("", "2", "3"):
        axis = figure["layout"][f"xaxis{row}"]
        assert axis["showticklabels"] and axis["ticktext"] == list(table)
    assert figure["layout"]["yaxis3"]["range"] == [-1e-9, 1e-9]


def test_fit_plots_parity_and_residuals_per_experiment(tmp_path):
    """Measured values 3 % off the model at three amplitudes: parity points at (measured, fitted) with the
    data's standard deviations as x bars, residuals per numbered experiment (points, never lines)."""
    amplitudes = np.array([1.0, 2.0, 4.0])
    measured = amplitudes * np.exp(-0.7) * np.array([1.03, 0.97, 1.0])
    data = tmp_path / "data.csv"
    data.write_text("amplitude,final\n" + "".join(f"{float(a)!r},{float(m)!r}\n" for a, m in zip(amplitudes, measured)))
    config = tmp_path / "toy.toml"
    config.write_text('[toy]\nrate = 1.0\namplitude = 2.0\n[fit]\nparameters = ["toy.rate"]\n')
    out = tmp_path / "fit"
    assert main(["fit", str(config), "--data", str(data), "--out", str(out), "--quiet"]) == 0
    rate = json.loads((out / "summary.json").read_text())["fitted"]["toy.rate"]
    predicted = amplitudes * np.exp(-rate)
    parity = spec(out / "fit.png")
    assert not parity["sharex"] and parity["panels"][0]["xlabel"] == "measured final value"
    points, diagonal = parity["panels"][0]["series"]
    np.testing.assert_allclose(points["x"], measured, rtol=1e-12)
    np.testing.assert_allclose(points["y"], predicted, rtol=1e-9)
    assert points["xerror"] == [1e-3] * 3 and points["style"] == "points" and diagonal["x"] == diagonal["y"]
    residuals = spec(out / "fit_residuals.png")
    assert [t[0] for t in residuals["xticks"]] == [1, 2, 3] and residuals["xticks"][1][1] == "2: 2"
    assert "toy amplitude" in residuals["xlabel"]
    series = residuals["panels"][0]["series"][0]
    assert series["style"] == "points" and series["error"] == [1e-3] * 3
    np.testing.assert_allclose(series["y"], predicted - measured, rtol=1e-9, atol=1e-15)


def test_figure_features_reach_the_interactive_plot(tmp_path):
    """Named x ticks, panels with their own x, the y range of the zoomed window, merged close events."""
    t = np.linspace(0.0, 10.0, 1001)
    figure = Figure("zoomed", (Panel("y [m]", (Series("y", np.where(t < 5.0, 1.0, 100.0)),)),), t,
                    events=((2.0, "a"), (2.05, "b"), (4.0, "c")), xlim=(1.0, 4.5))
    plot_figure(tmp_path / "zoomed.png", figure)
    data = spec(tmp_path / "zoomed.png")
    assert data["panels"][0]["ylim"] == pytest.approx([0.95, 1.05])  # the 100 m outside the window is not shown
    layout = plotly_figure(data)["layout"]
    assert layout["yaxis"]["range"] == pytest.approx([0.95, 1.05])
    assert [a["text"] for a in layout["annotations"]] == ["a / b", "c"]
    parity = Figure("two", (Panel("p", (Series("s", np.ones(2), np.arange(2.0)),), xlabel="first [N]"),
                            Panel("q", (Series("s", np.ones(2), np.arange(2.0)),), xlabel="second [m]")),
                    sharex=False, xticks=((0.0, "zero"), (1.0, "one")))
    plot_figure(tmp_path / "two.png", parity)
    layout = plotly_figure(spec(tmp_path / "two.png"))["layout"]
    assert "matches" not in layout["xaxis2"] and layout["xaxis2"]["title"]["text"] == "second [m]"
    assert layout["xaxis"]["ticktext"] == ["zero", "one"]


@pytest.mark.slow  # CI time; the other plot tests of this file stay fast
@pytest.mark.timeout(300)
def test_impact_plot_zooms_to_the_contact_and_optimize_report_shows_both_designs(tmp_path):
    """``diffspace optimize`` of the air-table impact (minimum peak force with the impulse at least 2.5 N s,
    which the configured 0.0948 m/s violates): the note names the violation; baseline/ and optimum/ hold each
    design's scene and plots (the impact speeds are the configured and the optimal ones); the report embeds both
    scenes; force_time is zoomed to the contact with its events."""
    config = (ROOT / "configs" / "impact_airtable.toml").read_text().split("[fit]")[0]
    config += ('[optimize]\nobjective = "peak_force_N"\ndirection = "minimize"\n'
               'variables = ["impact.approach_speed_m_s"]\nbounds = {"impact.approach_speed_m_s" = [0.05, 0.2]}\n'
               "constraints = {impulse_N_s = {lower = 2.5}}\nn_starts = 1\nsteps = 2\nsweep_samples = 4\n"
               "chunk_size = 4\npolish = false\n")
    path = tmp_path / "impact.toml"
    path.write_text(config)
    out = tmp_path / "opt"
    assert main(["optimize", str(path), "--out", str(out), "--quiet"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert not summary["initial_feasible"] and summary["initial_violations"][0].startswith("impulse_N_s = ")
    assert summary["objective"] == "minimize peak_force_N"
    baseline = json.loads((out / "baseline" / "summary.json").read_text())
    optimum = json.loads((out / "optimum" / "summary.json").read_text())
    assert baseline["impact_speed_m_s"] == pytest.approx(0.09483, rel=1e-9)
    assert optimum["impact_speed_m_s"] == pytest.approx(summary["optimum"]["impact.approach_speed_m_s"], rel=1e-9)
    assert optimum["impulse_N_s"] >= 2.5 * (1 - 1e-9) > baseline["impulse_N_s"]
    report = (out / "report.html").read_text()
    titles = re.findall(r'<div class="viewer" data-scene="\d+"><h3>([^<:]*):', report)
    assert titles == ["baseline", "optimum"]
    force = spec(out / "optimum" / "force_time.png")
    start, release = [e[0] for e in force["events"] if e[1] in ("first touch", "release")]
    pad = 0.25 * (release - start)  # the window: the contact and a quarter of it either side, inside the series
    first = force["panels"][0]["series"][0]["x"][0]
    assert force["xlim"] == pytest.approx([max(start - pad, first), release + pad], rel=1e-12)
    history = spec(out / "optimize.png")
    assert history["title"].startswith("impact optimize: convergence") and "violates" in history["title"]
    assert history["panels"][1]["limits"][0][0] == 2.5


def test_stacked_single_curves_differ_in_colour_and_series_keep_the_palette(tmp_path):
    """A force panel above an indentation panel (one curve each) get two colours, in the PNG and in the report;
    the x, y, z of a panel take the palette in order in every panel."""
    import matplotlib.image

    t = np.linspace(0.0, 1.0, 50)
    xyz = tuple(Series(f"base {a}", np.sin(t + k)) for k, a in enumerate("xyz"))
    figure = Figure("f", (Panel("force [N]", (Series("contact force", t),)),
                          Panel("indentation [mm]", (Series("indentation", t ** 2),)), Panel("v [m/s]", xyz)), t)
    plot_figure(tmp_path / "f.png", figure)
    traces = plotly_figure(spec(tmp_path / "f.png"))["data"]
    colours = [trace["line"]["color"] for trace in traces]
    assert colours[0] != colours[1] and colours[2:] == list(PALETTE[:3])
    assert matplotlib.image.imread(tmp_path / "f.png").shape[0] > 100
