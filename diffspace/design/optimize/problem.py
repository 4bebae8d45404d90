r"""A design problem on top of a scenario: variables (config keys) in a box, an objective and constraints.

``[optimize]`` table::

    objective = "stable_velocity_m_s"      # a metric, or a weighted sum {metric = weight, ...}
    direction = "maximize"                 # or "minimize"
    variables = ["ejection.attitude[1]"]   # design variables (default: every continuous one)
    bounds = {"ejection.attitude[1]" = [-60.0, 60.0]}   # optional, narrows the scenario's bounds
    choices = {"strike.node" = [5, 10, 16]}             # optional discrete design variables
    constraints = {peak_force_N = {upper = 60.0}}       # metric bounds
    # under uncertainty ([optimize.uncertainty], :mod:`.robust`): statistics over dispersed runs
    statistic = "mean"                                  # of the objective: mean, std, mean+3std, p99.865, cvar0.99
    # constraints = {peak_force_N = {upper = 60.0, statistic = "p99.865"}}, or {upper = 60.0, probability = 1e-3}
    # outcome probabilities: {"outcome.captured" = {lower = 1.0}}; for one (nominal) design the probability
    # is 0 or 1, so a lower bound above 0 requires the outcome and an upper bound below 1 forbids it
    n_starts = 4, steps = 30, learning_rate = 0.1, barrier_weight = 1e-4
    sweep_samples = 128, chunk_size = 64, seed = 0, polish = true

Variables are optimised in unconstrained coordinates ``z``: ``x = lo + (hi - lo) sigmoid(z)`` (on
``log x`` for log-scaled variables), so every iterate stays in the box. Constraints ``g_i <= 0`` with
``g = m / upper - 1`` or ``1 - m / lower`` (or ``m - bound`` for a zero bound) enter the loss through the
extended log barrier :math:`B(g) = -\log(-g)` for :math:`g \le -\varepsilon`, continued by its second-order
Taylor expansion beyond (a finite penalty and gradient for infeasible points):

.. math:: L(z) = \mp J(x(z)) / J_{ref} + \mu \sum_i B(g_i(x(z))).

A physical outcome (captured, rebounded, ...) is discrete: a bound on an outcome's probability
``P(o) = 1{outcome = o}`` of a single design is a feasibility condition (a design outside it is never
kept as a candidate), not a barrier term, since its derivative is zero wherever it exists. To steer the
iterates towards an outcome's boundary, also bound the continuous metric that decides it (for capture,
``separation_speed_m_s`` against the capture speed).
"""

from __future__ import annotations

import dataclasses
import math

import jax
import jax.numpy as jnp
import numpy as np

from ...core.status import ConfigError, failed
from ...scenarios import AbstractScenario, Parameter
from ..montecarlo.spec import MonteCarloSpec
from .robust import Uncertainty, parse_problem_statistics, parse_uncertainty
from .robust_statistics import Statistic

BARRIER_EPS = 1e-3
_OPTIONS = {"objective", "direction", "variables", "bounds", "choices", "constraints", "n_starts", "steps",
            "learning_rate", "barrier_weight", "sweep_samples", "chunk_size", "seed", "polish", "statistic",
            "uncertainty"}
_DEFAULTS = dict(n_starts=4, steps=30, learning_rate=0.1, barrier_weight=1e-4, sweep_samples=128, chunk_size=64,
                 seed=0, polish=True)


def barrier(g):
    """Extended log barrier: ``-log(-g)`` for ``g <= -eps``, its second-order Taylor continuation beyond."""
    safe = jnp.minimum(g, -BARRIER_EPS)
    d = g + BARRIER_EPS
    return jnp.where(g <= -BARRIER_EPS, -jnp.log(-safe),
                     -jnp.log(BARRIER_EPS) + d / BARRIER_EPS + 0.5 * (d / BARRIER_EPS) ** 2)


@dataclasses.dataclass(frozen=True)
class Constraint:
    metric: str
    lower: float | None = None
    upper: float | None = None
    statistic: Statistic = Statistic("mean", "mean")  # over dispersed runs (a robust problem only)
    probability: float | None = None  # robust: the allowed probability of leaving the bounds, instead of a statistic

    def values(self, m: dict):
        """``g`` values (<= 0 feasible) of this constraint's bounds."""
        out = []
        for bound, sign in ((self.upper, 1.0), (self.lower, -1.0)):
            if bound is not None:
                scale = abs(bound) if bound != 0 else 1.0
                out.append(sign * (m[self.metric] - bound) / scale)
        return out


OUTCOME_PREFIX = "outcome."


@dataclasses.dataclass(frozen=True)
class OutcomeBound:
    """Bounds on the probability of one declared outcome (``index`` into the scenario's ``outcomes``)."""

    name: str
    index: int
    lower: float | None = None
    upper: float | None = None

    def allows(self, probability):
        """Whether ``probability`` (NumPy or JAX) lies within the bounds."""
        low = True if self.lower is None else probability >= self.lower
        return low & (True if self.upper is None else probability <= self.upper)

    def met(self, code):
        """Whether a design ending in outcome ``code`` meets the bounds (its probability is 0 or 1)."""
        return jnp.asarray(self.allows(jnp.asarray(code == self.index, float)))


@dataclasses.dataclass(frozen=True)
class Problem:
    variables: tuple[Parameter, ...]
    weights: dict[str, float]  # objective = sum of weight * metric, maximised
    constraints: tuple[Constraint, ...]
    choice_key: str | None
    choices: tuple
    options: dict
    direction: str = "maximize"
    outcome_bounds: tuple[OutcomeBound, ...] = ()
    statistic: Statistic = Statistic("mean", "mean")  # of the objective over dispersed runs (robust only)
    uncertainty: Uncertainty | None = None  # a robust problem's dispersed runs (:mod:`.robust`)

    def nominal(self) -> Problem:
        """The same problem on the nominal design alone (statistics ignored)."""
        return dataclasses.replace(self, uncertainty=None)

    @property
    def sign(self) -> float:
        """+1 when the user maximises; the internal objective is always maximised."""
        return 1.0 if self.direction == "maximize" else -1.0

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(p.key for p in self.variables)

    def _span(self):
        lo = np.array([math.log(p.lower) if p.log else p.lower for p in self.variables])
        hi = np.array([math.log(p.upper) if p.log else p.upper for p in self.variables])
        return lo, hi

    def to_design(self, z) -> dict:
        """Unconstrained ``z`` (one per variable) -> design values (config units), inside the box."""
        lo, hi = self._span()
        u = jnp.asarray(lo) + jnp.asarray(hi - lo) * jax.nn.sigmoid(z)
        return {p.key: (jnp.exp(u[i]) if p.log else u[i]) for i, p in enumerate(self.variables)}

    def to_z(self, x: np.ndarray) -> np.ndarray:
        lo, hi = self._span()
        u = np.array([math.log(v) if p.log else v for v, p in zip(x, self.variables)])
        s = np.clip((u - lo) / (hi - lo), 1e-6, 1 - 1e-6)
        return np.log(s / (1 - s))

    def clip(self, design: dict | None) -> np.ndarray | None:
        """A design dict (config units) as a point of the box, clipped into it; ``None`` passes through."""
        if design is None:
            return None
        return np.array([min(max(design[p.key], p.lower), p.upper) for p in self.variables])

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """Uniform points of the box (on the log scale for log variables), config units, shape (n, k)."""
        lo, hi = self._span()
        u = rng.uniform(lo, hi, size=(n, len(self.variables)))
        return np.where([p.log for p in self.variables], np.exp(u), u)

    def objective(self, m: dict):
        return sum(w * m[name] for name, w in self.weights.items())

    def g(self, m: dict):
        parts = [g for c in self.constraints for g in c.values(m)]
        return jnp.stack(parts) if parts else jnp.zeros(0)

    def usable(self, m: dict, status) -> jax.Array:
        """The run did not fail and every metric the problem reads is finite."""
        names = list(self.weights) + [c.metric for c in self.constraints]
        finite = jnp.all(jnp.stack([jnp.isfinite(m[n]) for n in names]))
        return finite & ~failed(status)

    def outcome_met(self, m: dict) -> jax.Array:
        """The run's outcome meets every outcome bound (True without bounds)."""
        met = [b.met(m["outcome"]) for b in self.outcome_bounds]
        return jnp.all(jnp.stack(met)) if met else jnp.asarray(True)


def _number(table: dict, key: str, where: str, positive: bool = False) -> float:
    value = table.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ConfigError(f"{where}.{key}: expected a finite number, got {value!r}")
    if positive and not value > 0:
        raise ConfigError(f"{where}.{key}: must be > 0, got {value}")
    return float(value)


def _variables(scenario: AbstractScenario, table: dict) -> tuple[Parameter, ...]:
    continuous = [p for p in scenario.design_space() if not p.integer]
    keys = table.get("variables", [p.key for p in continuous])
    if not isinstance(keys, list) or not keys or not all(isinstance(k, str) for k in keys):
        raise ConfigError("optimize.variables: expected a non-empty list of design-variable keys")
    variables = []
    bounds = table.get("bounds", {})
    for key in keys:
        p = scenario.parameter(key)
        if p.integer:
            raise ConfigError(f"optimize.variables: {key} is discrete; list its values in optimize.choices")
        if key in bounds:
            b = bounds[key]
            if not (isinstance(b, list) and len(b) == 2 and all(isinstance(x, (int, float)) for x in b)):
                raise ConfigError(f"optimize.bounds.{key}: expected [lower, upper]")
            if not p.lower <= b[0] < b[1] <= p.upper:
                raise ConfigError(f"optimize.bounds.{key}: [{b[0]:g}, {b[1]:g}] must lie in the scenario's "
                                  f"[{p.lower:g}, {p.upper:g}] with lower < upper")
            p = dataclasses.replace(p, lower=float(b[0]), upper=float(b[1]))
        variables.append(p)
    unknown = [k for k in bounds if k not in keys]
    if unknown:
        raise ConfigError(f"optimize.bounds.{unknown[0]}: not one of optimize.variables")
    return tuple(variables)


def _choices(scenario: AbstractScenario, table: dict) -> tuple[str | None, tuple]:
    choices = table.get("choices", {})
    if not choices:
        return None, (None,)
    if not isinstance(choices, dict) or len(choices) != 1:
        raise ConfigError("optimize.choices: expected one discrete key with its list of values")
    (key, values), = choices.items()
    p = scenario.parameter(key)
    if not isinstance(values, list) or not values or not all(isinstance(v, (int, float)) for v in values):
        raise ConfigError(f"optimize.choices.{key}: expected a non-empty list of numbers")
    bad = [v for v in values if not p.lower <= v <= p.upper]
    if bad:
        raise ConfigError(f"optimize.choices.{key}: {bad} outside [{p.lower:g}, {p.upper:g}]")
    return key, tuple(values)


def _constraints(scenario: AbstractScenario, table: dict,
                 statistics: dict) -> tuple[tuple[Constraint, ...], tuple[OutcomeBound, ...]]:
    """Metric bounds (with their statistic over dispersed runs, ``statistics``) and outcome-probability bounds
    (keys ``outcome.<name>``, bounds in [0, 1])."""
    metrics, outcomes = [], []
    declared = type(scenario).outcomes
    for metric, spec in table.get("constraints", {}).items():
        where = f"optimize.constraints.{metric}"
        if not isinstance(spec, dict) or not {"lower", "upper"} & set(spec) \
                or set(spec) - {"lower", "upper", "statistic", "probability"}:
            raise ConfigError(f"{where}: expected {{upper = x}} and/or {{lower = x}} (under uncertainty also "
                              "statistic = \"p99.865\" or probability = 1e-3)")
        lower, upper = (_number(spec, k, where) if k in spec else None for k in ("lower", "upper"))
        if not metric.startswith(OUTCOME_PREFIX):
            metrics.append(Constraint(metric, lower, upper, *statistics[metric]))
            continue
        name = metric[len(OUTCOME_PREFIX):]
        if name not in declared:
            raise ConfigError(f"{where}: {scenario.name} has no outcome {name!r} "
                              f"(its outcomes: {', '.join(declared) or 'none'})")
        if any(b is not None and not 0.0 <= b <= 1.0 for b in (lower, upper)):
            raise ConfigError(f"{where}: an outcome's probability is bounded within [0, 1]")
        outcomes.append(OutcomeBound(name, declared.index(name), lower, upper))
    return tuple(metrics), tuple(outcomes)


def parse_problem(scenario: AbstractScenario, table: dict, dispersions: MonteCarloSpec | None = None) -> Problem:
    """Validate an ``[optimize]`` table against the scenario's design space and metrics; with an
    ``[optimize.uncertainty]`` table, over the dispersions of the config's ``[montecarlo]`` section
    (``dispersions``, means filled in)."""
    unknown = sorted(set(table) - _OPTIONS)
    if unknown:
        raise ConfigError(f"optimize.{unknown[0]}: unknown key (known: {', '.join(sorted(_OPTIONS))})")
    objective = table.get("objective")
    weights = {objective: 1.0} if isinstance(objective, str) else objective
    if not isinstance(weights, dict) or not weights or not all(
            isinstance(w, (int, float)) and not isinstance(w, bool) for w in weights.values()):
        raise ConfigError("optimize.objective: expected a metric name or a table {metric = weight}")
    direction = table.get("direction", "maximize")
    if direction not in ("maximize", "minimize"):
        raise ConfigError(f"optimize.direction: must be maximize or minimize; got {direction!r}")
    sign = 1.0 if direction == "maximize" else -1.0
    options = {**_DEFAULTS, **{k: table[k] for k in _DEFAULTS if k in table}}
    for key in ("n_starts", "steps", "sweep_samples", "chunk_size"):
        if not isinstance(options[key], int) or isinstance(options[key], bool) or options[key] < 1:
            raise ConfigError(f"optimize.{key}: expected a positive integer, got {options[key]!r}")
    for key in ("learning_rate", "barrier_weight"):
        _number(options, key, "optimize", positive=True)
    choice_key, choices = _choices(scenario, table)
    statistic, statistics = parse_problem_statistics(table, "uncertainty" in table)
    constraints, outcome_bounds = _constraints(scenario, table, statistics)
    problem = Problem(_variables(scenario, table), {k: sign * float(w) for k, w in weights.items()},
                      constraints, choice_key, choices, options, direction, outcome_bounds, statistic)
    _check_metrics(scenario, problem)
    if "uncertainty" in table:
        problem = parse_uncertainty(problem, table["uncertainty"], dispersions)
    return problem


def _check_metrics(scenario: AbstractScenario, problem: Problem) -> None:
    design = {p.key: jnp.asarray(0.5 * (p.lower + p.upper)) for p in problem.variables}
    if problem.choice_key:
        design[problem.choice_key] = jnp.asarray(float(problem.choices[0]))
    shapes = jax.eval_shape(lambda d: scenario.metrics(scenario.with_design(scenario.params, d)), design)
    names = list(problem.weights) + [c.metric for c in problem.constraints]
    unknown = [n for n in names if n not in shapes]
    if unknown:
        known = ", ".join(k for k in shapes if k != "status")
        raise ConfigError(f"optimize: unknown metric {unknown[0]} (known: {known})")
