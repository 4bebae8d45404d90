r"""Differentiable drive profiles ``q(t)`` for a driven coordinate (a snare's rotating ring, a manipulator joint).

Every profile is an ``equinox.Module`` whose array fields are the parameters one may optimise (angles,
times); it defines the angle ``q(t)`` and inherits the rate ``q'(t)`` and acceleration ``q''(t)`` as exact
forward-mode derivatives (``jax.jvp`` in ``t``), so rates can never disagree with angles. All profiles start
and end at rest and hold their end values outside the motion interval (``q' = 0`` there), so a simulation
may run past the end of the motion. Units are the caller's (rad and s in this package).

* ``RestToRest``: the quintic minimum-jerk move (Flash & Hogan 1985) from ``q_0`` to ``q_1`` starting at
  ``t_0`` and lasting ``T``. With ``tau = clip((t - t_0) / T, 0, 1)``

    $$
    q = q_0 + (q_1 - q_0)\,s(\tau),\quad s = 10\tau^3 - 15\tau^4 + 6\tau^5,
    $$

  ``s' = 30 tau^2 (1 - tau)^2``, ``s'' = 60 tau (1 - tau)(1 - 2 tau)``: angle, rate and acceleration are
  continuous everywhere and the rate and acceleration vanish at both ends. Peak rate ``15 (q_1 - q_0) / (8 T)``
  at ``tau = 1/2``, peak acceleration ``10 / sqrt(3) (q_1 - q_0) / T^2`` at ``tau = (3 -+ sqrt(3)) / 6``.
* Point-to-point laws (``PointToPoint``: ``q = q_0 + (q_1 - q_0) s(tau)``, ``tau = (t - t_0) / T``,
  ``s(0) = 0``, ``s(1) = 1``, held outside ``[0, 1]``; at ``tau = 0`` and ``1`` rate and acceleration are the
  one-sided values inside the move). With ``h = q_1 - q_0``:

  - ``RestToRest`` (quintic, above; the mast paper's Eq. (49) ``theta_q``): peak rate ``1.875 h / T``.
  - ``Cubic`` (Eq. (49) ``theta_c``): ``s = 3 tau^2 - 2 tau^3``, rest at both ends but the acceleration
    jumps to ``+-6 h / T^2`` at the start and end; peak rate ``1.5 h / T``.
  - ``Cycloidal`` (Eq. (50), the paper's "pendulum" law): ``s = tau - sin(2 pi tau) / (2 pi)``, zero
    rate and acceleration at both ends; peak rate ``2 h / T``, peak acceleration ``2 pi h / T^2``.
  - ``Trapezoid`` (trapezoidal rate, Eq. (47)): constant acceleration during ramps of length ``t_r``,
    cruise rate ``h / (T - t_r)`` (the paper: 90 deg in 6.1 s with 0.1 s ramps, 15 deg/s):
    ``s = v tau^2 / (2 r)`` for ``tau < r``, ``v (tau - r / 2)`` in the cruise, ``1 - v (1 - tau)^2 / (2 r)``
    for ``tau > 1 - r``, with ``r = t_r / T`` and ``v = 1 / (1 - r)``.
  - ``BSpline`` (for optimisation): a clamped cubic B-spline in ``tau`` on uniform knots whose control
    polygon is ``[q_0, q_0, q_0, p_1, ..., p_K, q_1, q_1, q_1]``. The three repeated end points build the
    boundary conditions in: ``q(0) = q_0``, ``q(1) = q_1`` and zero rate and acceleration at both ends (the
    spline's end derivatives are multiples of ``P_1 - P_0`` and ``P_2 - 2 P_1 + P_0``), whatever the free
    interior points ``p_k`` (C2 inside; ``BSpline.fit`` gives the points approximating another law).
* ``Tabulated``: knot times ``t_k`` (strictly increasing) and values ``q_k``, joined by the monotone
  piecewise-cubic Hermite interpolant (Fritsch & Carlson 1980; slopes of Fritsch & Butland 1984 as in
  SciPy's PCHIP): on ``[t_k, t_{k+1}]`` with ``h_k = t_{k+1} - t_k``, ``u = (t - t_k) / h_k``,

    $$
    q = h_{00}(u) q_k + h_{10}(u) h_k m_k + h_{01}(u) q_{k+1} + h_{11}(u) h_k m_{k+1},
    $$

  ``h_00 = 2u^3 - 3u^2 + 1``, ``h_10 = u^3 - 2u^2 + u``, ``h_01 = -2u^3 + 3u^2``, ``h_11 = u^3 - u^2``. Interior
  slopes: with secants ``d_k = (q_{k+1} - q_k) / h_k``, ``m_k = 0`` where ``d_{k-1} d_k <= 0`` (a local
  extremum) and otherwise the weighted harmonic mean ``m_k = (w_1 + w_2) / (w_1 / d_{k-1} + w_2 / d_k)``,
  ``w_1 = 2 h_k + h_{k-1}``, ``w_2 = h_k + 2 h_{k-1}``; end slopes ``m_0 = m_{K-1} = 0`` (rest at the first
  and last knot, which makes the held ends C1). The result is C1, never overshoots monotone data, and is
  differentiable in knot values and times (the interval index is piecewise constant).
"""

from __future__ import annotations

import abc

import equinox as eqx
import jax
import numpy as np
import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Float


class Drive(eqx.Module):
    """A drive profile: subclasses define ``angle``; rate and acceleration are its exact derivatives."""

    @abc.abstractmethod
    def angle(self, t: Float[ArrayLike, ""]) -> Float[Array, ""]:
        """``q(t)``."""

    @property
    @abc.abstractmethod
    def end_time(self) -> Float[Array, ""]:
        """Time after which the profile holds its final value."""

    def state(self, t: Float[ArrayLike, ""]) -> tuple[Float[Array, ""], Float[Array, ""]]:
        """``(q(t), q'(t))`` from one forward-mode pass."""
        t = jnp.asarray(t, float)
        return jax.jvp(self.angle, (t,), (jnp.ones_like(t),))

    def rate(self, t: Float[ArrayLike, ""]) -> Float[Array, ""]:
        """``q'(t)``."""
        return self.state(t)[1]

    def acceleration(self, t: Float[ArrayLike, ""]) -> Float[Array, ""]:
        """``q''(t)``."""
        t = jnp.asarray(t, float)
        return jax.jvp(self.rate, (t,), (jnp.ones_like(t),))[1]


class PointToPoint(Drive):
    """Move from ``start`` to ``end`` during ``[start_time, start_time + duration]`` with the normalised shape
    ``shape`` ``s(tau)`` (``s(0) = 0``, ``s(1) = 1``); subclasses define the shape.

    Args:
        start: Value before the move [rad, or m for a prismatic joint].
        end: Value after the move [rad or m].
        duration: Length of the move [s].
        start_time: Time the move starts [s]; the drive rests at ``start`` until then.
    """

    start: Float[Array, ""]
    end: Float[Array, ""]
    duration: Float[Array, ""]
    start_time: Float[Array, ""]

    def __init__(self, start, end, duration, start_time=0.0):
        self.start = jnp.asarray(start, float)
        self.end = jnp.asarray(end, float)
        self.duration = jnp.asarray(duration, float)
        self.start_time = jnp.asarray(start_time, float)

    @abc.abstractmethod
    def shape(self, tau: Float[Array, ""]) -> Float[Array, ""]:
        """``s(tau)`` for ``tau`` in ``[0, 1]``."""

    @property
    def end_time(self):
        return self.start_time + self.duration

    def angle(self, t):
        tau = (jnp.asarray(t, float) - self.start_time) / self.duration
        inside = self.start + (self.end - self.start) * self.shape(tau)
        return jnp.where(tau < 0.0, self.start, jnp.where(tau > 1.0, self.end, inside))


class RestToRest(PointToPoint):
    """Quintic minimum-jerk move from ``start`` to ``end`` during ``[start_time, start_time + duration]``."""

    def shape(self, tau):
        return tau**3 * (10.0 + tau * (-15.0 + 6.0 * tau))


Quintic = RestToRest


class Cubic(PointToPoint):
    """Cubic ``s = 3 tau^2 - 2 tau^3`` (acceleration jumps at both ends)."""

    def shape(self, tau):
        return tau**2 * (3.0 - 2.0 * tau)


class Cycloidal(PointToPoint):
    """Cycloidal ``s = tau - sin(2 pi tau) / (2 pi)``."""

    def shape(self, tau):
        return tau - jnp.sin(2.0 * jnp.pi * tau) / (2.0 * jnp.pi)


class Trapezoid(PointToPoint):
    """Trapezoidal rate: constant-acceleration ramps of ``ramp`` seconds at both ends and a cruise between."""

    ramp: Float[Array, ""]

    def __init__(self, start, end, duration, ramp, start_time=0.0):
        super().__init__(start, end, duration, start_time)
        self.ramp = jnp.asarray(ramp, float)

    def shape(self, tau):
        r = self.ramp / self.duration
        v = 1.0 / (1.0 - r)
        return jnp.where(tau < r, 0.5 * v * tau**2 / r,
                         jnp.where(tau > 1.0 - r, 1.0 - 0.5 * v * (1.0 - tau) ** 2 / r, v * (tau - 0.5 * r)))


def _bspline_knots(n_points: int) -> np.ndarray:
    """Clamped uniform cubic knot vector for ``n_points + 6`` control points on ``[0, 1]``."""
    inner = np.arange(1, n_points + 3) / (n_points + 3)
    return np.concatenate([np.zeros(4), inner, np.ones(4)])


def bspline_basis(tau: Float[ArrayLike, ""], n_points: int) -> Float[Array, " P"]:
    """The ``n_points + 6`` cubic B-spline basis functions (Cox-de Boor) of ``BSpline`` at ``tau`` in
    ``[0, 1]`` (the last span is closed, so ``tau = 1`` is inside)."""
    knots = _bspline_knots(n_points)
    tau = jnp.asarray(tau, float)
    span = np.arange(len(knots) - 1)
    last = len(knots) - 5  # index of the last non-empty span
    basis = jnp.where((knots[span] <= tau) & ((tau < knots[span + 1]) | ((span == last) & (tau >= 1.0))), 1.0, 0.0)
    for p in (1, 2, 3):
        j = np.arange(len(knots) - 1 - p)
        left = knots[j + p] - knots[j]
        right = knots[j + p + 1] - knots[j + 1]
        inv_left = np.divide(1.0, left, out=np.zeros_like(left), where=left > 0)
        inv_right = np.divide(1.0, right, out=np.zeros_like(right), where=right > 0)
        basis = (tau - knots[j]) * inv_left * basis[j] + (knots[j + p + 1] - tau) * inv_right * basis[j + 1]
    return basis


class BSpline(PointToPoint):
    """Clamped cubic B-spline move with free interior control points ``points`` (angles, ``K >= 1``) and the
    boundary conditions built in (module docstring)."""

    points: Float[Array, " K"]

    def __init__(self, start, end, duration, points, start_time=0.0):
        super().__init__(start, end, duration, start_time)
        self.points = jnp.asarray(points, float)
        if self.points.ndim != 1 or self.points.shape[0] < 1:
            raise ValueError(f"BSpline needs a 1-D array of >= 1 interior control points, got {self.points.shape}")

    def control_polygon(self) -> Float[Array, " P"]:
        ends = jnp.ones(3)
        return jnp.concatenate([self.start * ends, self.points, self.end * ends])

    def shape(self, tau):
        h = self.end - self.start
        return (bspline_basis(tau, self.points.shape[0]) @ self.control_polygon() - self.start) / h

    def angle(self, t):
        tau = (jnp.asarray(t, float) - self.start_time) / self.duration
        inside = bspline_basis(tau, self.points.shape[0]) @ self.control_polygon()
        return jnp.where(tau < 0.0, self.start, jnp.where(tau > 1.0, self.end, inside))

    @classmethod
    def fit(cls, law: PointToPoint, n_points: int, n_samples: int = 401) -> "BSpline":
        """The spline with ``n_points`` interior points closest to ``law`` in least squares over the move
        (same start, end, duration and start time; host-side)."""
        taus = np.linspace(0.0, 1.0, n_samples)
        basis = np.asarray(jax.vmap(lambda x: bspline_basis(x, n_points))(taus))
        start, end = float(law.start), float(law.end)
        target = np.asarray(jax.vmap(law.shape)(jnp.asarray(taus))) * (end - start) + start
        fixed = basis[:, :3].sum(1) * start + basis[:, -3:].sum(1) * end
        points, *_ = np.linalg.lstsq(basis[:, 3:-3], target - fixed, rcond=None)
        return cls(start, end, law.duration, points, law.start_time)


class Tabulated(Drive):
    """Monotone cubic Hermite (PCHIP) through ``(times[k], values[k])``, at rest at the first and last knot.

    Args:
        times: Knot times, strictly increasing, shape ``(K,)`` with ``K >= 2`` [s].
        values: Values at the knots, shape ``(K,)`` [rad, or m for a prismatic joint].

    Raises:
        ValueError: Knot arrays that are not 1-D, of equal length and at least 2 long.
    """

    times: Float[Array, " K"]
    values: Float[Array, " K"]

    def __init__(self, times, values):
        self.times = jnp.asarray(times, float)
        self.values = jnp.asarray(values, float)
        if self.times.ndim != 1 or self.times.shape != self.values.shape or self.times.shape[0] < 2:
            raise ValueError(f"Tabulated needs equal-length 1-D knot times and values (>= 2), got shapes "
                             f"{self.times.shape} and {self.values.shape}")

    @property
    def end_time(self):
        return self.times[-1]

    def slopes(self) -> Float[Array, " K"]:
        """Knot slopes ``m_k`` (Fritsch-Butland weighted harmonic mean; zero at extrema and at both ends)."""
        h = jnp.diff(self.times)
        d = jnp.diff(self.values) / h
        w1 = 2.0 * h[1:] + h[:-1]
        w2 = h[1:] + 2.0 * h[:-1]
        same = d[:-1] * d[1:] > 0.0
        d0 = jnp.where(same, d[:-1], 1.0)  # safe denominators (double where: finite gradients at d = 0)
        d1 = jnp.where(same, d[1:], 1.0)
        inner = jnp.where(same, (w1 + w2) / (w1 / d0 + w2 / d1), 0.0)
        return jnp.concatenate([jnp.zeros(1), inner, jnp.zeros(1)])

    def angle(self, t):
        t = jnp.clip(jnp.asarray(t, float), self.times[0], self.times[-1])
        k = jnp.clip(jnp.searchsorted(self.times, t, side="right") - 1, 0, self.times.shape[0] - 2)
        m = self.slopes()
        h = self.times[k + 1] - self.times[k]
        u = (t - self.times[k]) / h
        h00 = 2.0 * u**3 - 3.0 * u**2 + 1.0
        h10 = u**3 - 2.0 * u**2 + u
        h01 = -2.0 * u**3 + 3.0 * u**2
        h11 = u**3 - u**2
        return h00 * self.values[k] + h10 * h * m[k] + h01 * self.values[k + 1] + h11 * h * m[k + 1]


__all__ = ["BSpline", "Cubic", "Cycloidal", "Drive", "PointToPoint", "Quintic", "RestToRest", "Tabulated",
           "Trapezoid", "bspline_basis"]
