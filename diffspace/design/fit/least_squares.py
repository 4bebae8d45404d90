"""Gradient-based nonlinear least squares for parameter identification (Levenberg-Marquardt).

Generic: the caller supplies a JAX residual function of a dict of named parameters; this module handles
the parametrisation (log for positive parameters, scaled logit for bounded ones, so the optimiser works
unconstrained), the Levenberg-Marquardt iteration (Marquardt diagonal scaling with More's update of the
scaling and Nielsen's damping update), and the linearised uncertainty at the optimum:

    Cov(theta) = s^2 (J^T J)^-1,   s^2 = 2 * cost / (m - p)   (or 1 with ``absolute_sigma=True``),

with ``J = dr/dtheta`` in the natural parameters (delta method through the transforms), ``m`` residuals
and ``p`` parameters. Use it for contact parameters (:func:`diffspace.scenarios.impact.fit`), joint
friction from ejection tests, or anything else with a differentiable residual.

The Jacobian is computed by reverse mode (``jax.jacrev``, default) because Diffrax solves with
``RecursiveCheckpointAdjoint`` have no forward-mode rule; ``jacobian="fwd"`` is available for residuals
that support it. The Python loop runs over optimiser iterations only; residual and Jacobian are jitted.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

Transform = str | tuple  # "log" | "none" | ("logit", lower, upper) | ("loglogit", lower, upper)


def _forward(transform: Transform, z):
    """Unconstrained ``z`` -> natural parameter."""
    if transform == "none":
        return z
    if transform == "log":
        return jnp.exp(z)
    kind, lo, hi = transform
    if kind == "loglogit":  # bounded and log-scaled: log x = log lo + (log hi - log lo) sigmoid(z)
        return jnp.exp(math.log(lo) + (math.log(hi) - math.log(lo)) * jax.nn.sigmoid(z))
    assert kind == "logit", transform
    return lo + (hi - lo) * jax.nn.sigmoid(z)


def _inverse(transform: Transform, x: float) -> float:
    if transform == "none":
        return float(x)
    if transform == "log":
        if not x > 0:
            raise ValueError(f"log-parametrised value must be > 0, got {x}")
        return math.log(x)
    kind, lo, hi = transform
    if not lo < x < hi:
        raise ValueError(f"value must lie strictly inside ({lo:g}, {hi:g}), got {x:g}")
    if kind == "loglogit":
        lo, hi, x = math.log(lo), math.log(hi), math.log(x)
    s = (x - lo) / (hi - lo)
    return math.log(s / (1.0 - s))


def at_bound(transform: Transform, z: float, margin: float = 1e-3) -> bool:
    """True if a bounded parameter sits within ``margin`` (of its range) of a bound: a saturated fit."""
    if isinstance(transform, str):
        return False
    s = 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0
    return s < margin or s > 1.0 - margin


@dataclass
class FitResult:
    """Optimum and linearised statistics. Arrays are numpy; ``jacobian`` is ``dr/dtheta`` (natural units);
    ``covariance`` and ``correlation`` have their rows and columns in the order of ``names``."""

    names: list[str]
    params: dict[str, float]
    std_errors: dict[str, float]
    covariance: np.ndarray
    correlation: np.ndarray
    residuals: np.ndarray
    jacobian: np.ndarray
    cost: float
    sigma2: float
    n_iter: int
    converged: bool
    message: str
    history: list[float] = field(default_factory=list)
    at_bound: list[str] = field(default_factory=list)

    @property
    def rms(self) -> float:
        return float(np.sqrt(np.mean(self.residuals**2)))

    def to_dict(self) -> dict:
        """JSON-ready summary (non-finite numbers become ``None``)."""
        fin = lambda x: float(x) if np.isfinite(x) else None  # noqa: E731
        return {
            "parameters": {k: fin(v) for k, v in self.params.items()},
            "std_errors": {k: fin(v) for k, v in self.std_errors.items()},
            "relative_std_errors": {
                k: fin(self.std_errors[k] / abs(v)) if v != 0 else None for k, v in self.params.items()
            },
            "covariance": [[fin(x) for x in row] for row in self.covariance],
            "correlation": [[fin(x) for x in row] for row in self.correlation],
            "residuals": [fin(x) for x in self.residuals],
            "rms_residual": fin(self.rms),
            "cost": fin(self.cost),
            "residual_variance": fin(self.sigma2),
            "iterations": self.n_iter,
            "converged": bool(self.converged),
            "at_bound": list(self.at_bound),
            "message": self.message,
        }


def least_squares(
    residual_fn: Callable[[dict[str, Array]], Float[Array, " m"]],
    initial: dict[str, float],
    transforms: dict[str, Transform] | None = None,
    *,
    max_iter: int = 100,
    ftol: float = 1e-12,
    xtol: float = 1e-10,
    gtol: float = 1e-12,
    damping0: float = 1e-3,
    absolute_sigma: bool = False,
    jacobian: str | Callable = "rev",
) -> FitResult:
    """Minimise ``0.5 * sum(residual_fn(params)**2)`` by Levenberg-Marquardt.

    ``initial``: starting values by name; ``transforms``: per name ``"log"`` (default; parameter > 0),
    ``"none"`` or ``("logit", lower, upper)``. ``residual_fn`` must be a pure JAX function of a dict of
    scalar arrays returning a 1D array; non-finite residuals make a trial step be rejected.
    ``absolute_sigma``: residuals are already divided by known measurement standard deviations, so the
    covariance is not rescaled by the residual variance.
    ``jacobian``: "rev" (default), "fwd", or a function of the parameter dict returning ``dr/dx`` as an
    ``(m, p)`` array in the order of ``initial`` (e.g. built row by row when residual rows are independent,
    which needs far fewer reverse passes than differentiating the stacked residual vector).
    """
    names = list(initial)
    transforms = {name: (transforms or {}).get(name, "log") for name in names}
    z0 = np.array([_inverse(transforms[n], initial[n]) for n in names], dtype=float)

    def natural(z):
        return {n: _forward(transforms[n], z[i]) for i, n in enumerate(names)}

    def rz(z):
        return jnp.asarray(residual_fn(natural(z)), dtype=float)

    m = jax.eval_shape(rz, jnp.asarray(z0)).shape[0]

    def r_and_jac(z):  # one compiled program for both (a trial step's unused Jacobian costs little)
        if callable(jacobian):  # dr/dx in natural parameters, chained with dx/dz of the transforms
            x = natural(z)
            dxdz = jnp.stack(
                [jax.grad(lambda zi, i=i: _forward(transforms[names[i]], zi))(z[i]) for i in range(len(names))]
            )
            return rz(z), jnp.asarray(jacobian(x)) * dxdz[None, :]
        if jacobian == "fwd":
            return rz(z), jax.jacfwd(rz)(z)
        r, pullback = jax.vjp(rz, z)
        return r, jax.vmap(pullback)(jnp.eye(m, dtype=r.dtype))[0]

    rj = jax.jit(r_and_jac)
    dxdz_j = jax.jit(lambda z: jnp.stack([jax.grad(lambda zi, i=i: _forward(transforms[names[i]], zi))(z[i])
                                          for i in range(len(names))]))

    z = z0
    r, J = (np.asarray(a) for a in rj(z))
    if not np.all(np.isfinite(r)):
        raise ValueError("residuals are not finite at the initial parameters")
    cost = 0.5 * float(r @ r)
    scale = np.maximum(np.diag(J.T @ J), 1e-300)
    mu = damping0
    nu = 2.0
    history = [cost]
    converged, message, it = False, "maximum iterations reached", 0
    for it in range(1, max_iter + 1):
        g = J.T @ r
        A = J.T @ J
        if np.max(np.abs(g) / np.sqrt(scale)) <= gtol * max(math.sqrt(2 * cost), 1e-300):
            converged, message = True, "gradient below gtol"
            break
        scale = np.maximum(scale, np.diag(A))
        step = np.linalg.solve(A + mu * np.diag(scale), -g)
        z_new = z + step
        r_new, J_new = (np.asarray(a) for a in rj(z_new))
        cost_new = 0.5 * float(r_new @ r_new) if np.all(np.isfinite(r_new)) else math.inf
        predicted = -(g @ step + 0.5 * step @ A @ step)
        rho = (cost - cost_new) / predicted if predicted > 0 else -1.0
        if rho > 0:
            small_step = np.linalg.norm(step) <= xtol * (np.linalg.norm(z) + xtol)
            small_gain = cost - cost_new <= ftol * cost
            z, r, cost, J = z_new, r_new, cost_new, J_new
            mu *= max(1.0 / 3.0, 1.0 - (2.0 * rho - 1.0) ** 3)
            nu = 2.0
            history.append(cost)
            if small_step or small_gain:
                converged = True
                message = "step below xtol" if small_step else "relative cost reduction below ftol"
                break
        else:
            mu *= nu
            nu *= 2.0
            if mu > 1e16:
                converged, message = True, "no further decrease possible (damping saturated)"
                break

    params = {n: float(v) for n, v in natural(jnp.asarray(z)).items()}
    saturated = [n for i, n in enumerate(names) if at_bound(transforms[n], float(z[i]))]
    if saturated:  # the optimum lies outside the allowed range: not a converged estimate
        converged, message = False, f"{', '.join(saturated)} at a bound of the allowed range ({message})"
    dxdz = np.asarray(dxdz_j(jnp.asarray(z)))
    jac_x = J / dxdz[None, :]
    m, p = jac_x.shape
    sigma2 = 1.0 if absolute_sigma else (2.0 * cost / (m - p) if m > p else math.nan)
    info = jac_x.T @ jac_x
    try:
        cov = sigma2 * np.linalg.inv(info)
    except np.linalg.LinAlgError:
        cov = sigma2 * np.linalg.pinv(info)
    std = np.sqrt(np.clip(np.diag(cov), 0.0, None)) if np.all(np.isfinite(cov)) else np.full(p, math.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        corr = cov / np.outer(std, std)
    return FitResult(
        names=names,
        params=params,
        std_errors={n: float(s) for n, s in zip(names, std)},
        covariance=cov,
        correlation=corr,
        residuals=r,
        jacobian=jac_x,
        cost=cost,
        sigma2=sigma2,
        n_iter=it,
        converged=converged,
        message=message,
        history=history,
        at_bound=saturated,
    )
