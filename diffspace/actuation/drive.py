r"""Differentiable drive profiles ``q(t)`` for a driven coordinate (a snare's rotating ring, a manipulator joint).

Every profile is an :class:`equinox.Module` whose array fields are the parameters one may optimise (angles,
times); it defines the angle ``q(t)`` and inherits the rate ``q'(t)`` and acceleration ``q''(t)`` as exact
forward-mode derivatives (``jax.jvp`` in ``t``), so rates can never disagree with angles. All profiles start
and end at rest and hold their end values outside the motion interval (``q' = 0`` there), so a simulation
may run past the end of the motion. Units are the caller's (rad and s in this package).

* :class:`RestToRest`: the quintic minimum-jerk move (Flash & Hogan 1985) from ``q_0`` to ``q_1`` starting at
  ``t_0`` and lasting ``T``. With ``tau = clip((t - t_0) / T, 0, 1)``

  .. math:: q = q_0 + (q_1 - q_0)\,s(\tau),\quad s = 10\tau^3 - 15\tau^4 + 6\tau^5,

  ``s' = 30 tau^2 (1 - tau)^2``, ``s'' = 60 tau (1 - tau)(1 - 2 tau)``: angle, rate and acceleration are
  continuous everywhere and the rate and acceleration vanish at both ends. Peak rate ``15 (q_1 - q_0) / (8 T)``
  at ``tau = 1/2``, peak acceleration ``10 / sqrt(3) (q_1 - q_0) / T^2`` at ``tau = (3 -+ sqrt(3)) / 6``.
* :class:`Tabulated`: knot times ``t_k`` (strictly increasing) and values ``q_k``, joined by the monotone
  piecewise-cubic Hermite interpolant (Fritsch & Carlson 1980; slopes of Fritsch & Butland 1984 as in
  SciPy's PCHIP): on ``[t_k, t_{k+1}]`` with ``h_k = t_{k+1} - t_k``, ``u = (t - t_k) / h_k``,

  .. math:: q = h_{00}(u) q_k + h_{10}(u) h_k m_k + h_{01}(u) q_{k+1} + h_{11}(u) h_k m_{k+1},

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
import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Float


class Drive(eqx.Module):
    """A drive profile: subclasses define :meth:`angle`; rate and acceleration are its exact derivatives."""

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


class RestToRest(Drive):
    """Quintic minimum-jerk move from ``start`` to ``end`` during ``[start_time, start_time + duration]``."""

    start: Float[Array, ""]
    end: Float[Array, ""]
    duration: Float[Array, ""]
    start_time: Float[Array, ""]

    def __init__(self, start, end, duration, start_time=0.0):
        self.start = jnp.asarray(start, float)
        self.end = jnp.asarray(end, float)
        self.duration = jnp.asarray(duration, float)
        self.start_time = jnp.asarray(start_time, float)

    @property
    def end_time(self):
        return self.start_time + self.duration

    def angle(self, t):
        tau = jnp.clip((jnp.asarray(t, float) - self.start_time) / self.duration, 0.0, 1.0)
        return self.start + (self.end - self.start) * tau**3 * (10.0 + tau * (-15.0 + 6.0 * tau))


class Tabulated(Drive):
    """Monotone cubic Hermite (PCHIP) through ``(times[k], values[k])``, at rest at the first and last knot."""

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


__all__ = ["Drive", "RestToRest", "Tabulated"]
