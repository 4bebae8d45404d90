"""Library use starts warm: with ``diffspace.enable_cache()``, ``diffspace.simulate``,
``diffspace.metric_gradient`` and the user's own ``jax.jit(jax.grad(f))`` and ``jax.jit(jax.vmap(jax.grad(f)))``
of a function built on ``diffspace.metrics`` store their traced programs, and a second Python session runs them
without tracing the simulation (the scenario's ``simulate`` is replaced by one that raises in that session) and
gives the same numbers. Inside a caller's ``jit``, ``simulate`` and ``metric_gradient`` fall back to the ordinary
traced functions."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jax
import pytest

import diffspace
from diffspace.core.status import ConfigError
from diffspace.design import stored

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ["configs/free_floating.toml", ["simulation.t_final_s=0.5"]]
SESSION = f"""
import json, sys
import diffspace
diffspace.enable_cache()
scenario = diffspace.load_scenario({CONFIG[0]!r}, {CONFIG[1]!r})
if sys.argv[1] == "warm":  # nothing may be traced again: the stored programs are read back
    type(scenario).simulate = lambda self, params: (_ for _ in ()).throw(AssertionError("traced again"))
outcome = diffspace.simulate(scenario, {{"motion.torque_period_s": 3.0}})
result = diffspace.metric_gradient(scenario, "end_effector_displacement_m", {{"motion.torque_period_s": 3.0}})
import jax, jax.numpy as jnp
def displacement(period):  # the user's own function, built on diffspace.metrics
    return diffspace.metrics(scenario, {{"motion.torque_period_s": period}})["end_effector_displacement_m"]
user = jax.jit(jax.grad(displacement))(3.0)
batch = jax.jit(jax.vmap(jax.grad(displacement)))(jnp.array([2.5, 3.0]))
print(json.dumps({{"status": int(outcome.status), "gradient_status": int(result.status), "value": float(result.value),
                  "grad": float(result.gradient["motion.torque_period_s"]), "user_grad": float(user),
                  "batch": [float(x) for x in batch]}}))
"""


def _session(mode: str, cache: Path) -> dict:
    env = {**os.environ, "DIFFSPACE_CACHE_DIR": str(cache)}
    env.pop("DIFFSPACE_NO_CACHE", None)
    done = subprocess.run([sys.executable, "-c", SESSION, mode], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=400)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.timeout(900)
def test_second_session_traces_nothing_and_agrees(tmp_path):
    cold = _session("cold", tmp_path / "cache")
    assert list((tmp_path / "cache" / "traced").glob("*.program")), "no traced program was stored"
    warm = _session("warm", tmp_path / "cache")
    assert warm == cold and cold["status"] == cold["gradient_status"] == 0
    assert cold["grad"] != 0.0
    # the user's own jit(grad) and jit(vmap(grad)) through diffspace.metrics: the same gradient, and in the warm
    # session (where tracing the simulation raises) they ran from the stored programs
    assert cold["user_grad"] == pytest.approx(cold["grad"], rel=1e-10)
    assert cold["batch"][1] == pytest.approx(cold["grad"], rel=1e-10) and cold["batch"][0] != cold["batch"][1]


@pytest.mark.timeout(600)
def test_inside_jit_falls_back_and_bad_names_are_config_errors(tmp_path, monkeypatch):
    monkeypatch.setattr(stored, "_DIRECTORY", tmp_path / "traced")
    scenario = diffspace.load_scenario(CONFIG[0], CONFIG[1])
    key = "motion.torque_period_s"
    eager = diffspace.metric_gradient(scenario, "end_effector_displacement_m", {key: 3.0})
    traced = jax.jit(lambda period: diffspace.metric_gradient(scenario, "end_effector_displacement_m",
                                                              {key: period}))(3.0)
    assert float(traced.value) == pytest.approx(float(eager.value), rel=1e-12)
    assert float(traced.gradient[key]) == pytest.approx(float(eager.gradient[key]), rel=1e-10)
    assert int(traced.status) == int(eager.status) == 0
    with pytest.raises(ConfigError, match="not one of free_floating's metrics"):
        diffspace.metric_gradient(scenario, "no_such_metric_m", {key: 3.0})
    with pytest.raises(ConfigError, match="no_such.key"):
        diffspace.simulate(scenario, {"no_such.key": 1.0})
