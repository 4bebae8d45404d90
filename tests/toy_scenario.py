"""A toy scenario for the design-layer and command-line tests: exponential decay ``x(t) = A exp(-r t)``.

Registered by the tests under the name "toy" (selector section ``[toy]``); ``python -c RUNNER`` runs the
command line in a subprocess with it registered. ``ProbedToy`` (registered as "probed_toy", selected by
``scenario = "probed_toy"``) observes the decay at a probe time that each experiment sets, so that its fits
identify the rate and the amplitude together.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import ClassVar

import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float, Int

from diffspace.io.config import Field, Schema
from diffspace.io.results import write_timeseries
from diffspace.scenarios import AbstractOutcome, AbstractParams, AbstractScenario, FitData, Parameter
from diffspace.core.status import Status, flag

ROOT = Path(__file__).resolve().parents[1]
ENTRY = ("toy", f"{__name__}:Toy")  # tests.toy_scenario, imported from the repository root
PROBED_ENTRY = ("toy", f"{__name__}:ProbedToy")
RUNNER = f"""
import signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)  # a terminal's Ctrl-C, also under a background job
from diffspace import scenarios
scenarios.REGISTRY["toy"] = {ENTRY!r}
from diffspace.app.cli import main
sys.exit(main(sys.argv[1:]))
"""


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
        return Schema({"toy": {"rate": Field("float", 1.0), "amplitude": Field("float", 2.0),  # any real rate (dispersed by a normal)
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
        return (Parameter("toy.rate", 0.0, 20.0, "1/s", "rate"), Parameter("toy.amplitude", -10.0, 10.0, "-", "amplitude"))

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


class ProbedParams(ToyParams):
    probe: Float[Array, ""]  # s


class ProbedToy(Toy):
    """The toy observed at a probe time ``t`` (design key ``toy.probe_s``, set per experiment by the data):
    ``probed_value = A exp(-r t)``. Data: CSV columns ``probe_s, probed_value, sigma`` (absolute noise)."""

    @classmethod
    def schema(cls) -> Schema:
        return Schema({"toy": {**Toy.schema().sections["toy"], "probe_s": Field("float", 0.5, gt=0.0)}})

    @classmethod
    def from_config(cls, cfg: dict) -> "ProbedToy":
        t = cfg["toy"]
        params = ProbedParams(jnp.asarray(t["rate"]), jnp.asarray(t["amplitude"]), jnp.asarray(t["probe_s"]))
        return cls(params=params, horizon=jnp.asarray(t["horizon_s"]))

    def design_space(self):
        return super().design_space() + (Parameter("toy.probe_s", 0.01, 10.0, "s", "probe"),)

    def metrics(self, params: ProbedParams) -> dict:
        return super().metrics(params) | {"probed_value": params.amplitude * jnp.exp(-params.rate * params.probe)}

    def read_data(self, path: Path) -> FitData:
        rows = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
        return FitData({"toy.probe_s": rows[:, 0]}, {"probed_value": rows[:, 1]}, {"probed_value": rows[:, 2]})


def constrained_optimize_table(steps: int, sweep_samples: int, chunk_size: int) -> str:
    """The ``[optimize]`` table of the toy's constrained problem: maximise x(T) = A exp(-r) over r in [0, 5]
    subject to x(T) <= 1.5 (optimum on the constraint, r = ln(A / 1.5))."""
    return f"""
[optimize]
objective = "final_value"
variables = ["toy.rate"]
bounds = {{"toy.rate" = [0.0, 5.0]}}
constraints = {{final_value = {{upper = 1.5}}}}
n_starts = 2
steps = {steps}
sweep_samples = {sweep_samples}
chunk_size = {chunk_size}
"""


def cli_process(args: list[str], env: dict | None = None, **kwargs) -> subprocess.Popen:
    """``diffspace ARGS`` in a subprocess with the toy scenario registered (``python -c`` run in the repository
    root, which it imports ``tests.toy_scenario`` from as the test session does)."""
    return subprocess.Popen([sys.executable, "-c", RUNNER, *args], env={**os.environ, **(env or {})}, cwd=ROOT,
                            **kwargs)
