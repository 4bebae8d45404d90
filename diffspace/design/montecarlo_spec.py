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
    [montecarlo.dispersions]     # design keys; mean = the config's value unless given
    "ejection.spring_stiffness_N_m" = {distribution = "normal", std = 16.0}
    "friction.coulomb_N_m" = {distribution = "normal", std = 0.2, lower = 1.5, upper = 2.5}   # truncated
    "ejection.spring_compression_m" = {distribution = "uniform", lower = 0.085, upper = 0.087}

Cases come from uniform numbers in (0, 1) mapped through each key's inverse distribution function
(:mod:`~diffspace.design.montecarlo_distributions`). The uniforms are drawn in fixed blocks of
:data:`BLOCK` rows, block ``b`` from a generator seeded by ``(seed, design, b)``: a case's inputs depend only
on the seed and its index (not on the chunk size or on which process computes it).

Without Sobol indices case ``i`` is row ``i`` of the uniform design (``d`` columns). With them the runs follow
Saltelli's scheme: base sample ``j`` has ``2d`` uniforms, the rows ``A_j`` (first ``d``) and ``B_j`` (last
``d``), and its ``d + 2`` runs are ``A_j``, ``B_j`` and ``AB_j^(i)`` (``A_j`` with column ``i`` from ``B_j``),
cases ``j (d + 2) + r`` for ``r = 0, 1, 2 + i``.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..core.status import ConfigError
from .montecarlo_distributions import DISTRIBUTIONS, Dispersion
from .sweep_spec import Chunked

BLOCK = 1024  # uniform rows per seeded block
SENSITIVITIES = ("local", "sobol")
_OPTIONS = {"samples", "seed", "outputs", "sensitivity", "chunk_size", "bootstrap", "confidence", "max_cases",
            "dispersions"}


@dataclasses.dataclass(frozen=True)
class MonteCarloSpec(Chunked):
    dispersions: tuple[Dispersion, ...]
    samples: int = 1024
    seed: int = 0
    outputs: tuple[str, ...] = ()
    sensitivity: tuple[str, ...] = ("local",)
    chunk_size: int = 64
    bootstrap: int = 1000
    confidence: float = 0.95
    max_cases: int = 10_000_000
    name = "montecarlo"  # the command, in messages
    gradients = False  # no per-case gradients (the local sensitivities come from one run at the means)

    @property
    def input_keys(self) -> tuple[str, ...]:
        return tuple(d.key for d in self.dispersions)

    @property
    def sobol(self) -> bool:
        return "sobol" in self.sensitivity

    @property
    def runs_per_sample(self) -> int:
        return len(self.dispersions) + 2 if self.sobol else 1

    @property
    def n_cases(self) -> int:
        return self.samples * self.runs_per_sample

    def unit_rows(self, samples: np.ndarray) -> np.ndarray:
        """The uniform design's rows of base samples ``samples`` (``d`` columns, or ``2d`` with Sobol)."""
        width = len(self.dispersions) * (2 if self.sobol else 1)
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
        d = len(self.dispersions)
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
        """The dispersed inputs of cases ``indices`` (config units), one column per key."""
        unit = self.unit_cases(np.asarray(indices))
        return np.stack([d.ppf(unit[:, j]) for j, d in enumerate(self.dispersions)], axis=1)

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

    def moments(self) -> dict[str, tuple[float, float]]:
        """``{key: (mean, standard deviation)}`` of every dispersed key as sampled."""
        return {d.key: d.moments() for d in self.dispersions}


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


def parse_montecarlo(table: dict) -> MonteCarloSpec:
    """Validate a ``[montecarlo]`` table (one ``ConfigError`` line per problem kind); the dispersions' means
    the config gives are filled in later (:meth:`MonteCarloSpec.with_means`)."""
    unknown = sorted(set(table) - _OPTIONS)
    if unknown:
        raise ConfigError(f"montecarlo.{unknown[0]}: unknown key (known: {', '.join(sorted(_OPTIONS))})")
    dispersions = table.get("dispersions")
    if not isinstance(dispersions, dict) or not dispersions:
        raise ConfigError('montecarlo.dispersions: give at least one dispersed key, e.g. '
                          '"friction.coulomb_N_m" = {distribution = "normal", std = 0.2}')
    confidence = table.get("confidence", 0.95)
    if not isinstance(confidence, float) or not 0.0 < confidence < 1.0:
        raise ConfigError(f"montecarlo.confidence: expected a number between 0 and 1, got {confidence!r}")
    spec = MonteCarloSpec(
        tuple(_dispersion(k, v) for k, v in dispersions.items()), _int_option(table, "samples", 1024, 1),
        _int_option(table, "seed", 0, 0), _names(table, "outputs", ()),
        _names(table, "sensitivity", ("local",), SENSITIVITIES), _int_option(table, "chunk_size", 64, 1),
        _int_option(table, "bootstrap", 1000, 0), confidence, _int_option(table, "max_cases", 10_000_000, 1))
    if spec.n_cases > spec.max_cases:
        raise ConfigError(f"montecarlo: {spec.n_cases:,} runs exceed montecarlo.max_cases = {spec.max_cases:,}; "
                          "raise it deliberately or run fewer samples")
    return spec
