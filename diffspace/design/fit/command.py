r"""``diffspace fit``: identify design variables of any scenario from measured data by least squares.

``[fit]`` table::

    parameters = ["friction.viscous_N_m_s_rad", "friction.coulomb_N_m"]   # design-variable keys
    initial = {"friction.viscous_N_m_s_rad" = 4.8}                        # optional start values
    bounds = {"friction.viscous_N_m_s_rad" = [1.0, 20.0]}                 # optional, narrows the range
    initial_grid = true      # start from the best point of a coarse batched grid (rugged costs)
    max_iter = 30

The data (``scenario.read_data``) give, per experiment row, the conditions that were set (config keys, e.g.
the attitude or the impact speed) and the measured metrics with their scales. The residual of row
:math:`i` and metric :math:`k` is :math:`r_{ik} = (m_k(\theta; c_i) - y_{ik}) / \sigma_{ik}`; the rows are
independent simulations, so the Jacobian is built row by row with reverse-mode passes batched over the rows
(far cheaper than differentiating the stacked residual vector). Levenberg-Marquardt
(:func:`~diffspace.design.fit.least_squares.least_squares`) works on bounded coordinates (logit of the design
space's range, on ``log`` for log-scaled variables), so the estimate always lies in the allowed range and a
parameter pinned at a bound is reported as such (``converged: false``, ``at_bound``), never as converged.

Why our own LM rather than ``optimistix.LevenbergMarquardt``: the row-wise reverse-mode Jacobian above
(Optimistix builds ``J`` by forward mode, which ``RecursiveCheckpointAdjoint`` solves do not support, or by
one reverse pass per residual), the covariance and standard errors at the optimum, and a host loop that
reports progress and never recompiles between iterations.
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import jax
import jax.numpy as jnp
import numpy as np

from ...core.status import ConfigError, SolverFailure, failed
from ...scenarios import AbstractScenario, FitData, Parameter
from .. import cases as cs
from ..progress import Spinner
from .least_squares import FitResult, least_squares

_OPTIONS = {"parameters", "initial", "bounds", "initial_grid", "max_iter"}
GRID_POINTS = 5


def parse_fit(scenario: AbstractScenario, table: dict, raw: dict) -> tuple[list[Parameter], dict, dict]:
    """Fitted parameters, start values (config units) and options from a ``[fit]`` table."""
    unknown = sorted(set(table) - _OPTIONS)
    if unknown:
        raise ConfigError(f"fit.{unknown[0]}: unknown key (known: {', '.join(sorted(_OPTIONS))})")
    keys = table.get("parameters")
    if not isinstance(keys, list) or not keys or not all(isinstance(k, str) for k in keys) or len(set(keys)) != len(keys):
        raise ConfigError("fit.parameters: expected a non-empty list of distinct design-variable keys")
    params = [_bounded(scenario.parameter(k), table.get("bounds", {})) for k in keys]
    unknown_bounds = [k for k in table.get("bounds", {}) if k not in keys]
    if unknown_bounds:
        raise ConfigError(f"fit.bounds.{unknown_bounds[0]}: not one of fit.parameters")
    given = table.get("initial", {})
    initial = {}
    for p in params:
        value = given.get(p.key)
        if value is None:
            try:
                value = cs.get_key(raw, p.key)
            except KeyError:
                value = math.sqrt(p.lower * p.upper) if p.log else 0.5 * (p.lower + p.upper)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not p.lower < value < p.upper:
            raise ConfigError(f"fit.initial.{p.key}: start value {value!r} must lie strictly inside "
                              f"({p.lower:g}, {p.upper:g}) {p.unit}")
        initial[p.key] = float(value)
    options = {"initial_grid": bool(table.get("initial_grid", False)), "max_iter": int(table.get("max_iter", 30))}
    return params, initial, options


def _bounded(p: Parameter, bounds: dict) -> Parameter:
    if p.key not in bounds:
        return p
    b = bounds[p.key]
    if not (isinstance(b, list) and len(b) == 2 and all(isinstance(x, (int, float)) for x in b)
            and p.lower <= b[0] < b[1] <= p.upper and (not p.log or b[0] > 0)):
        raise ConfigError(f"fit.bounds.{p.key}: expected [lower, upper] inside [{p.lower:g}, {p.upper:g}] {p.unit}")
    return dataclasses.replace(p, lower=float(b[0]), upper=float(b[1]))


def _transform(p: Parameter):
    return ("loglogit" if p.log else "logit", p.lower, p.upper)


class _Model:
    """Row predictions of the measured metrics and their row-wise Jacobian."""

    def __init__(self, scenario: AbstractScenario, data: FitData, keys: list[str]):
        self.scenario, self.keys, self.names = scenario, keys, list(data.measured)
        self.conditions = {k: jnp.asarray(v, float) for k, v in data.conditions.items()}
        self.measured = {k: jnp.asarray(v, float) for k, v in data.measured.items()}
        self.sigma = {k: jnp.asarray(v, float) for k, v in data.sigma.items()}
        self.predict = jax.jit(jax.vmap(self._row, in_axes=(None, 0)))
        self.row_jacobian = jax.jit(jax.vmap(jax.jacrev(self._row), in_axes=(None, 0)))

    def _row(self, params: dict, conditions: dict) -> dict:
        # Reverse mode through the solves (the derivative of the very program ``predict`` runs), not
        # design_metrics' forward-mode rule. The impact band where the two once disagreed (c ~ 0.9905-0.9995:
        # a mode flip at the force peak, fixed by integrate.EXTREMUM_MARGIN) is gone; the fit tests have
        # been validated with reverse mode only.
        m = self.scenario.metrics(self.scenario.with_design(self.scenario.params, {**conditions, **params}))
        ok = ~failed(m["status"])
        return {k: jnp.where(ok, m[k], jnp.nan) for k in self.names}

    def residuals(self, params: dict):
        pred = self.predict(params, self.conditions)
        return jnp.concatenate([(pred[k] - self.measured[k]) / self.sigma[k] for k in self.names])

    def jacobian(self, params: dict):
        per_row = self.row_jacobian(params, self.conditions)
        return jnp.concatenate([jnp.stack([per_row[k][p] for p in self.keys], axis=1) / self.sigma[k][:, None]
                                for k in self.names])


def _grid_start(model: _Model, params: list[Parameter], initial: dict) -> dict:
    """Best point of a coarse grid (``GRID_POINTS`` per parameter, log-spaced for log variables), one batch."""
    axes = [np.geomspace(p.lower, p.upper, GRID_POINTS + 2)[1:-1] if p.log
            else np.linspace(p.lower, p.upper, GRID_POINTS + 2)[1:-1] for p in params]
    points = np.array(list(itertools.product(*axes)))
    cost = jax.jit(jax.vmap(lambda x: jnp.sum(model.residuals(dict(zip(model.keys, x))) ** 2)))
    costs = np.asarray(cost(jnp.asarray(points)))
    costs = np.where(np.isfinite(costs), costs, np.inf)
    if not np.isfinite(costs).any():
        return initial
    return {k: float(v) for k, v in zip(model.keys, points[int(np.argmin(costs))])}


def run_fit(scenario: AbstractScenario, data: FitData, params: list[Parameter], initial: dict,
            options: dict, progress: bool = True) -> tuple[FitResult, dict]:
    """Least-squares estimate; returns the LM result and the predictions at the optimum (per metric, per row).
    ``progress``: a spinner on stderr naming each stage (grid start, compile and iterations, predictions)."""
    keys = [p.key for p in params]
    overlap = [k for k in keys if k in data.conditions]
    if overlap:
        raise ConfigError(f"fit.parameters: {overlap[0]} is set per row by the data; it cannot be fitted")
    n_obs = sum(len(v) for v in data.measured.values())
    if n_obs < len(keys):
        raise ConfigError(f"fit: {n_obs} measurements cannot identify {len(keys)} parameters")
    model = _Model(scenario, data, keys)
    with Spinner(f"{scenario.name} fit", progress) as spin:
        if options["initial_grid"]:
            spin.compile_stage(f"the start grid's batched cost ({GRID_POINTS ** len(keys)} points)")
            initial = _grid_start(model, params, initial)
        spin.compile_stage(f"the residuals and row Jacobians of {data.rows} experiments",
                           running=f"Levenberg-Marquardt (at most {options['max_iter']} iterations)")
        try:
            result = least_squares(model.residuals, initial, {p.key: _transform(p) for p in params},
                                   max_iter=options["max_iter"], jacobian=model.jacobian,
                                   absolute_sigma=data.absolute_sigma)
        except ValueError as err:
            raise SolverFailure(f"fit: {err} (start {initial})") from None
        spin.compile_stage("the fitted model's predictions")
        predicted = {k: np.asarray(v) for k, v in model.predict(result.params, model.conditions).items()}
    return result, predicted
