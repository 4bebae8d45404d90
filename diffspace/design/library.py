"""Warm-starting entry points for Python sessions: a scenario's simulation, its metrics and a metric's gradient
with respect to design keys, kept as stored traced programs.

With `diffspace.enable_cache()` on, the first session traces, exports and compiles these programs; a later
session with the same diffspace sources, library versions, scenario configuration (its static part) and array
shapes reads the traced programs from the store and the compiled ones from JAX's persistent cache, skipping both
tracing and compiling the simulation.

- `simulate` is a stored program (`diffspace.design.stored`) for calls from Python with concrete values; inside
  a user's `jit` / `grad` / `vmap` it falls back to the ordinary traced function.
- `metrics` keeps a forward program and derivative programs (`diffspace.design.composable`) and composes with
  the user's own `jax.grad`, `jax.jit` and `jax.vmap`: the user's function around it is traced in every session
  (its code is not in the store's key), but that is a handful of operations. A gradient with respect to up to
  `FORWARD_MODE_MAX_INPUTS` design numbers runs one program that gives the metrics and their Jacobian's columns
  by forward mode (the scenario's solves differentiated by `diffrax.ForwardMode`), more by reverse mode.
- `metric_gradient` is `jax.value_and_grad` of `metrics`, so it shares those programs.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float, Int

from ..core.status import ConfigError
from ..scenarios import AbstractOutcome, AbstractScenario
from .composable import stored_composable
from .stored import stored_jit


@stored_jit
def _simulate(scenario: AbstractScenario, design: dict[str, Array]):
    return scenario.simulate(scenario.with_design(scenario.params, design))


def _scenario_metrics(scenario: AbstractScenario, design: dict[str, Array]) -> dict[str, Array]:
    return scenario.metrics(scenario.with_design(scenario.params, design))


# a gradient with respect to a few design keys by forward mode (`diffspace.design.composable`)
_metrics = stored_composable(_scenario_metrics, forward_context=lambda scenario: scenario.differentiated_by("forward"))


class MetricGradient(eqx.Module):
    """A design metric at one design, its gradient and the run's status (use the numbers only where the status
    is not a failure: `diffspace.Status(int(status)).failed`)."""

    value: Float[Array, ""]  # the metric, SI (its unit in its name)
    gradient: dict[str, Float[Array, ""]]  # d value / d key, per config unit of each design key
    status: Int[Array, ""]  # the run's `diffspace.Status` code


@stored_jit  # stored: a warm session traces nothing; compiled with diffspace's own options
def _metric_gradient(scenario: AbstractScenario, design: dict[str, Array], metric: str) -> MetricGradient:
    def value(values):  # through the stored programs of `metrics`, shared with the user's own gradients
        metrics = _metrics(scenario, values)
        return metrics[metric], metrics["status"]

    (result, status), gradient = jax.value_and_grad(value, has_aux=True)(design)
    return MetricGradient(result, gradient, status)


def _design(scenario: AbstractScenario, design: dict | None) -> dict[str, Array]:
    """Design values as float64 arrays, each key checked against the scenario's design space."""
    for key in design or {}:
        scenario.parameter(key)  # ConfigError naming an unknown key and the known ones
    return {key: jnp.asarray(value, dtype=float) for key, value in (design or {}).items()}


def simulate(scenario: AbstractScenario, design: dict | None = None) -> AbstractOutcome:
    """One simulation of ``scenario``, with design keys replaced.

    Args:
        scenario: A scenario (`diffspace.load_scenario`).
        design: ``{config key: value}`` in config units (revolute joints in degrees), e.g.
            ``{"motion.torque_period_s": 3.0}``; ``None``: the config's own values.

    Returns:
        The scenario's outcome Module (its ``status`` field first to read), as ``scenario.simulate`` returns it.

    Raises:
        ConfigError: A key that is not a design variable of the scenario.
    """
    return _simulate(scenario, _design(scenario, design))


def metrics(scenario: AbstractScenario, design: dict | None = None) -> dict[str, Array]:
    """A scenario's design metrics at a design, for the user's own ``jax.grad``, ``jax.jit`` and ``jax.vmap``.

    With `diffspace.enable_cache` on, its forward and reverse programs are stored
    (`diffspace.design.composable`): a later session's ``jax.jit(jax.grad(f))`` of a function ``f`` built on it
    traces only ``f``'s own few operations, and its compile hits the persistent cache. A gradient with respect
    to up to four design numbers is computed by forward mode inside the rule; the caller's own transformation
    must be reverse mode (``grad``, ``vjp``): for ``jax.jvp`` / ``jax.jacfwd`` or second derivatives call
    ``scenario.metrics`` itself.

    Args:
        scenario: A scenario (`diffspace.load_scenario`).
        design: ``{config key: value}`` in config units (values may be traced); ``None``: the config's own values.

    Returns:
        ``scenario.metrics`` of the design: metric name (SI, unit-suffixed) -> value, with ``"status"``.

    Raises:
        ConfigError: A key that is not a design variable of the scenario.
    """
    return _metrics(scenario, _design(scenario, design))


def metric_gradient(scenario: AbstractScenario, metric: str, design: dict) -> MetricGradient:
    """A design metric and its gradient with respect to design keys (forward mode through the simulation for up
    to four keys, else reverse mode: ``jax.value_and_grad`` of `metrics`).

    Args:
        scenario: A scenario (`diffspace.load_scenario`).
        metric: One of ``scenario.metrics_names()`` (SI, its unit in its name), e.g. ``"stable_velocity_m_s"``.
        design: ``{config key: value}`` in config units: the point of the gradient and the keys it is taken
            with respect to.

    Returns:
        A `MetricGradient`: ``value``, ``gradient`` (``{key: d value / d key}``, per config unit of each key)
        and the run's ``status``.

    Raises:
        ConfigError: An unknown metric or design key.
    """
    if not design:
        raise ConfigError("metric_gradient: give at least one design key to differentiate with respect to")
    values = _design(scenario, design)
    try:
        return _metric_gradient(scenario, values, metric)
    except KeyError:  # checked only on failure: listing the names traces the simulation, which a warm call skips
        names = scenario.metrics_names()
        if metric in names:
            raise
        raise ConfigError(f"metric '{metric}' is not one of {scenario.name}'s metrics ({', '.join(names)})") from None
