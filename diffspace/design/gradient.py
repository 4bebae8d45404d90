r"""Metrics of a scenario at a design point, differentiated by forward mode inside a reverse-mode rule.

Every design command differentiates a scenario's metrics with respect to a few design variables (an
attitude angle, an approach speed, two contact constants): few inputs, several outputs. Reverse mode through
an adaptive, event-driven ODE solve traces the solve's linearisation and its transpose inside a
checkpointing loop, which on 2 cores compiles in 20-140 s. Forward mode (one Jacobian-vector product per
design variable, on a copy of the scenario whose solves use ``diffrax.ForwardMode``:
``scenario.differentiated_by("forward")``)
compiles 2-3x faster and, for up to ~4 variables, runs no slower.

:func:`design_metrics` is a custom-VJP function of the design dictionary. Its forward pass returns the
metrics and the Jacobian of every floating-point metric with respect to the differentiated design leaves,
column by column,

.. math:: J_{:,i} = \frac{\partial m}{\partial d}\, e_i \qquad (i = 1..n),

by ``lax.map`` over the unit directions ``e_i`` (:func:`jvp_columns`); the backward pass contracts the
cotangent with it (:func:`contract_columns`),
:math:`\bar d_i = \sum_m \bar m \cdot J_{m,i}`, where a metric whose cotangent is zero contributes nothing
even if its Jacobian is not finite (a failed run that a statistic excludes). ``jax.grad``, ``jax.jacrev`` and ``jax.vmap`` of
:func:`design_metrics` therefore work as usual. Only the design variables are differentiated: a traced and
differentiated scenario raises (differentiate ``scenario.metrics`` directly for that, in reverse mode).
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
from jax.flatten_util import ravel_pytree
from jaxtyping import Array

from ..scenarios import AbstractScenario


def _metrics(design: dict, scenario: AbstractScenario) -> dict:
    return scenario.metrics(scenario.with_design(scenario.params, design))


@eqx.filter_custom_vjp
def _design_metrics(design: dict, scenario: AbstractScenario) -> dict:
    return _metrics(design, scenario)


def _split(design: dict, perturbed: dict):
    """``(flat vector of the differentiated leaves, its inverse, the other leaves)``."""
    diff, rest = eqx.partition(design, perturbed)
    flat, unravel = ravel_pytree(diff)
    return flat, unravel, rest


def jvp_columns(f, x: Array, has_aux: bool = False):
    """``jax.jvp(f, (x,), (e_i,))`` for every unit direction ``e_i`` of the flat vector ``x``, stacked along a
    leading axis (the Jacobian's columns), by ``lax.map``: one program for every column, and no extra batch axis
    reaches the batched LAPACK solves, where jaxlib 0.10.2's CPU thread pool can deadlock. A single column is one
    JVP, without the loop."""
    def column(direction):
        return jax.jvp(f, (x,), (direction,), has_aux=has_aux)

    if x.size == 1:
        return jax.tree_util.tree_map(lambda y: y[None], column(jnp.ones_like(x)))
    return jax.lax.map(column, jnp.eye(x.size, dtype=x.dtype))


def contract_columns(columns: Array, cotangent: Array) -> Array:
    r""":math:`\bar d_i = \bar m \cdot J_{m,i}` for one metric's Jacobian columns ``(n, *shape)`` and its cotangent
    ``shape``. A zero cotangent contributes nothing even where the derivative is not finite (a failed run that a
    statistic excludes: the double-where pattern; 0 x NaN would poison the whole gradient)."""
    return jnp.tensordot(jnp.where(cotangent == 0, 0.0, columns), cotangent, axes=jnp.ndim(cotangent))


@_design_metrics.def_fwd
def _design_metrics_fwd(perturbed, design, scenario):
    flat, unravel, rest = _split(design, perturbed)

    forward = scenario.differentiated_by("forward")

    def split_metrics(x):
        metrics = _metrics(eqx.combine(unravel(x), rest), forward)
        return eqx.partition(metrics, eqx.is_inexact_array)

    (values, tangents, others) = jvp_columns(split_metrics, flat, has_aux=True)
    first = lambda tree: jax.tree_util.tree_map(lambda x: x[0], tree)  # noqa: E731  every column's primal
    return eqx.combine(first(values), first(others)), tangents


@_design_metrics.def_bwd
def _design_metrics_bwd(tangents, cotangent, perturbed, design, scenario):
    flat, unravel, _ = _split(design, perturbed)

    def term(tangent, ct):  # None: not a floating-point metric, or no cotangent flows into it
        return None if tangent is None or ct is None else contract_columns(tangent, ct)

    terms = jax.tree_util.tree_map(term, tangents, cotangent, is_leaf=lambda x: x is None)
    return unravel(sum(jax.tree_util.tree_leaves(terms), jnp.zeros_like(flat)))


def design_metrics(scenario: AbstractScenario, design: dict) -> dict:
    """Metrics of ``scenario`` with the design variables ``design`` applied; derivatives with respect to
    ``design`` by forward mode (module docstring)."""
    return _design_metrics(design, scenario)
