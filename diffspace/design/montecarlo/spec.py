"""The ``[montecarlo]`` table and the campaign's cases, generated per chunk from the seed.

::

    [montecarlo]
    samples = 4096               # dispersed cases (with "sobol": base samples N, N * (d + 2) runs)
    seed = 0
    outputs = ["stable_velocity_m_s"]   # default: all metrics
    sensitivity = ["local", "sobol"]    # default ["local"]
    chunk_size = 256
    bootstrap = 1000             # resamples for the Sobol indices' confidence intervals
    confidence = 0.95
    max_cases = 10_000_000
    from_fit = "runs/impact_fit"  # optional: the parameters a `diffspace fit` estimated, jointly normal
    [montecarlo.dispersions]     # design keys; mean = the config's value unless given (optional with from_fit)
    "ejection.spring_stiffness_N_m" = {distribution = "normal", std = 16.0}
    "friction.coulomb_N_m" = {distribution = "normal", std = 0.2, lower = 1.5, upper = 2.5}   # truncated
    "ejection.spring_compression_m" = {distribution = "uniform", lower = 0.085, upper = 0.087}

Cases come from uniform numbers in (0, 1) mapped through each key's inverse distribution function
(:mod:`~diffspace.design.montecarlo.distributions`). The uniforms are drawn in fixed blocks of :data:`BLOCK`
rows, block ``b`` from a generator seeded by ``(seed, design, b)``: a case's inputs depend only on the seed and
its index (not on the chunk size or on which process computes it).

``from_fit`` names the results directory of ``diffspace fit`` (relative to the config file's folder; through
the Python API, to the current directory). Its ``summary.json`` gives the fitted values (``fitted``) and their
covariance (``covariance``, config units), drawn as one correlated normal after the hand-written keys
(:class:`~diffspace.design.montecarlo.distributions.CorrelatedNormal`: ``x = mean + L z``, ``L`` the Cholesky
factor of the covariance, ``z`` the standard normal quantiles of the fitted keys' uniform columns). Refused,
naming the key: a fit that did not converge or ended at a bound (its covariance describes no optimum), a
covariance that is not finite or not positive definite, a key given both ways, and Sobol indices of correlated
inputs (Saltelli's estimators assume independent inputs). The fitted normal is not truncated: one that reaches
values its key does not allow is refused like any dispersion
(:func:`~diffspace.design.montecarlo.command.prepare_montecarlo`; a positive parameter fitted to 5 % lies 20 standard
errors from zero, a tail of 3e-89, and is accepted).

:meth:`MonteCarloSpec.values` is the entry point for any use of the dispersed inputs (the campaign's cases, the
robust optimisation's runs): the values of given cases in config units, one column per key in the order of
:attr:`MonteCarloSpec.input_keys`; :meth:`MonteCarloSpec.moments` gives each key's mean and standard deviation.

Without Sobol indices case ``i`` is row ``i`` of the uniform design (``d`` columns). With them the runs follow
Saltelli's scheme: base sample ``j`` has ``2d`` uniforms, the rows ``A_j`` (first ``d``) and ``B_j`` (last
``d``), and its ``d + 2`` runs are ``A_j``, ``B_j`` and ``AB_j^(i)`` (``A_j`` with column ``i`` from ``B_j``),
cases ``j (d + 2) + r`` for ``r = 0, 1, 2 + i``.
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import numpy as np

from ...core.status import ConfigError
from ..sweep.spec import Chunked
from .distributions import DISTRIBUTIONS, CorrelatedNormal, Dispersion

BLOCK = 1024  # uniform rows per seeded block
SENSITIVITIES = ("local", "sobol")
_OPTIONS = {"samples", "seed", "outputs", "sensitivity", "chunk_size", "bootstrap", "confidence", "max_cases",
            "dispersions", "from_fit"}
FIT_KEYS = ("fitted", "covariance", "converged", "at_bound")  # what a fit's summary.json gives from_fit


@dataclasses.dataclass(frozen=True)
class MonteCarloSpec(Chunked):
    """A campaign: independent ``dispersions`` and, from a fit, the ``correlated`` keys (after them)."""

    dispersions: tuple[Dispersion, ...]
    samples: int = 1024
    seed: int = 0
    outputs: tuple[str, ...] = ()
    sensitivity: tuple[str, ...] = ("local",)
    chunk_size: int = 64
    bootstrap: int = 1000
    confidence: float = 0.95
    max_cases: int = 10_000_000
    correlated: CorrelatedNormal | None = None
    name = "montecarlo"  # the command, in messages
    gradients = False  # no per-case gradients (the local sensitivities come from one run at the means)

    @property
    def input_keys(self) -> tuple[str, ...]:
        """Every dispersed key: the hand-written ones, then the fitted ones."""
        return tuple(d.key for d in self.dispersions) + self.fitted_keys

    @property
    def sobol(self) -> bool:
        return "sobol" in self.sensitivity

    @property
    def runs_per_sample(self) -> int:
        return len(self.input_keys) + 2 if self.sobol else 1

    @property
    def n_cases(self) -> int:
        return self.samples * self.runs_per_sample

    def unit_rows(self, samples: np.ndarray) -> np.ndarray:
        """The uniform design's rows of base samples ``samples`` (``d`` columns, or ``2d`` with Sobol)."""
        width = len(self.input_keys) * (2 if self.sobol else 1)
        rows = np.empty((len(samples), width))
        for block in np.unique(samples // BLOCK):
            rng = np.random.default_rng([self.seed, int(self.sobol), int(block)])
            # open interval: (k + 1/2) / 2^53 for 53-bit integers k, so that no quantile is infinite
            uniforms = (rng.integers(0, 2**53, size=(BLOCK, width)) + 0.5) / 2.0**53
            here = samples // BLOCK == block
            rows[here] = uniforms[samples[here] % BLOCK]
        return rows

    def unit_cases(self, indices: np.ndarray) -> np.ndarray:
        """Uniform numbers of cases ``indices`` (one row of ``d`` per case)."""
        d = len(self.input_keys)
        rows = self.unit_rows(indices // self.runs_per_sample)
        if not self.sobol:
            return rows
        a, b = rows[:, :d], rows[:, d:]
        role = indices % self.runs_per_sample
        out = np.where((role == 1)[:, None], b, a)
        for i in range(d):
            out[role == 2 + i, i] = b[role == 2 + i, i]
        return out

    def values(self, indices: np.ndarray) -> np.ndarray:
        """The dispersed inputs of cases ``indices``: shape ``(len(indices), len(input_keys))``, config units, the
        columns in the order of ``input_keys``. A case's values depend only on the seed and its index."""
        unit = self.unit_cases(np.asarray(indices))
        columns = [d.ppf(unit[:, j]) for j, d in enumerate(self.dispersions)]
        if self.correlated:
            columns += list(self.correlated.ppf(unit[:, len(self.dispersions):]).T)
        return np.stack(columns, axis=1)

    def cases(self, chunk: int) -> list[dict]:
        r = self.chunk_range(chunk)
        values = self.values(np.arange(r.start, r.stop))
        return [{k: float(v) for k, v in zip(self.input_keys, row)} for row in values]

    def labels(self, chunk: int) -> dict[str, list]:
        """``results.csv`` columns naming each run's place in Saltelli's scheme (``sample``, ``matrix``)."""
        if not self.sobol:
            return {}
        r = self.chunk_range(chunk)
        names = ["A", "B"] + [f"AB:{k}" for k in self.input_keys]
        return {"sample": [i // self.runs_per_sample for i in r], "matrix": [names[i % self.runs_per_sample] for i in r]}

    def with_means(self, configured: dict[str, float | None]) -> MonteCarloSpec:
        """The dispersions with every missing mean taken from the config's value (``configured``)."""
        filled = []
        for d in self.dispersions:
            if d.distribution != "uniform" and d.mean is None:
                if configured.get(d.key) is None:
                    raise ConfigError(f"montecarlo.dispersions.{d.key}: the config gives no single number for "
                                      "this key; give its mean")
                d = dataclasses.replace(d, mean=float(configured[d.key]))
            filled.append(_checked(d))
        return dataclasses.replace(self, dispersions=tuple(filled))

    def marginals(self) -> tuple[Dispersion, ...]:
        """Every key's own distribution, in the order of ``input_keys`` (a fitted key's: normal)."""
        return self.dispersions + (self.correlated.marginals() if self.correlated else ())

    def moments(self) -> dict[str, tuple[float, float]]:
        """``{key: (mean, standard deviation)}`` of every dispersed key as sampled."""
        return {d.key: d.moments() for d in self.marginals()}

    @property
    def fitted_keys(self) -> tuple[str, ...]:
        """The keys ``from_fit`` disperses (correlated)."""
        return self.correlated.keys if self.correlated else ()

    def where(self, key: str) -> str:
        """The config key that disperses ``key``, for messages."""
        return f"montecarlo.from_fit: {key}" if key in self.fitted_keys else f"montecarlo.dispersions.{key}"


def _number(table: dict, key: str, where: str) -> float | None:
    value = table.get(key)
    if value is None:
        return None
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
        raise ConfigError(f"{where}.{key}: expected a finite number, got {value!r}")
    return float(value)


def _dispersion(key: str, table) -> Dispersion:
    where = f"montecarlo.dispersions.{key}"
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: expected a table such as {{distribution = \"normal\", std = 0.1}}")
    kind = table.get("distribution")
    if kind not in DISTRIBUTIONS:
        raise ConfigError(f"{where}.distribution: one of {', '.join(DISTRIBUTIONS)}; got {kind!r}")
    allowed = {"uniform": {"lower", "upper"}, "normal": {"mean", "std", "lower", "upper"},
               "lognormal": {"mean", "std"}}[kind] | {"distribution"}
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise ConfigError(f"{where}.{unknown[0]}: not a parameter of a {kind} distribution "
                          f"(known: {', '.join(sorted(allowed - {'distribution'}))})")
    numbers = {k: _number(table, k, where) for k in ("mean", "std", "lower", "upper")}
    if kind == "uniform" and None in (numbers["lower"], numbers["upper"]):
        raise ConfigError(f"{where}: a uniform distribution needs lower and upper")
    if kind != "uniform" and numbers["std"] is None:
        raise ConfigError(f"{where}: a {kind} distribution needs std")
    bounds = {k: v for k, v in numbers.items() if k in ("lower", "upper") and v is not None}
    return Dispersion(key, kind, numbers["mean"], numbers["std"], **bounds)


def _checked(d: Dispersion) -> Dispersion:
    """Refuse a distribution that cannot be sampled (its mean known)."""
    where = f"montecarlo.dispersions.{d.key}"
    if not d.lower < d.upper:
        raise ConfigError(f"{where}: empty range (lower {d.lower:g} must be below upper {d.upper:g})")
    if d.distribution != "uniform" and not d.std > 0.0:
        raise ConfigError(f"{where}.std: must be positive, got {d.std:g}")
    if d.distribution == "lognormal" and not d.mean > 0.0:
        raise ConfigError(f"{where}.mean: a log-normal value needs a positive mean, got {d.mean:g}")
    if d.distribution == "normal" and not d.probability() > 1e-300:
        raise ConfigError(f"{where}: the truncation keeps no probability (both bounds far out in one tail)")
    return d


def _int_option(table: dict, key: str, default: int, minimum: int) -> int:
    value = table.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise ConfigError(f"montecarlo.{key}: expected an integer >= {minimum}, got {value!r}")
    return value


def _names(table: dict, key: str, default: tuple, allowed: tuple | None = None) -> tuple[str, ...]:
    value = table.get(key, list(default))
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"montecarlo.{key}: expected a list of names")
    bad = [v for v in value if allowed is not None and v not in allowed]
    if bad:
        raise ConfigError(f"montecarlo.{key}: unknown {bad[0]!r} (known: {', '.join(allowed)})")
    return tuple(value)


def _fit_summary(directory) -> dict:
    """The ``summary.json`` of a converged fit inside its range, or one ``montecarlo.from_fit`` line saying why not."""
    where = "montecarlo.from_fit"
    if not isinstance(directory, str) or not directory:
        raise ConfigError(f"{where}: expected the results directory of diffspace fit (a path), got {directory!r}")
    path = Path(directory) / "summary.json"
    try:
        summary = json.loads(path.read_text())
    except OSError:
        raise ConfigError(f"{where}: {path} not found (expected the results directory of diffspace fit)") from None
    except ValueError:
        raise ConfigError(f"{where}: {path} is not valid JSON") from None
    missing = [k for k in FIT_KEYS if k not in summary] if isinstance(summary, dict) else list(FIT_KEYS)
    if missing:
        older = " (written before fits recorded their covariance: rerun it)" if missing == ["covariance"] else ""
        raise ConfigError(f"{where}: {path} is not the summary of diffspace fit: no {', '.join(missing)}{older}")
    if summary["at_bound"]:
        raise ConfigError(f"{where}: the fit in {directory} ended at a bound of its range "
                          f"({', '.join(map(str, summary['at_bound']))}): its covariance does not describe that "
                          "estimate; refit with a wider range or more informative data")
    if summary["converged"] is not True:
        raise ConfigError(f"{where}: the fit in {directory} did not converge ({summary.get('message')}), so its "
                          "covariance describes no optimum; refit it first (fit.max_iter, fit.initial)")
    return summary


def fitted_dispersion(directory) -> CorrelatedNormal:
    """The parameters ``diffspace fit`` estimated in ``directory`` (its results directory): jointly normal, mean
    the estimates (``fitted``), covariance the fit's (config units). Refuses (``montecarlo.from_fit``) anything
    but a converged fit inside its range with a finite, positive-definite covariance."""
    summary = _fit_summary(directory)
    fitted, rows = summary["fitted"], summary["covariance"]
    square = isinstance(fitted, dict) and fitted and isinstance(rows, list) and len(rows) == len(fitted) and all(
        isinstance(r, list) and len(r) == len(fitted) for r in rows)
    if not square or not all(map(_finite, [*fitted.values(), *(x for r in rows for x in r)])):
        raise ConfigError(f"montecarlo.from_fit: the fit in {directory} gives no finite values with a finite "
                          "covariance (null entries: the data do not identify every parameter)")
    covariance = 0.5 * (np.array(rows, float) + np.array(rows, float).T)  # symmetric to rounding already
    normal = CorrelatedNormal(tuple(fitted), tuple(float(v) for v in fitted.values()),
                              tuple(map(tuple, covariance.tolist())), str(directory))
    try:
        normal.factor()
    except np.linalg.LinAlgError:
        eigenvalues = ", ".join(f"{v:.3g}" for v in np.linalg.eigvalsh(covariance))
        raise ConfigError(f"montecarlo.from_fit: the covariance of the fit in {directory} is not positive definite "
                          f"(eigenvalues {eigenvalues}): the data do not identify every parameter separately") from None
    return normal


def _finite(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def parse_montecarlo(table: dict) -> MonteCarloSpec:
    """Validate a ``[montecarlo]`` table (one ``ConfigError`` line per problem kind); the dispersions' means
    the config gives are filled in later (:meth:`MonteCarloSpec.with_means`). ``from_fit`` is read here (a
    relative path from the current directory; the commands make it absolute first)."""
    unknown = sorted(set(table) - _OPTIONS)
    if unknown:
        raise ConfigError(f"montecarlo.{unknown[0]}: unknown key (known: {', '.join(sorted(_OPTIONS))})")
    correlated = fitted_dispersion(table["from_fit"]) if "from_fit" in table else None
    dispersions = table.get("dispersions", {} if correlated else None)
    if not isinstance(dispersions, dict) or not (dispersions or correlated):
        raise ConfigError('montecarlo.dispersions: give at least one dispersed key, e.g. '
                          '"friction.coulomb_N_m" = {distribution = "normal", std = 0.2} (or montecarlo.from_fit)')
    twice = [k for k in dispersions if correlated and k in correlated.keys]
    if twice:
        raise ConfigError(f"montecarlo.dispersions.{twice[0]}: also dispersed by montecarlo.from_fit "
                          f"({correlated.source}); give each key once")
    confidence = table.get("confidence", 0.95)
    if not isinstance(confidence, float) or not 0.0 < confidence < 1.0:
        raise ConfigError(f"montecarlo.confidence: expected a number between 0 and 1, got {confidence!r}")
    spec = MonteCarloSpec(
        tuple(_dispersion(k, v) for k, v in dispersions.items()), _int_option(table, "samples", 1024, 1),
        _int_option(table, "seed", 0, 0), _names(table, "outputs", ()),
        _names(table, "sensitivity", ("local",), SENSITIVITIES), _int_option(table, "chunk_size", 64, 1),
        _int_option(table, "bootstrap", 1000, 0), confidence, _int_option(table, "max_cases", 10_000_000, 1),
        correlated)
    if spec.sobol and correlated and not correlated.independent:
        raise ConfigError("montecarlo.sensitivity: Sobol indices (Saltelli's estimators) assume independent inputs, "
                          f"and montecarlo.from_fit gives correlated ones ({', '.join(correlated.keys)}); drop "
                          '"sobol" (the local sensitivities remain)')
    if spec.n_cases > spec.max_cases:
        raise ConfigError(f"montecarlo: {spec.n_cases:,} runs exceed montecarlo.max_cases = {spec.max_cases:,}; "
                          "raise it deliberately or run fewer samples")
    return spec
