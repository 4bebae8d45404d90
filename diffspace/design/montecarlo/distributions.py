r"""Input distributions of a Monte-Carlo campaign, sampled by inverse transform of uniform numbers.

Every dispersed key maps a uniform number :math:`u \in (0, 1)` to its value :math:`x = F^{-1}(u)` (config
units), so one uniform design serves every distribution and a case's inputs depend only on its uniforms:

* normal :math:`N(\mu, \sigma)`, optionally truncated to :math:`[a, b]`: with :math:`\alpha = (a-\mu)/\sigma`,
  :math:`\beta = (b-\mu)/\sigma`, :math:`x = \mu + \sigma\,\Phi^{-1}(\Phi(\alpha) + u(\Phi(\beta) - \Phi(\alpha)))`
  (the reflected form when :math:`\alpha > 0`, so a bound far in the upper tail keeps its precision); mean
  :math:`\mu + \sigma(\varphi(\alpha) - \varphi(\beta))/Z` and variance
  :math:`\sigma^2[1 + (\alpha\varphi(\alpha) - \beta\varphi(\beta))/Z - ((\varphi(\alpha) - \varphi(\beta))/Z)^2]`,
  :math:`Z = \Phi(\beta) - \Phi(\alpha)` (Johnson, Kotz & Balakrishnan, *Continuous Univariate Distributions*
  vol. 1, eqs. 13.134-13.135);
* uniform on :math:`[a, b]`: :math:`x = a + u(b - a)`, mean :math:`(a+b)/2`, standard deviation
  :math:`(b-a)/\sqrt{12}`;
* log-normal with mean :math:`m` and standard deviation :math:`s` (of :math:`x` itself):
  :math:`\sigma_l^2 = \ln(1 + s^2/m^2)`, :math:`\mu_l = \ln m - \sigma_l^2/2`,
  :math:`x = \exp(\mu_l + \sigma_l \Phi^{-1}(u))`;
* jointly normal keys :math:`N(\mu, \Sigma)` (:class:`CorrelatedNormal`, e.g. parameters a fit estimated, with
  their covariance), one uniform number per key: :math:`z_j = \Phi^{-1}(u_j)` and :math:`x = \mu + L z` with
  :math:`L L^T = \Sigma` (Cholesky), so :math:`E[x] = \mu` and :math:`\operatorname{Cov}(x) = L\,I\,L^T = \Sigma`
  (untruncated); each key alone is :math:`N(\mu_j, \sqrt{\Sigma_{jj}})`.

:math:`\Phi` is evaluated as :math:`\tfrac12\operatorname{erfc}(-x/\sqrt2)` (C library ``erfc``), and
:math:`\Phi^{-1}` by Acklam's rational approximation (relative error below 1.2e-9) refined by one Halley
step on :math:`\Phi(x) - p`, which brings it to double precision (NumPy only: SciPy is not a runtime
dependency).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

DISTRIBUTIONS = ("normal", "uniform", "lognormal")

_ERFC = np.frompyfunc(math.erfc, 1, 1)
# Acklam's coefficients: central region |p - 1/2| <= 0.47575, tails outside
_A = (-3.969683028665376e01, 2.209460984245205e02, -2.759285104469687e02, 1.383577518672690e02,
      -3.066479806614716e01, 2.506628277459239e00)
_B = (-5.447609879822406e01, 1.615858368580409e02, -1.556989798598866e02, 6.680131188771972e01,
      -1.328068155288572e01)
_C = (-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e00, -2.549732539343734e00,
      4.374664141464968e00, 2.938163982698783e00)
_D = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e00, 3.754408661907416e00)
_P_LOW = 0.02425


def normal_cdf(x) -> np.ndarray:
    """Standard normal distribution function :math:`\\Phi(x)`."""
    return 0.5 * np.asarray(_ERFC(-np.asarray(x, float) / math.sqrt(2.0)), float)


def normal_pdf(x) -> np.ndarray:
    x = np.asarray(x, float)
    return np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)


def _tail(q: np.ndarray) -> np.ndarray:
    c = _C
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / (
        (((_D[0] * q + _D[1]) * q + _D[2]) * q + _D[3]) * q + 1.0)


def normal_ppf(p) -> np.ndarray:
    """Standard normal quantile :math:`\\Phi^{-1}(p)` for ``0 < p < 1`` (module docstring)."""
    p = np.asarray(p, float)
    x = np.empty_like(p)
    low, high = p < _P_LOW, p > 1.0 - _P_LOW
    mid = ~(low | high)
    x[low] = _tail(np.sqrt(-2.0 * np.log(p[low])))
    x[high] = -_tail(np.sqrt(-2.0 * np.log1p(-p[high])))
    q = p[mid] - 0.5
    r = q * q
    a, b = _A, _B
    x[mid] = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q / (
        ((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1.0)
    # one Halley step on Phi(x) - p (in the upper tail on the complement, which keeps its precision)
    error = np.where(high, (1.0 - p) - normal_cdf(-x), normal_cdf(x) - p)
    u = error * math.sqrt(2.0 * math.pi) * np.exp(0.5 * x * x)
    return x - u / (1.0 + 0.5 * x * u)


@dataclasses.dataclass(frozen=True)
class Dispersion:
    """One dispersed design key (config units): ``normal`` (``mean``, ``std``, optional ``lower`` /
    ``upper`` truncation), ``uniform`` (``lower``, ``upper``) or ``lognormal`` (``mean``, ``std`` of the
    value itself). ``mean`` may be ``None`` until the config's value is filled in."""

    key: str
    distribution: str
    mean: float | None = None
    std: float | None = None
    lower: float = -math.inf
    upper: float = math.inf

    def _standard_bounds(self) -> tuple[float, float]:
        return (self.lower - self.mean) / self.std, (self.upper - self.mean) / self.std

    def ppf(self, u: np.ndarray) -> np.ndarray:
        """The values at uniform numbers ``u`` in (0, 1) (inverse distribution function)."""
        u = np.asarray(u, float)
        if self.distribution == "uniform":
            return self.lower + u * (self.upper - self.lower)
        if self.distribution == "lognormal":
            sigma2 = math.log1p((self.std / self.mean) ** 2)
            return np.exp(math.log(self.mean) - 0.5 * sigma2 + math.sqrt(sigma2) * normal_ppf(u))
        alpha, beta = self._standard_bounds()
        return self.mean + self.std * _truncated_standard_ppf(u, alpha, beta)

    def moments(self) -> tuple[float, float]:
        """``(mean, standard deviation)`` of the distribution as sampled (truncation included)."""
        if self.distribution == "uniform":
            return 0.5 * (self.lower + self.upper), (self.upper - self.lower) / math.sqrt(12.0)
        if self.distribution == "lognormal":
            return self.mean, self.std
        mean, std = _truncated_standard_moments(*self._standard_bounds())
        return self.mean + self.std * mean, self.std * std

    def mass_outside(self, low: float, high: float) -> float:
        """The probability of a draw below ``low`` or above ``high`` (truncation included)."""
        if self.distribution == "uniform":
            width = self.upper - self.lower
            return (min(max(low - self.lower, 0.0), width) + min(max(self.upper - high, 0.0), width)) / width
        if self.distribution == "lognormal":
            sigma = math.sqrt(math.log1p((self.std / self.mean) ** 2))
            mu = math.log(self.mean) - 0.5 * sigma**2
            below = float(normal_cdf((math.log(low) - mu) / sigma)) if low > 0.0 else 0.0
            above = float(normal_cdf(-(math.log(high) - mu) / sigma)) if math.isfinite(high) else 0.0
            return below + above
        alpha, beta = self._standard_bounds()
        z_low, z_high = (low - self.mean) / self.std, (high - self.mean) / self.std
        below = _kept(alpha, min(z_low, beta)) if z_low > alpha else 0.0
        above = _kept(max(z_high, alpha), beta) if z_high < beta else 0.0
        return (below + above) / _kept(alpha, beta)

    def probability(self) -> float:
        """The probability the truncation keeps (1 without bounds)."""
        if self.distribution != "normal":
            return 1.0
        alpha, beta = self._standard_bounds()
        return _kept(alpha, beta)


def _kept(alpha: float, beta: float) -> float:
    """``Phi(beta) - Phi(alpha)``, computed on the side of the mean where it keeps its precision."""
    if alpha > 0.0:
        return float(normal_cdf(-alpha) - normal_cdf(-beta))
    return float(normal_cdf(beta) - normal_cdf(alpha))


def _truncated_standard_moments(alpha: float, beta: float) -> tuple[float, float]:
    """Mean and standard deviation of the standard normal truncated to ``[alpha, beta]``."""
    if alpha > 0.0:
        mean, std = _truncated_standard_moments(-beta, -alpha)
        return -mean, std
    mass = _kept(alpha, beta)
    pa, pb = float(normal_pdf(alpha)), float(normal_pdf(beta))
    shift = (pa - pb) / mass
    tails = ((alpha * pa if math.isfinite(alpha) else 0.0) - (beta * pb if math.isfinite(beta) else 0.0)) / mass
    return shift, math.sqrt(1.0 + tails - shift * shift)


def _truncated_standard_ppf(u: np.ndarray, alpha: float, beta: float) -> np.ndarray:
    """Quantiles of the standard normal truncated to ``[alpha, beta]``."""
    if alpha > 0.0:  # upper tail: reflect, so that Phi stays away from 1
        return -_truncated_standard_ppf(1.0 - u, -beta, -alpha)
    lo, hi = float(normal_cdf(alpha)), float(normal_cdf(beta))
    return np.clip(normal_ppf(lo + u * (hi - lo)), alpha, beta)


@dataclasses.dataclass(frozen=True)
class CorrelatedNormal:
    """Jointly normal design keys (config units): mean ``mean`` and covariance ``covariance`` (rows and columns
    in the order of ``keys``), sampled from one uniform number per key (module docstring). ``source``: where they
    come from (a fit's results directory)."""

    keys: tuple[str, ...]
    mean: tuple[float, ...]
    covariance: tuple[tuple[float, ...], ...]
    source: str = ""

    def factor(self) -> np.ndarray:
        """The lower-triangular ``L`` with ``L L^T = covariance``; ``LinAlgError`` unless positive definite."""
        return np.linalg.cholesky(np.asarray(self.covariance, float))

    def ppf(self, u: np.ndarray) -> np.ndarray:
        """The values at uniform numbers ``u`` in (0, 1), shape ``(n, len(keys))``: ``mean + L Phi^-1(u)`` row by
        row, one column per key."""
        return np.asarray(self.mean) + normal_ppf(u) @ self.factor().T

    @property
    def std(self) -> np.ndarray:
        return np.sqrt(np.diag(np.asarray(self.covariance, float)))

    def correlation(self) -> np.ndarray:
        return np.asarray(self.covariance, float) / np.outer(self.std, self.std)

    @property
    def independent(self) -> bool:
        """No two keys correlated (a diagonal covariance)."""
        covariance = np.asarray(self.covariance, float)
        return not np.any(covariance - np.diag(np.diag(covariance)))

    def marginals(self) -> tuple[Dispersion, ...]:
        """Each key's own distribution: normal with its mean and standard deviation."""
        return tuple(Dispersion(k, "normal", float(m), float(s)) for k, m, s in zip(self.keys, self.mean, self.std))
