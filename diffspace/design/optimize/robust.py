r"""Optimisation under uncertainty: a design judged by statistics of its outputs over dispersed runs.

``[optimize.uncertainty]`` (its presence makes the problem robust)::

    samples = 256               # dispersed runs per evaluation: fixed draws, the same at every iteration
    seed = 0
    validation_samples = 4096   # fresh draws for the out-of-sample check of the optimum

The dispersions are those of the config's ``[montecarlo]`` section (hand-written, or taken from a fit with
``from_fit``). A dispersed key that is also a design variable is centred on the current design: run ``i`` takes
:math:`x + (\xi_i - \mu)` (a log-normal key :math:`x\,\xi_i/\mu`), where :math:`\xi_i` is its draw and
:math:`\mu` the dispersion's mean; any other dispersed key takes :math:`\xi_i`.

At a design :math:`x`, the ``n`` runs give the metrics :math:`m_i(x)` (forward-mode derivatives through each
simulation, :func:`~diffspace.design.gradient.design_metrics`; vmapped in batches of ``optimize.chunk_size``
runs, one after the other, so that memory stays bounded at any sample size), and the problem reads statistics of them
(:mod:`~diffspace.design.optimize.robust_statistics`): the objective :math:`S_0(J(m_1), .., J(m_n))` and, per
constraint, :math:`S_c(m_{c,1}, .., m_{c,n})` bounded as a nominal metric is (``g = S / upper - 1``), or a
probability of leaving the bound, :math:`g = P / P_{max} - 1`. Because the draws are fixed (common random numbers), the
statistics are smooth functions of :math:`x` and Adam, the barrier and the polish of
:mod:`~diffspace.design.optimize.command` work on them unchanged. A run that fails, or whose read metrics are not
finite, gets weight 0 in every statistic and its derivative is never formed (the double-``where`` pattern in
:mod:`~diffspace.design.optimize.robust_statistics` and in ``design_metrics``' backward pass); such runs are
counted, and a design where more than half of the runs fail is not usable.
"""

from __future__ import annotations

import dataclasses
import math

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ...core.status import ConfigError
from ...scenarios import AbstractScenario
from ..gradient import design_metrics
from ..montecarlo.spec import MonteCarloSpec
from .robust_statistics import Statistic, parse_statistic, smooth_exceedance

_OPTIONS = {"samples", "seed", "validation_samples"}
MIN_USABLE_SHARE = 0.5  # a design whose dispersed runs fail more often than this is not usable


@dataclasses.dataclass(frozen=True)
class Uncertainty:
    """The dispersed runs of a robust problem: the sampler (``spec``, means filled), the optimisation's fixed
    draws and the centres of the keys that are also design variables."""

    spec: MonteCarloSpec
    samples: int
    validation_samples: int
    centres: dict[str, float]  # key -> dispersion mean, for every dispersed key
    scaled: frozenset[str]  # log-normal keys (centred by ratio)

    @property
    def keys(self) -> tuple[str, ...]:
        return self.spec.input_keys

    def draws(self, validation: bool = False) -> np.ndarray:
        """The optimisation's draws (cases ``0..samples-1``) or the out-of-sample check's (the next
        ``validation_samples`` cases of the same stream, never seen by the optimiser); config units."""
        start, count = (self.samples, self.validation_samples) if validation else (0, self.samples)
        return self.spec.values(np.arange(start, start + count))

    def case_designs(self, design: dict, draws) -> dict:
        """Per run (leading axis), the design values: ``design`` with every dispersed key drawn (module text)."""
        n = np.shape(draws)[0]
        cases = {k: jnp.broadcast_to(jnp.asarray(v, float), (n,)) for k, v in design.items()}
        for j, key in enumerate(self.keys):
            draw = jnp.asarray(draws)[:, j]
            if key not in design:
                cases[key] = draw
            elif key in self.scaled:
                cases[key] = design[key] * draw / self.centres[key]
            else:
                cases[key] = design[key] + (draw - self.centres[key])
        return cases


class Assessment(eqx.Module):
    """A design as the optimiser sees it: objective (maximised), constraint values (``<= 0`` feasible),
    whether it is usable, whether its outcome bounds are met, and how many of its runs failed."""

    value: jax.Array
    g: jax.Array
    usable: jax.Array
    met: jax.Array
    failed_runs: jax.Array


def assess(problem, scenario: AbstractScenario, design: dict) -> Assessment:
    """The nominal design (one run) or, for a robust problem, the statistics over its dispersed runs."""
    if problem.uncertainty is None:
        m = design_metrics(scenario, design)
        return Assessment(problem.objective(m), problem.g(m), problem.usable(m, m["status"]),
                          problem.outcome_met(m), jnp.asarray(0))
    draws = problem.uncertainty.draws()
    runs = problem.uncertainty.case_designs(design, draws)  # in batches of chunk_size: bounded memory at any sample
    m = jax.lax.map(lambda d: design_metrics(scenario, d), runs, batch_size=problem.options["chunk_size"])
    weights = jax.vmap(problem.usable)(m, m["status"]).astype(float)
    statistics = run_statistics(problem, m, weights)
    usable = (jnp.sum(weights) >= MIN_USABLE_SHARE * draws.shape[0]) & jnp.isfinite(statistics.value) \
        & jnp.all(jnp.isfinite(statistics.g))
    return dataclasses.replace(statistics, usable=usable)


def statistics(problem, m: dict, weights) -> dict:
    """Every statistic the problem reads over runs with ``weights`` (1 usable, 0 excluded; bootstrap counts):
    ``objective`` (the user's sign) and, per constrained metric, its statistic or its smoothed probability of
    leaving the bounds."""
    out = {"objective": problem.statistic(problem.sign * problem.objective(m), weights)}
    for c in problem.constraints:
        if c.probability is None:
            out[c.metric] = c.statistic(m[c.metric], weights)
        else:
            out[c.metric] = sum(smooth_exceedance(m[c.metric], weights, bound, above) for bound, above in
                                ((c.upper, True), (c.lower, False)) if bound is not None)
    return out


def run_statistics(problem, m: dict, weights) -> Assessment:
    """The robust objective (maximised) and constraint values from the runs' metrics ``m`` (leading axis: runs)."""
    s = statistics(problem, m, weights)
    g = [g for c in problem.constraints for g in
         ([s[c.metric] / c.probability - 1.0] if c.probability is not None else c.values({c.metric: s[c.metric]}))]
    fractions = [jnp.sum(weights * (m["outcome"] == b.index)) / jnp.sum(weights) for b in problem.outcome_bounds]
    met = jnp.all(jnp.stack([jnp.asarray(b.allows(p)) for b, p in zip(problem.outcome_bounds, fractions)])) \
        if fractions else jnp.asarray(True)
    return Assessment(problem.sign * s["objective"], jnp.stack(g) if g else jnp.zeros(0), jnp.asarray(True), met,
                      jnp.sum(weights == 0))


def parse_uncertainty(problem, table: dict, spec: MonteCarloSpec | None):
    """``problem`` made robust by an ``[optimize.uncertainty]`` table over the dispersions of ``spec`` (the
    config's ``[montecarlo]`` section, means filled in)."""
    if not isinstance(table, dict):
        raise ConfigError("optimize.uncertainty: expected a table (samples, seed, validation_samples)")
    unknown = sorted(set(table) - _OPTIONS)
    if unknown:
        raise ConfigError(f"optimize.uncertainty.{unknown[0]}: unknown key (known: {', '.join(sorted(_OPTIONS))})")
    if spec is None:
        raise ConfigError("optimize.uncertainty: the dispersions come from the config's [montecarlo] section "
                          "(montecarlo.dispersions or montecarlo.from_fit); there is none")
    values = {}
    for key, default, minimum in (("samples", 256, 2), ("seed", 0, 0), ("validation_samples", 4096, 2)):
        value = table.get(key, default)
        if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
            raise ConfigError(f"optimize.uncertainty.{key}: expected an integer >= {minimum}, got {value!r}")
        values[key] = value
    spec = dataclasses.replace(spec, seed=values["seed"], sensitivity=("local",))
    uncertainty = Uncertainty(spec, values["samples"], values["validation_samples"],
                              {k: mean for k, (mean, _) in spec.moments().items()},
                              frozenset(d.key for d in spec.dispersions if d.distribution == "lognormal"))
    robust = dataclasses.replace(problem, uncertainty=uncertainty)
    _check_tails(robust)
    return robust


def _check_tails(problem) -> None:
    n = problem.uncertainty.samples
    reads = [("optimize.statistic", problem.statistic)] + [
        (f"optimize.constraints.{c.metric}.statistic", c.statistic) for c in problem.constraints
        if c.probability is None]
    for where, statistic in reads:
        if statistic.tail_runs(n) < 1.0:
            needed = math.ceil(1.0 / min(statistic.parameter, 1.0 - statistic.parameter))
            raise ConfigError(f"{where}: {statistic.name} reads a tail holding {statistic.tail_runs(n):.2g} of the "
                              f"{n} runs; raise optimize.uncertainty.samples to at least {needed}, or use a "
                              "normal-theory statistic (mean-3std is the 0.135 % point of a normal output)")
    for c in problem.constraints:
        if c.probability is not None and c.probability * n < 1.0:
            raise ConfigError(f"optimize.constraints.{c.metric}.probability: {c.probability:g} is below one run in "
                              f"{n}; raise optimize.uncertainty.samples to at least {math.ceil(1 / c.probability)}")


def parse_problem_statistics(table: dict, robust: bool) -> tuple[Statistic, dict[str, tuple[Statistic, float | None]]]:
    """The objective's statistic and each metric constraint's ``(statistic, allowed probability)``; a
    statistic needs ``[optimize.uncertainty]``."""
    given = "statistic" in table or any(isinstance(s, dict) and {"statistic", "probability"} & set(s)
                                        for s in table.get("constraints", {}).values())
    if given and not robust:
        raise ConfigError("optimize.statistic: statistics over dispersed runs need an [optimize.uncertainty] table")
    objective = parse_statistic(table.get("statistic", "mean"), "optimize.statistic")
    constraints = {}
    for metric, spec in table.get("constraints", {}).items():
        if not isinstance(spec, dict):
            continue
        where = f"optimize.constraints.{metric}"
        probability = spec.get("probability")
        if probability is not None and (isinstance(probability, bool) or not isinstance(probability, (int, float))
                                        or not 0.0 < probability < 1.0):
            raise ConfigError(f"{where}.probability: expected the allowed probability of leaving the bounds, "
                              f"in (0, 1); got {probability!r}")
        if probability is not None and "statistic" in spec:
            raise ConfigError(f"{where}: give a statistic or a probability, not both")
        constraints[metric] = (parse_statistic(spec.get("statistic", "mean"), f"{where}.statistic"),
                               None if probability is None else float(probability))
    return objective, constraints
