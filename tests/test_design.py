"""The generic design layer on a toy scenario defined here: a new scenario gets run / sweep / optimize / fit
by implementing the protocol. Sweeps: resumable after SIGKILL without recomputing finished chunks, refused
for another config, equal to the cases run one by one and to a 4-device sharded run; bad specs exit 2."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import numpy as np
import pytest

from diffspace import scenarios
from diffspace.app.cli import main

from .toy_scenario import ENTRY, cli_process, constrained_optimize_table

@pytest.fixture(autouse=True)
def registered(monkeypatch):
    monkeypatch.setitem(scenarios.REGISTRY, "toy", ENTRY)


def _config(tmp_path, text: str = "") -> Path:
    path = tmp_path / "toy.toml"
    path.write_text("[toy]\nrate = 1.0\namplitude = 2.0\n" + text)
    return path


SWEEP = """
[sweep]
chunk_size = 4
gradients = true
[sweep.axes]
"toy.rate" = {start = 0.0, stop = 12.0, num = 13}
"toy.amplitude" = [1.0, 3.0]
"""


def test_run_writes_summary_manifest_and_series(tmp_path):
    out = tmp_path / "out"
    assert main(["run", str(_config(tmp_path)), "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["final_value"] == pytest.approx(2.0 * np.exp(-1.0), rel=1e-14)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["command"] == "run" and manifest["scenario"] == "toy" and len(manifest["config_hash"]) == 64
    assert (out / "timeseries.csv").is_file() and not (tmp_path / "out.partial").exists()


def test_sweep_equals_cases_one_by_one_with_failures_recorded(tmp_path):
    out = tmp_path / "sweep"
    assert main(["sweep", str(_config(tmp_path, SWEEP)), "--out", str(out), "--quiet"]) == 0
    rows = np.genfromtxt(out / "results.csv", delimiter=",", names=True, dtype=None, encoding="utf-8")
    assert len(rows) == 26
    for row in rows:
        rate, amplitude = row["toyrate"], row["toyamplitude"]
        if rate > 10.0:  # failed cases keep their reason and pollute nothing
            assert row["status"] == "solver_failure" and np.isnan(row["final_value"]) and row["reason"]
            continue
        assert row["status"] == "ok"
        assert row["final_value"] == pytest.approx(amplitude * np.exp(-rate), rel=1e-14)
        assert row["dfinal_valuedtoyrate"] == pytest.approx(-amplitude * np.exp(-rate), rel=1e-12)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status_counts"] == {"ok": 22, "solver_failure": 4}
    assert (out / "sweep.png").is_file()


def test_sweep_refuses_another_config_and_reuses_its_own(tmp_path, capsys):
    out = tmp_path / "sweep"
    path = _config(tmp_path, SWEEP)
    assert main(["sweep", str(path), "--out", str(out), "--quiet"]) == 0
    assert main(["sweep", str(path), "--out", str(out), "--quiet", "--set", "toy.horizon_s=2.0"]) == 2
    assert "another config" in capsys.readouterr().err
    assert main(["sweep", str(path), "--out", str(out), "--quiet"]) == 0  # the same config: nothing recomputed
    assert json.loads((out / "summary.json").read_text())["computed_cases"] == 0
    assert main(["run", str(path), "--out", str(out)]) == 2  # another command's results
    assert main(["run", str(path), "--out", str(out), "--overwrite"]) == 0


def test_sweep_killed_and_rerun_equals_uninterrupted_and_recomputes_nothing(tmp_path):
    spec = '\n[sweep]\nchunk_size = 1\n[sweep.axes]\n"toy.rate" = {start = 0.0, stop = 5.0, num = 600}\n'
    path = _config(tmp_path, spec)
    reference = tmp_path / "reference"
    assert cli_process(["sweep", str(path), "--out", str(reference), "--quiet"]).wait(timeout=600) == 0
    out = tmp_path / "killed"
    store = Path(str(out) + ".partial") / "store"
    proc = cli_process(["sweep", str(path), "--out", str(out), "--quiet"])
    deadline = time.time() + 300
    while time.time() < deadline and len(list(store.glob("chunk_*.npz"))) < 5:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    finished = sorted(store.glob("chunk_*.npz"))
    assert 5 <= len(finished) < 600, "the sweep was not interrupted mid-run"
    stamps = {p.name: p.stat().st_mtime_ns for p in finished}
    assert cli_process(["sweep", str(path), "--out", str(out), "--quiet"]).wait(timeout=600) == 0
    assert (out / "results.csv").read_text() == (reference / "results.csv").read_text()
    assert not list((out / "store").glob(".chunk_*")), "a temporary chunk file of the killed run was kept"
    for name, stamp in stamps.items():
        assert (out / "store" / name).stat().st_mtime_ns == stamp  # copied, never recomputed
    summary = json.loads((out / "summary.json").read_text())
    assert summary["computed_cases"] == 600 - len(stamps)


def test_sharded_over_four_host_devices_equals_one_device(tmp_path):
    path = _config(tmp_path, SWEEP)
    one, four = tmp_path / "one", tmp_path / "four"
    assert cli_process(["sweep", str(path), "--out", str(one), "--quiet"]).wait(timeout=600) == 0
    flags = {"XLA_FLAGS": "--xla_force_host_platform_device_count=4"}
    assert cli_process(["sweep", str(path), "--out", str(four), "--quiet"], env=flags).wait(timeout=600) == 0
    assert (one / "results.csv").read_text() == (four / "results.csv").read_text()


@pytest.mark.parametrize("axes, message", [
    ('"toy.nothing" = [1.0]', "sweep.axes.toy.nothing"),
    ('"toy.rate" = {start = 1.0, stop = 1.0, num = 3}', "empty range"),
    ('"toy.rate" = {lower = "a", upper = 2.0}', "finite numbers"),
    ('"toy.rate" = {start = 0.0, stop = 1.0, num = 0}', "num must be a positive integer"),
])
def test_bad_sweep_specs_exit_2_with_one_line(tmp_path, capsys, axes, message):
    path = _config(tmp_path, f"\n[sweep]\n[sweep.axes]\n{axes}\n")
    assert main(["sweep", str(path), "--out", str(tmp_path / "x"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_bad_samples_exit_2(tmp_path, capsys):
    path = _config(tmp_path, '\n[sweep]\nmethod = "random"\nsamples = 0\n[sweep.axes]\n"toy.rate" = {lower = 0.0, upper = 1.0}\n')
    assert main(["sweep", str(path), "--out", str(tmp_path / "x"), "--quiet"]) == 2
    assert "sweep.samples" in capsys.readouterr().err


def test_optimize_finds_the_constrained_optimum(tmp_path):
    """Maximise x(T) = A exp(-r) over r in [0, 5] with A fixed, subject to x(T) <= 1.5: the optimum sits on the
    constraint, r = ln(2 / 1.5); the polish lands there."""
    spec = constrained_optimize_table(steps=40, sweep_samples=16, chunk_size=8)
    out = tmp_path / "opt"
    assert main(["optimize", str(_config(tmp_path, spec)), "--out", str(out), "--quiet"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["optimum"]["toy.rate"] == pytest.approx(np.log(2.0 / 1.5), rel=1e-5)
    assert summary["optimizer_not_beaten_by_sweep"] and summary["nan_gradient_steps"] == 0
    assert main(["run", str(out / "optimum.toml"), "--out", str(tmp_path / "again")]) == 0


def test_optimize_starts_from_the_configured_design(tmp_path):
    """The config's own design value is the seeding sweep's first point and Adam's first start, so the optimum
    is never worse than the design the user wrote (here: the unconstrained optimum r = 0 is configured)."""
    spec = """
[optimize]
objective = "final_value"
variables = ["toy.rate"]
bounds = {"toy.rate" = [0.0, 5.0]}
n_starts = 1
steps = 2
sweep_samples = 4
chunk_size = 4
polish = false
"""
    out = tmp_path / "opt"
    path = tmp_path / "toy.toml"
    path.write_text("[toy]\nrate = 0.0\namplitude = 2.0\n" + spec)
    assert main(["optimize", str(path), "--out", str(out), "--quiet"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["started_from_config"]
    sweep = np.genfromtxt(out / "sweep.csv", delimiter=",", names=True)
    assert sweep["toyrate"][0] == 0.0
    series = np.genfromtxt(out / "timeseries.csv", delimiter=",", names=True)
    assert series["start0_objective"][0] == pytest.approx(2.0, rel=1e-5)  # z keeps 1e-6 of the span off a bound
    assert summary["optimum_objective"] == pytest.approx(2.0, rel=1e-6)


def test_fit_identifies_the_rate(tmp_path):
    data = tmp_path / "data.csv"
    amplitudes = np.array([1.0, 2.0, 4.0])
    data.write_text("amplitude,final\n" + "".join(f"{a},{a * np.exp(-0.7)}\n" for a in amplitudes))
    path = _config(tmp_path, '\n[fit]\nparameters = ["toy.rate"]\n')
    out = tmp_path / "fit"
    assert main(["fit", str(path), "--data", str(data), "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["fitted"]["toy.rate"] == pytest.approx(0.7, rel=1e-8) and summary["converged"]
    fitted = (out / "fitted.toml").read_text()
    assert 'scenario = "toy"' in fitted and "rate = 0.7" in fitted


def test_impossible_data_fit_reports_the_bound(tmp_path, capsys):
    """Data with x(T) above the amplitude (a negative rate) pin the rate at its bound 0: reported as not
    converged with the parameter named, and a warning on the console (never 'converged')."""
    data = tmp_path / "data.csv"
    data.write_text("amplitude,final\n1.0,1.2\n2.0,2.4\n")
    path = _config(tmp_path, '\n[fit]\nparameters = ["toy.rate"]\n')
    out = tmp_path / "fit"
    assert main(["fit", str(path), "--data", str(data), "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["converged"] is False and summary["at_bound"] == ["toy.rate"]
    assert "did not converge" in capsys.readouterr().err


def test_corrupt_chunk_is_reported_and_recomputed(tmp_path, capsys):
    path = _config(tmp_path, SWEEP)
    out = tmp_path / "sweep"
    assert main(["sweep", str(path), "--out", str(out), "--quiet"]) == 0
    reference = (out / "results.csv").read_text()
    chunk = sorted((out / "store").glob("chunk_*.npz"))[2]
    chunk.write_bytes(chunk.read_bytes()[:100])  # truncated
    assert main(["sweep", str(path), "--out", str(out), "--quiet"]) == 0
    assert f"chunk file {chunk.name} is unreadable" in capsys.readouterr().err
    assert (out / "results.csv").read_text() == reference
    assert json.loads((out / "summary.json").read_text())["computed_cases"] == 4  # that chunk only


def test_derived_config_sets_one_element_of_a_named_or_default_list():
    """optimum.toml / fitted.toml set ``a.b[i]`` where the config names the list (a named attitude) or leaves it
    at its default: the list comes from the scenario's resolved config, the other elements unchanged."""
    import tomllib

    from diffspace.app.commands import load

    loaded = load(Path(__file__).resolve().parent.parent / "configs" / "ejection_optimize.toml", ['ejection.attitude="attitude_2"'])
    text = loaded.derived_config({"ejection.attitude[1]": 10.0}, "optimum")
    attitude = tomllib.loads(text)["ejection"]["attitude"]
    expected = np.rad2deg(np.asarray(loaded.scenario.params.attitude))
    expected[1] = 10.0
    np.testing.assert_allclose(attitude, expected, rtol=0, atol=1e-12)
    assert tomllib.loads(text)["scenario"] == "ejection"
