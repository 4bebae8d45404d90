"""`diffspace.metrics` on every scenario: with the store on, the user's own ``jax.jit(jax.grad(f))`` and
``jax.jit(jax.vmap(jax.grad(f)))`` of the headline metric give the gradients of ``scenario.metrics`` traced
directly (event-driven solves, contact and rope solvers, constrained integrators, fixed-step schemes), and the
statuses pass through."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import diffspace
from diffspace.scenarios import REGISTRY, load_scenario

from .test_conformance import ROOT, SHORT


@pytest.mark.slow  # six compiles per scenario (1-5 min each); the fast suite checks the mechanism on a toy
@pytest.mark.timeout(1800)  # (test_composable) and across processes on free_floating (test_library_warm)
@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_user_gradients_through_the_stored_programs_are_the_traced_ones(name, program_store):
    config, overrides = SHORT[name]
    scenario = load_scenario(ROOT / "configs" / config, overrides)
    metric, key = scenario.headline
    x0 = float(scenario.design_values()[key])
    parameter = scenario.parameter(key)
    points = jnp.array([x0, x0 + 0.01 * (parameter.upper - parameter.lower)])

    def stored_metrics(x):
        return diffspace.metrics(scenario, {key: x})

    def plain_metrics(x):
        return scenario.metrics(scenario.with_design(scenario.params, {key: x}))

    for metrics in (stored_metrics, plain_metrics):
        metrics.gradient = jax.jit(jax.grad(lambda x, m=metrics: m(x)[metric]))(points[0])
        metrics.batch = jax.jit(jax.vmap(jax.value_and_grad(lambda x, m=metrics: m(x)[metric])))(points)
        metrics.status = jax.jit(jax.vmap(lambda x, m=metrics: m(x)["status"]))(points)
    assert list(program_store.glob("*.program")), "nothing was stored"
    assert np.isfinite(float(plain_metrics.gradient)) and float(plain_metrics.gradient) != 0.0
    assert float(stored_metrics.gradient) == pytest.approx(float(plain_metrics.gradient), rel=1e-9)
    for got, want in zip(stored_metrics.batch, plain_metrics.batch):
        np.testing.assert_allclose(got, want, rtol=1e-9)
    np.testing.assert_array_equal(stored_metrics.status, plain_metrics.status)
