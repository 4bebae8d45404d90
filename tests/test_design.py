"""The generic design layer on a toy scenario defined here: a new scenario gets run / sweep / optimize / fit
by implementing the protocol. Sweeps: resumable after SIGKILL without recomputing finished chunks, refused
for another config, equal to the cases run one by one and to a 4-device sharded run; bad specs exit 2."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp
import numpy as np
import pytest
from jaxtyping import Array, Float, Int

from diffspace import scenarios
from diffspace.app.cli import main
from diffspace.io.config import Field, Schema
from diffspace.io.results import write_timeseries
from diffspace.scenarios import AbstractOutcome, AbstractParams, AbstractScenario, FitData, Parameter
from diffspace.status import Status, flag

HERE = Path(__file__).resolve().parent


class ToyParams(AbstractParams):
    rate: Float[Array, ""]
    amplitude: Float[Array, ""]


class ToyOutcome(AbstractOutcome):
    ts: Float[Array, " T"]
    xs: Float[Array, " T"]
    final: Float[Array, ""]
    status: Int[Array, ""]


class Toy(AbstractScenario):
    """Exponential decay ``x(t) = A exp(-r t)`` sampled on ``[0, T]``; rates above 10/s count as a solver
    failure (so failed cases can be exercised)."""

    name: ClassVar[str] = "toy"
    headline: ClassVar = ("final_value", "toy.rate")
    params: ToyParams
    horizon: Float[Array, ""]

    @classmethod
    def schema(cls) -> Schema:
        return Schema({"toy": {"rate": Field("float", 1.0, min=0.0), "amplitude": Field("float", 2.0),
                               "horizon_s": Field("float", 1.0, gt=0.0)}})

    @classmethod
    def from_config(cls, cfg: dict) -> "Toy":
        t = cfg["toy"]
        return cls(params=ToyParams(jnp.asarray(t["rate"]), jnp.asarray(t["amplitude"])),
                   horizon=jnp.asarray(t["horizon_s"]))

    def simulate(self, params: ToyParams) -> ToyOutcome:
        ts = jnp.linspace(0.0, self.horizon, 11)
        xs = params.amplitude * jnp.exp(-params.rate * ts)
        return ToyOutcome(ts, xs, xs[-1], flag(params.rate > 10.0, Status.SOLVER_FAILURE))

    def design_space(self):
        return (Parameter("toy.rate", 0.0, 20.0, "1/s"), Parameter("toy.amplitude", -10.0, 10.0, "-"))

    def with_design(self, params: ToyParams, values: dict) -> ToyParams:
        fields = {"toy.rate": "rate", "toy.amplitude": "amplitude"}
        for key in values:
            self.parameter(key)
        return eqx.tree_at(lambda p: [getattr(p, fields[k]) for k in values], params,
                           [jnp.asarray(v, float) for v in values.values()])

    def metrics(self, params: ToyParams) -> dict:
        out = self.simulate(params)
        return {"status": out.status, "final_value": out.final, "half_value": out.xs[5]}

    def summary(self, outcome: ToyOutcome) -> dict:
        return {"status": Status(int(outcome.status)).label, "final_value": float(outcome.final)}

    def write(self, outcome: ToyOutcome, out: Path) -> None:
        write_timeseries(out, {"t_s": outcome.ts, "x": outcome.xs})

    def read_data(self, path: Path) -> FitData:
        rows = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
        return FitData({"toy.amplitude": rows[:, 0]}, {"final_value": rows[:, 1]}, {"final_value": np.full(len(rows), 1e-3)})


@pytest.fixture(autouse=True)
def registered(monkeypatch):
    monkeypatch.setitem(scenarios.REGISTRY, "toy", ("toy", "test_design:Toy"))


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


RUNNER = """
import sys
from diffspace import scenarios
scenarios.REGISTRY["toy"] = ("toy", "test_design:Toy")
from diffspace.app.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _cli(args, env=None, **kwargs):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]), **(env or {})}
    return subprocess.Popen([sys.executable, "-c", RUNNER, *args], env=env, **kwargs)


def test_sweep_killed_and_rerun_equals_uninterrupted_and_recomputes_nothing(tmp_path):
    spec = '\n[sweep]\nchunk_size = 1\n[sweep.axes]\n"toy.rate" = {start = 0.0, stop = 5.0, num = 600}\n'
    path = _config(tmp_path, spec)
    reference = tmp_path / "reference"
    assert _cli(["sweep", str(path), "--out", str(reference), "--quiet"]).wait(timeout=600) == 0
    out = tmp_path / "killed"
    store = Path(str(out) + ".partial") / "store"
    proc = _cli(["sweep", str(path), "--out", str(out), "--quiet"])
    deadline = time.time() + 300
    while time.time() < deadline and len(list(store.glob("chunk_*.npz"))) < 5:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    finished = sorted(store.glob("chunk_*.npz"))
    assert 5 <= len(finished) < 600, "the sweep was not interrupted mid-run"
    stamps = {p.name: p.stat().st_mtime_ns for p in finished}
    assert _cli(["sweep", str(path), "--out", str(out), "--quiet"]).wait(timeout=600) == 0
    assert (out / "results.csv").read_text() == (reference / "results.csv").read_text()
    for name, stamp in stamps.items():
        assert (out / "store" / name).stat().st_mtime_ns == stamp  # copied, never recomputed
    summary = json.loads((out / "summary.json").read_text())
    assert summary["computed_cases"] == 600 - len(stamps)


def test_sharded_over_four_host_devices_equals_one_device(tmp_path):
    path = _config(tmp_path, SWEEP)
    one, four = tmp_path / "one", tmp_path / "four"
    assert _cli(["sweep", str(path), "--out", str(one), "--quiet"]).wait(timeout=600) == 0
    flags = {"XLA_FLAGS": "--xla_force_host_platform_device_count=4"}
    assert _cli(["sweep", str(path), "--out", str(four), "--quiet"], env=flags).wait(timeout=600) == 0
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
    spec = """
[optimize]
objective = "final_value"
variables = ["toy.rate"]
bounds = {"toy.rate" = [0.0, 5.0]}
constraints = {final_value = {upper = 1.5}}
n_starts = 2
steps = 40
sweep_samples = 16
chunk_size = 8
"""
    out = tmp_path / "opt"
    assert main(["optimize", str(_config(tmp_path, spec)), "--out", str(out), "--quiet"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["optimum"]["toy.rate"] == pytest.approx(np.log(2.0 / 1.5), rel=1e-5)
    assert summary["optimizer_not_beaten_by_sweep"] and summary["nan_gradient_steps"] == 0
    assert main(["run", str(out / "optimum.toml"), "--out", str(tmp_path / "again")]) == 0


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
