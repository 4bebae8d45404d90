"""Campaign stage times: wall seconds per stage and the XLA compile seconds inside each, as JAX reports them."""

import time

import jax
import jax.numpy as jnp
import pytest

from diffspace.design.timing import StageTimes, time_line

pytestmark = pytest.mark.timeout(120)


def test_compile_seconds_belong_to_the_stage_that_compiled():
    times = StageTimes()

    def program(x):  # a fresh function: compiles here, whatever ran before
        return jnp.sin(x) @ jnp.cos(x).T + x.sum()

    with times.stage("simulations"):
        jax.jit(program)(jnp.ones((64, 64))).block_until_ready()
    with times.stage("statistics"):
        time.sleep(0.05)
    summary = times.summary()
    assert summary["simulations"]["compile_s"] > 0.0
    assert summary["simulations"]["compile_s"] <= summary["simulations"]["wall_s"]
    assert summary["statistics"] == {"wall_s": pytest.approx(summary["statistics"]["wall_s"]), "compile_s": 0.0}
    assert summary["statistics"]["wall_s"] >= 0.05
    assert summary["total_s"] == pytest.approx(summary["simulations"]["wall_s"] + summary["statistics"]["wall_s"])
    line = time_line(summary)
    assert line.startswith("time: simulations ") and ", statistics " in line and line.endswith(" s")
