r"""The ``[sweep]`` table: axes over config keys, grid / random / Latin-hypercube cases, generated per chunk.

::

    [sweep]
    method = "grid"            # "grid" (Cartesian product of the axes) | "random" | "lhs"
    samples = 256              # random / lhs: number of cases
    seed = 0
    chunk_size = 64            # cases per compiled, vmapped call (bounds memory)
    outputs = ["stable_velocity_m_s"]   # metrics to keep (default: all)
    gradients = false          # also d(output)/d(axis) for axes that are design variables
    max_cases = 10_000_000     # refuse larger sweeps (resource bound)
    [sweep.axes]
    "ejection.attitude[1]" = {start = -90.0, stop = 90.0, num = 7}   # grid axis
    "friction.viscous_N_m_s_rad" = [4.0, 5.4, 6.8]                   # list axis (numbers or strings)
    "friction.coulomb_N_m" = {lower = 1.0, upper = 3.0}              # random / lhs axis

Cases are never materialised all at once: :meth:`SweepSpec.cases` builds one chunk from the case indices
(grid: mixed-radix digits; random/lhs: a generator seeded by ``(seed, chunk)``; lhs: stratum ``i`` of every
axis permuted by a seeded permutation of the case indices, computed per index).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ...core.status import ConfigError

METHODS = ("grid", "random", "lhs")
_OPTIONS = {"method", "samples", "seed", "chunk_size", "outputs", "gradients", "max_cases", "axes"}


@dataclasses.dataclass(frozen=True)
class Axis:
    """One swept key: discrete ``values`` (grid/list) or continuous ``bounds`` (random/lhs)."""

    key: str
    values: tuple = ()
    bounds: tuple[float, float] | None = None

    @property
    def numeric(self) -> bool:
        return self.bounds is not None or all(_is_number(v) for v in self.values)


class Chunked:
    """Chunk arithmetic of a spec with ``n_cases`` and ``chunk_size`` (chunk ``c``: cases ``c * chunk_size`` up
    to the next chunk's first)."""

    @property
    def n_chunks(self) -> int:
        return -(-self.n_cases // self.chunk_size)

    def chunk_range(self, chunk: int) -> range:
        return range(chunk * self.chunk_size, min((chunk + 1) * self.chunk_size, self.n_cases))


@dataclasses.dataclass(frozen=True)
class SweepSpec(Chunked):
    axes: tuple[Axis, ...]
    method: str = "grid"
    samples: int = 0
    seed: int = 0
    chunk_size: int = 64
    outputs: tuple[str, ...] = ()
    gradients: bool = False
    max_cases: int = 10_000_000
    name = "sweep"  # the command, in messages

    @property
    def input_keys(self) -> tuple[str, ...]:
        return tuple(a.key for a in self.axes)

    @property
    def n_cases(self) -> int:
        if self.method == "grid":
            return math.prod(len(a.values) for a in self.axes)
        return self.samples

    def cases(self, chunk: int) -> list[dict]:
        """The cases of one chunk, as ``{key: value}`` dicts, in case-index order."""
        indices = np.arange(self.chunk_range(chunk).start, self.chunk_range(chunk).stop)
        if self.method == "grid":
            digits = np.unravel_index(indices, [len(a.values) for a in self.axes])
            return [{a.key: a.values[d[i]] for a, d in zip(self.axes, digits)} for i in range(len(indices))]
        unit = self._unit_samples(chunk, indices)
        lows = np.array([a.bounds[0] for a in self.axes])
        highs = np.array([a.bounds[1] for a in self.axes])
        points = lows + unit * (highs - lows)
        return [{a.key: float(p[j]) for j, a in enumerate(self.axes)} for p in points]

    def _unit_samples(self, chunk: int, indices: np.ndarray) -> np.ndarray:
        rng = np.random.default_rng([self.seed, chunk])
        jitter = rng.uniform(size=(len(indices), len(self.axes)))
        if self.method == "random":
            return jitter
        strata = np.stack([_permuted(indices, self.samples, self.seed, j) for j in range(len(self.axes))], axis=1)
        return (strata + jitter) / self.samples


def _permuted(indices: np.ndarray, n: int, seed: int, axis: int) -> np.ndarray:
    """A pseudo-random permutation of ``range(n)`` evaluated at ``indices`` without building it: an affine
    map ``i -> (a i + b) mod n`` with ``gcd(a, n) = 1``, seeded per axis."""
    rng = np.random.default_rng([seed, 7919, axis])
    a = int(rng.integers(1, max(n, 2)))
    while math.gcd(a, n) != 1:
        a += 1
    b = int(rng.integers(0, max(n, 1)))
    return (a * indices + b) % n


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _axis(key: str, spec) -> Axis:
    where = f"sweep.axes.{key}"
    if isinstance(spec, list):
        if not spec:
            raise ConfigError(f"{where}: empty list of values")
        if any(isinstance(v, (dict, list)) or (isinstance(v, float) and not math.isfinite(v)) for v in spec):
            raise ConfigError(f"{where}: list values must be finite numbers or strings")
        return Axis(key, tuple(spec))
    if not isinstance(spec, dict):
        raise ConfigError(f"{where}: expected a list of values, {{start, stop, num}} or {{lower, upper}}")
    if set(spec) == {"start", "stop", "num"}:
        start, stop, num = spec["start"], spec["stop"], spec["num"]
        if not (_is_number(start) and _is_number(stop)):
            raise ConfigError(f"{where}: start and stop must be finite numbers, got {start!r}, {stop!r}")
        if not isinstance(num, int) or isinstance(num, bool) or num < 1:
            raise ConfigError(f"{where}: num must be a positive integer, got {num!r}")
        if num > 1 and start == stop:
            raise ConfigError(f"{where}: empty range (start == stop == {start:g})")
        return Axis(key, tuple(float(x) for x in np.linspace(start, stop, num)))
    if set(spec) == {"lower", "upper"}:
        lower, upper = spec["lower"], spec["upper"]
        if not (_is_number(lower) and _is_number(upper)):
            raise ConfigError(f"{where}: lower and upper must be finite numbers, got {lower!r}, {upper!r}")
        if not lower < upper:
            raise ConfigError(f"{where}: empty range (lower {lower:g} must be below upper {upper:g})")
        return Axis(key, bounds=(float(lower), float(upper)))
    raise ConfigError(f"{where}: expected keys start/stop/num or lower/upper, got {', '.join(spec) or 'none'}")


def _int_option(table: dict, key: str, default: int, minimum: int) -> int:
    value = table.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool):
        raise ConfigError(f"sweep.{key}: expected an integer, got {value!r}")
    if value < minimum:
        raise ConfigError(f"sweep.{key}: must be >= {minimum}, got {value}")
    return value


def parse_sweep(table: dict) -> SweepSpec:
    """Validate a ``[sweep]`` table (one ``ConfigError`` line per problem kind)."""
    unknown = sorted(set(table) - _OPTIONS)
    if unknown:
        raise ConfigError(f"sweep.{unknown[0]}: unknown key (known: {', '.join(sorted(_OPTIONS))})")
    axes_table = table.get("axes")
    if not isinstance(axes_table, dict) or not axes_table:
        raise ConfigError("sweep.axes: give at least one axis, e.g. \"friction.viscous_N_m_s_rad\" = [4.0, 5.4]")
    axes = tuple(_axis(key, spec) for key, spec in axes_table.items())
    bounded = [a.bounds is not None for a in axes]
    method = table.get("method", "random" if any(bounded) else "grid")
    if method not in METHODS:
        raise ConfigError(f"sweep.method: must be one of {', '.join(METHODS)}; got {method!r}")
    if method == "grid" and any(bounded):
        key = axes[bounded.index(True)].key
        raise ConfigError(f"sweep.axes.{key}: a grid needs values or {{start, stop, num}}, not bounds")
    if method != "grid" and not all(bounded):
        key = axes[bounded.index(False)].key
        raise ConfigError(f"sweep.axes.{key}: method '{method}' needs {{lower, upper}} bounds on every axis")
    samples = _int_option(table, "samples", 0 if method == "grid" else 256, 0 if method == "grid" else 1)
    outputs = table.get("outputs", [])
    if not isinstance(outputs, list) or not all(isinstance(o, str) for o in outputs):
        raise ConfigError("sweep.outputs: expected a list of metric names")
    gradients = table.get("gradients", False)
    if not isinstance(gradients, bool):
        raise ConfigError(f"sweep.gradients: expected true/false, got {gradients!r}")
    spec = SweepSpec(axes, method, samples, _int_option(table, "seed", 0, 0), _int_option(table, "chunk_size", 64, 1),
                     tuple(outputs), gradients, _int_option(table, "max_cases", 10_000_000, 1))
    if spec.n_cases > spec.max_cases:
        raise ConfigError(f"sweep: {spec.n_cases:,} cases exceed sweep.max_cases = {spec.max_cases:,}; "
                          "raise it deliberately or sweep fewer cases")
    return spec
