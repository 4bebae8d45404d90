r"""Statistics of an output over weighted runs: smooth in the run values, so that gradients flow through them.

A robust design objective or constraint reads a statistic of one output over ``n`` dispersed runs
:math:`x_1..x_n` with weights :math:`w_i` (1 for a usable run, 0 for an excluded failed run; bootstrap
resamples use their multinomial counts). With :math:`W = \sum w_i` and the runs sorted by value, every
statistic below is a weighted sum of the sorted values, hence differentiable almost everywhere in every
:math:`x_i` (the sort is a permutation):

* ``mean``: :math:`\bar x = \sum w_i x_i / W`; ``std``: :math:`s = \sqrt{\sum w_i (x_i - \bar x)^2 / (W - 1)}`;
  ``mean+3std`` / ``mean-2.5std``: :math:`\bar x \pm k s` (the normal-theory quantile: ``mean-3std`` is the
  0.135 % point of a normal output);
* ``pX`` (e.g. ``p99.865``, ``p0.135``, ``p50``): the quantile at :math:`p = X/100` by linear interpolation
  between the Hazen plotting positions :math:`c_i = (\sum_{j \le i} w_j - w_i / 2) / W` (Hyndman & Fan
  definition 5);
* ``cvarA`` (e.g. ``cvar0.99``): the conditional value at risk, the mean of the tail beyond the quantile
  :math:`A`: the upper tail for :math:`A > 1/2`, :math:`\frac{1}{1-A}\sum_i x_i\,|[C_{i-1}, C_i] \cap [A, 1]|`,
  the lower tail for :math:`A < 1/2`, :math:`\frac{1}{A}\sum_i x_i\,|[C_{i-1}, C_i] \cap [0, A]|`, with the
  cumulative weights :math:`C_i = \sum_{j \le i} w_j / W` (Rockafellar & Uryasev 2002, the exact value of a
  discrete distribution);
* the probability of exceeding a bound :math:`b`, smoothed by a logistic of width :math:`\tau` (a twentieth
  of the runs' standard deviation, not differentiated): :math:`\sum_i w_i\,\sigma((x_i - b)/\tau) / W`; its
  exact count is reported beside it.

A tail quantile or tail mean needs runs in its tail: a statistic whose tail holds less than one expected run
(:meth:`Statistic.tail_runs`) cannot be estimated from the sample and is refused.
"""

from __future__ import annotations

import dataclasses
import math
import re

import jax
import jax.numpy as jnp

from ...core.status import ConfigError

KINDS = "mean | std | mean+Kstd | mean-Kstd | pX (percent, e.g. p99.865) | cvarA (level, e.g. cvar0.99)"
SMOOTHING = 0.05  # logistic width of the exceedance probability, in standard deviations of the runs
_MEAN_K_STD = re.compile(r"^mean([+-])(\d+(?:\.\d*)?)std$")
_QUANTILE = re.compile(r"^p(\d+(?:\.\d*)?)$")
_CVAR = re.compile(r"^cvar(0?\.\d+)$")


@dataclasses.dataclass(frozen=True)
class Statistic:
    """One statistic of an output over weighted runs (module docstring); ``name`` as the user wrote it."""

    name: str
    kind: str  # "mean" | "std" | "mean_std" | "quantile" | "cvar"
    parameter: float = 0.0  # signed k of mean+k std; the probability of a quantile or a CVaR level

    def __call__(self, x, w):
        x = jnp.where(w > 0, x, 0.0)  # excluded runs (NaN where they failed) carry no value and no derivative
        if self.kind == "mean":
            return weighted_mean(x, w)
        if self.kind == "std":
            return weighted_std(x, w)
        if self.kind == "mean_std":
            return weighted_mean(x, w) + self.parameter * weighted_std(x, w)
        if self.kind == "quantile":
            return weighted_quantile(x, w, self.parameter)
        return weighted_cvar(x, w, self.parameter)

    def tail_runs(self, n: int) -> float:
        """The expected number of runs, out of ``n``, in the tail this statistic reads (inf for moments)."""
        if self.kind in ("quantile", "cvar"):
            return n * min(self.parameter, 1.0 - self.parameter)
        return math.inf


def parse_statistic(text, where: str) -> Statistic:
    """``"mean"``, ``"std"``, ``"mean+3std"``, ``"p0.135"``, ``"cvar0.99"``, ... (module docstring)."""
    if text in ("mean", "std"):
        return Statistic(text, text)
    if isinstance(text, str) and (match := _MEAN_K_STD.match(text)):
        return Statistic(text, "mean_std", (1.0 if match[1] == "+" else -1.0) * float(match[2]))
    if isinstance(text, str) and (match := _QUANTILE.match(text)) and 0.0 < float(match[1]) < 100.0:
        return Statistic(text, "quantile", float(match[1]) / 100.0)
    if isinstance(text, str) and (match := _CVAR.match(text)) and 0.0 < float(match[1]) < 1.0 \
            and float(match[1]) != 0.5:
        return Statistic(text, "cvar", float(match[1]))
    raise ConfigError(f"{where}: unknown statistic {text!r} (known: {KINDS})")


def weighted_mean(x, w):
    return jnp.sum(w * x) / jnp.sum(w)


def weighted_std(x, w):
    total = jnp.sum(w)
    variance = jnp.sum(w * (x - weighted_mean(x, w)) ** 2) / (total - 1.0)
    positive = variance > 0.0
    return jnp.where(positive, jnp.sqrt(jnp.where(positive, variance, 1.0)), 0.0)


def _sorted(x, w):
    """The runs sorted by value, excluded runs (weight 0) last with the largest usable value."""
    order = jnp.argsort(jnp.where(w > 0, x, jnp.inf))
    xs, ws = x[order], w[order]
    largest = jnp.max(jnp.where(w > 0, x, -jnp.inf))
    return jnp.where(ws > 0, xs, largest), ws


def weighted_quantile(x, w, p: float):
    xs, ws = _sorted(x, w)
    positions = (jnp.cumsum(ws) - 0.5 * ws) / jnp.sum(ws)
    positions = jnp.where(ws > 0, positions, 1.0 + jnp.arange(ws.shape[0]))  # strictly increasing past the last
    return jnp.interp(p, positions, xs)


def weighted_cvar(x, w, level: float):
    xs, ws = _sorted(x, w)
    upper_end = jnp.cumsum(ws) / jnp.sum(ws)
    lower_end = upper_end - ws / jnp.sum(ws)
    if level > 0.5:
        share = jnp.clip(upper_end - jnp.maximum(lower_end, level), 0.0)
        return jnp.sum(share * xs) / (1.0 - level)
    share = jnp.clip(jnp.minimum(upper_end, level) - lower_end, 0.0)
    return jnp.sum(share * xs) / level


def smooth_exceedance(x, w, bound: float, above: bool):
    """The logistic-smoothed fraction of runs beyond ``bound`` (above it, or below it)."""
    x = jnp.where(w > 0, x, 0.0)
    width = jax.lax.stop_gradient(SMOOTHING * weighted_std(x, w)) + 1e-12 * max(abs(bound), 1.0)
    beyond = (x - bound) / width if above else (bound - x) / width
    return jnp.sum(w * jax.nn.sigmoid(beyond)) / jnp.sum(w)
