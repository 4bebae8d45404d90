r"""The paper's virtual spring: a rope's quasi-static contact stiffness as a polynomial contact law.

Seed: Cai et al. 2021, Aerospace 8:381, Section 3.2. Static displacement-controlled solves at the contact
node give the force ``F_c(delta_v)`` (Eq. (40)); a polynomial without constant term (``F_c(0) = 0``) is
fitted to it, Eqs. (41)-(42),

$$k_v(\delta)\,\delta = \sum_{j=1}^{p} a_j \delta^j,\qquad
F_c(\delta, d_{se}) = \sum_{i=1}^{p}\sum_{j=0}^{q} c_{ij}\,\delta^i (d_{se} - d_{ref})^j,$$

and the dynamic contact of a striking mass ``m`` with the rope is the 1-D impact of Eq. (43),
``m delta'' = -(k_v(delta) delta + c_v delta')``: `VirtualSpringLaw` integrated by
`diffspace.contact.simulate_impact` against a fixed support. The rope's static solves live in
`diffspace.bodies.snare`; this module is the force law and the least-squares fits.
"""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp
from jaxtyping import Array, Float

from .forces import AbstractContactLaw
from .impact import IMPACT_SOLVER, ImpactOutcome, simulate_impact


class VirtualSpringLaw(AbstractContactLaw):
    r"""Eq. (43): ``F = max(0, sum_j a_j delta^j + c_v delta_dot)`` for ``delta > 0`` (never adhesive).

    ``coefficients`` ``a_1 .. a_p`` [N/m^j] (``a_1 = k_v(0)``), ``damping_coefficient`` ``c_v`` [N s/m],
    ``force_scale`` [N] (makes the release indicator O(1); `for_impact` uses the linearised peak
    ``v sqrt(a_1 m)``). ``stiffness = a_1`` and ``exponent = 1`` set only the integrator's scales.
    """

    coefficients: Float[Array, " p"]
    damping_coefficient: Float[Array, ""]
    force_scale: Float[Array, ""]

    @classmethod
    def for_impact(cls, coefficients, damping, mass, speed) -> "VirtualSpringLaw":
        """The law with the force scale of a mass ``mass`` [kg] striking at ``speed`` [m/s]."""
        coefficients = jnp.asarray(coefficients, float)
        scale = jnp.asarray(speed, float) * jnp.sqrt(coefficients[0] * jnp.asarray(mass, float))
        return cls(coefficients, jnp.asarray(damping, float), scale)

    @property
    def stiffness(self):
        return self.coefficients[0]

    @property
    def exponent(self):
        return jnp.ones(())

    def _powers(self, delta, offset: int):
        """``delta^(j + offset)`` for ``j = 0 .. p-1`` along a last axis (zero-safe: integer powers)."""
        return jnp.stack([delta ** (j + offset) for j in range(self.coefficients.shape[0])], axis=-1)

    def elastic_force(self, delta):
        delta = jnp.asarray(delta, float)
        return jnp.where(delta > 0.0, self._powers(delta, 1) @ self.coefficients, 0.0)

    def stiffness_at(self, delta):
        """Tangent stiffness ``d(k_v delta)/d delta = sum_j j a_j delta^(j-1)`` [N/m]."""
        delta = jnp.asarray(delta, float)
        orders = jnp.arange(1, self.coefficients.shape[0] + 1, dtype=float)
        return self._powers(delta, 0) @ (orders * self.coefficients)

    def unclamped_force(self, delta, delta_dot, impact_speed):
        delta = jnp.asarray(delta, float)
        return jnp.where(delta > 0.0, self.elastic_force(delta) + self.damping_coefficient * delta_dot, 0.0)

    def first_touch_force(self, impact_speed):
        return self.damping_coefficient * jnp.asarray(impact_speed, float)

    def release_indicator(self, delta, delta_dot, impact_speed):
        return self.unclamped_force(delta, delta_dot, impact_speed) / self.force_scale

    def force_rate_indicator(self, delta, delta_dot, delta_ddot, impact_speed):
        """``dF/dt = k_t(delta) delta_dot + c_v delta_ddot`` over ``a_1 v0`` (``1`` at first touch, ``c_v = 0``)."""
        v0 = jnp.asarray(impact_speed, float)
        v0s = jnp.where(v0 > 0.0, v0, 1.0)
        delta = jnp.where(delta > 0.0, delta, 0.0)
        rate = self.stiffness_at(delta) * delta_dot + self.damping_coefficient * delta_ddot
        return rate / (self.coefficients[0] * v0s)


def linear_contact_time(mass, k0) -> Array:
    """Half period ``pi sqrt(m / k_v(0))`` [s] of the linearised virtual spring."""
    return jnp.pi * jnp.sqrt(mass / k0)


def virtual_impact(coefficients, damping, mass, speed, *, t_max=None, n_save: int = 2, adjoint=None) -> ImpactOutcome:
    """Eq. (43): a mass ``mass`` [kg] striking the virtual spring at ``speed`` [m/s] (touch at ``t = 0``).

    The horizon ``t_max`` defaults to 20 linearised contact times (a softening spring releases late);
    ``status`` is ``NO_EVENT`` if the mass has not rebounded by then. Pure (jit/vmap/grad)."""
    law = VirtualSpringLaw.for_impact(coefficients, damping, mass, speed)
    t_max = 20.0 * linear_contact_time(mass, law.stiffness) if t_max is None else t_max
    settings = dataclasses.replace(IMPACT_SOLVER, n_save=n_save)
    return simulate_impact(law, mass, jnp.inf, speed, 0.0, t_max, settings=settings, adjoint=adjoint)


def fit_polynomial(depths, forces, degree: int, weights=None) -> Float[Array, " p"]:
    """Least-squares ``F_c = sum_{j=1..degree} a_j delta^j`` (Eq. (41) at one ``d_se``; no constant term,
    ``F_c(0) = 0``), optionally weighted (0 drops a point); returns ``a_1 .. a_degree``. Differentiable."""
    w = jnp.ones_like(forces) if weights is None else weights
    basis = jnp.stack([depths**j for j in range(1, degree + 1)], axis=1)
    scale = jnp.max(jnp.abs(basis * w[:, None]), axis=0)
    coef, *_ = jnp.linalg.lstsq(w[:, None] * basis / scale, w * forces)
    return coef / scale


def fit_surface(depths, end_distances, forces, degree: int, degree_d: int = 2, d_ref: float = 0.26, weights=None):
    """Eq. (41): ``F_c(delta, d_se) = sum_{i=1..degree} sum_{j=0..degree_d} c_ij delta^i (d_se - d_ref)^j``
    fitted to a grid ``forces (D, K)`` (optional 0/1 ``weights (D, K)``); returns ``c (degree, degree_d + 1)``."""
    dd, dl = jnp.meshgrid(jnp.asarray(end_distances) - d_ref, jnp.asarray(depths), indexing="ij")
    w = jnp.ones(dd.size) if weights is None else jnp.asarray(weights, float).ravel()
    terms = w[:, None] * jnp.stack([(dl**i * dd**j).ravel() for i in range(1, degree + 1) for j in range(degree_d + 1)], 1)
    scale = jnp.max(jnp.abs(terms), axis=0)
    coef, *_ = jnp.linalg.lstsq(terms / scale, w * jnp.asarray(forces).ravel())
    return (coef / scale).reshape(degree, degree_d + 1)


def eval_surface(coef, depth, end_distance, d_ref: float = 0.26):
    """``F_c(delta, d_se)`` of `fit_surface` coefficients."""
    i = jnp.arange(1, coef.shape[0] + 1)[:, None]
    j = jnp.arange(coef.shape[1])[None, :]
    return jnp.sum(coef * depth**i * (end_distance - d_ref) ** j)
