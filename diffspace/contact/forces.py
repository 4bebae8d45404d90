"""Compliant normal-contact force laws: Hertz stiffness plus the Hunt-Crossley family of damping terms.

All laws share the form of the seed paper's Eq. (1) (Cai et al. 2021, "Dynamic Modeling and Analysis of
Impact in Space Operation Tasks", Aerospace 8:381):

    F = k delta^n + lambda delta^n delta_dot            (delta > 0: indentation, delta_dot > 0: approaching)

with ``n = 1.5`` (Hertz) by default. Writing ``lambda = chi * k / v0`` with ``v0`` the normal approach speed
at the start of the contact gives ``F = k delta^n (1 + chi * delta_dot / v0)``; each law is a different map
from the input restitution coefficient ``c`` to ``chi`` (see ``CHI_LAWS``). For every law of this family
the output restitution ``e`` solves (energy balance of ``m v dv/d delta = -F``, integrated over a cycle)

    chi (1 + e) = ln((1 + chi) / (1 - chi e))

independent of ``k``, ``n``, the mass and ``v0``; ``restitution_closed_form`` solves it.

Kelvin-Voigt is the exception: ``F = k delta^n + D delta_dot`` with a linear dashpot (it needs the
effective mass, see ``ContactLaw``).

Every force is clamped at zero (never adhesive: a contact that would pull is released) and is exactly
zero for ``delta <= 0``. Powers of ``delta`` use the double-``where`` pattern so that neither the value nor
any gradient is NaN at ``delta = 0``.
"""

from __future__ import annotations

import abc
import math

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Float

# --------------------------------------------------------------------------------------------------
# chi(c) for the Hunt-Crossley family, lambda = chi * k / v0
# --------------------------------------------------------------------------------------------------


def _chi_hertz(c):
    """Purely elastic Hertz contact (Hertz 1882): no damping, ``chi = 0`` (``c`` is ignored)."""
    return jnp.zeros_like(c)


def _chi_hunt_crossley(c):
    """Hunt & Crossley (1975), J. Appl. Mech. 42:440-445: ``chi = 3 (1 - c) / 2``.

    Derived for c close to 1 from a linear decay of the hysteresis loop; under-damps at low c.
    """
    return 1.5 * (1.0 - c)


def _chi_lankarani_nikravesh(c):
    """Lankarani & Nikravesh (1990), J. Mech. Des. 112:369-376: ``chi = 3 (1 - c^2) / 4``.

    From the energy lost in a Hertz cycle assuming small dissipation (valid for c near 1).
    """
    return 0.75 * (1.0 - c * c)


def _chi_flores(c):
    """Flores, Machado, Silva & Martins (2011), Multibody Syst. Dyn. 25:357-375: ``chi = 8 (1 - c) / (5 c)``.

    Derived without the small-dissipation assumption; valid over the whole range 0 < c <= 1.
    """
    return 1.6 * (1.0 - c) / c


def _chi_gonthier(c):
    """Gonthier, McPhee, Lange & Piedboeuf (2004), Multibody Syst. Dyn. 11:209-233: ``chi = (1 - c^2) / c``."""
    return (1.0 - c * c) / c


def _chi_zhiying_qishao(c):
    """Zhiying & Qishao (Qin & Lu 2006, J. Dyn. Control 4:294-298), the seed paper's Eq. (2):

    ``lambda = 3 (1 - c^2) exp(2 (1 - c)) k / (4 v0)``, i.e. ``chi = 3 (1 - c^2) exp(2 (1 - c)) / 4``.
    The paper notes that output and input restitution agree best for 0.5 <= c <= 0.6.
    """
    return 0.75 * (1.0 - c * c) * jnp.exp(2.0 * (1.0 - c))


CHI_LAWS = {
    "hertz": _chi_hertz,
    "hunt_crossley": _chi_hunt_crossley,
    "lankarani_nikravesh": _chi_lankarani_nikravesh,
    "flores": _chi_flores,
    "gonthier": _chi_gonthier,
    "zhiying_qishao": _chi_zhiying_qishao,
}
LAWS = ("kelvin_voigt",) + tuple(CHI_LAWS)
"""All law names accepted by ``ContactLaw`` (``hertz`` = undamped)."""


def kelvin_voigt_damping_ratio(c: ArrayLike) -> Array:
    """Damping ratio ``zeta`` of a linear oscillator whose half-period decay equals ``c``.

    ``c = exp(-pi zeta / sqrt(1 - zeta^2))``  =>  ``zeta = -ln c / sqrt(pi^2 + ln^2 c)``. This is the classic
    spring-dashpot calibration (e.g. Tsuji, Tanaka & Ishida 1992, Powder Technol. 71:239). With a
    non-adhesive (clamped) force the actual restitution is higher; Schwager & Poeschel (2007, Granular
    Matter 9:465) give the exact value, see ``kelvin_voigt_restitution_linear``.

    Args:
        c: Restitution coefficient(s), in ``(0, 1]``.

    Returns:
        ``zeta``, with the shape of ``c``.
    """
    lnc = jnp.log(c)
    return -lnc / jnp.sqrt(jnp.pi**2 + lnc**2)


def kelvin_voigt_restitution_linear(zeta: float) -> float:
    """Exact restitution of the *clamped* linear spring-dashpot (n = 1) with damping ratio ``zeta < 1``.

    The force ``m (w0^2 x + 2 beta v)`` vanishes at ``w t = pi - 2 alpha``, ``tan(alpha) = beta / w``,
    ``w = w0 sqrt(1 - zeta^2)``, where the speed is exactly ``v0 exp(-beta t)`` (Schwager & Poeschel 2007), so
    ``e = exp(-zeta (pi - 2 alpha) / sqrt(1 - zeta^2))``.

    Args:
        zeta: Damping ratio, ``0 <= zeta < 1``.

    Returns:
        The restitution coefficient ``e``.
    """
    s = math.sqrt(1.0 - zeta * zeta)
    alpha = math.atan(zeta / s)
    return math.exp(-zeta * (math.pi - 2.0 * alpha) / s)


def restitution_closed_form(chi: float, tol: float = 1e-15) -> float:
    """Output restitution ``e`` of ``F = k d^n (1 + chi d_dot / v0)``.

    The root of ``chi (1 + e) - ln((1 + chi) / (1 - chi e)) = 0`` in ``(0, min(1, 1/chi))``, by bisection in
    float64 (host side).

    Args:
        chi: Dimensionless damping ``chi = lambda v0 / k``; ``chi <= 0`` gives 1.
        tol: Width of the final bracket.

    Returns:
        ``e``, independent of ``k``, ``n``, the mass and ``v0``.
    """
    if chi <= 0.0:
        return 1.0

    def g(e):
        inner = 1.0 - chi * e
        return chi * (1.0 + e) - math.log((1.0 + chi) / inner) if inner > 0.0 else -math.inf

    lo, hi = 0.0, min(1.0, 1.0 / chi)  # g(0) = chi - ln(1 + chi) > 0; g -> -inf as e -> 1/chi
    if g(hi) > 0.0:
        return hi
    while hi - lo > tol:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if g(mid) > 0.0 else (lo, mid)
    return 0.5 * (lo + hi)


def hertz_stiffness(
    youngs1: ArrayLike, poisson1: ArrayLike, radius1: ArrayLike,
    youngs2: ArrayLike, poisson2: ArrayLike, radius2: ArrayLike = math.inf,
) -> Array:
    """Hertz stiffness ``k = 4/3 E* sqrt(R*)`` [N/m^1.5] of two spheres (sphere-plane: ``radius2 = inf``).

    Paper Eq. (3): ``k = 4 / (3 pi (h1 + h2)) * sqrt(R1 R2 / (R1 + R2))`` with ``h_i = (1 - nu_i^2) / (pi E_i)``,
    which equals ``4/3 E* sqrt(R*)`` with ``1/E* = sum (1 - nu_i^2)/E_i`` and ``1/R* = 1/R1 + 1/R2``
    (Johnson, Contact Mechanics, 1985, ch. 4).

    Args:
        youngs1: Young's modulus of body 1 [Pa].
        poisson1: Poisson's ratio of body 1.
        radius1: Sphere radius of body 1 [m].
        youngs2: Young's modulus of body 2 [Pa].
        poisson2: Poisson's ratio of body 2.
        radius2: Sphere radius of body 2 [m]; ``inf`` for a plane.

    Returns:
        ``k`` [N/m^1.5] (arguments broadcast).
    """
    h = (1.0 - jnp.asarray(poisson1) ** 2) / (jnp.pi * youngs1) + (1.0 - jnp.asarray(poisson2) ** 2) / (
        jnp.pi * youngs2
    )
    radius2 = jnp.asarray(radius2, dtype=float)
    inv_r = 1.0 / jnp.asarray(radius1, dtype=float) + jnp.where(jnp.isinf(radius2), 0.0, 1.0 / radius2)
    return 4.0 / (3.0 * jnp.pi * h) * jnp.sqrt(1.0 / inv_r)


def safe_power(x: Float[Array, "*b"], n: ArrayLike) -> Float[Array, "*b"]:
    """``x^n`` for ``x > 0`` and ``0`` otherwise, with finite gradients (w.r.t. ``x`` and ``n``) everywhere."""
    pos = x > 0.0
    x_safe = jnp.where(pos, x, 1.0)
    return jnp.where(pos, x_safe**n, 0.0)


class AbstractContactLaw(eqx.Module):
    """A normal contact force ``F(delta, delta_dot; v0) >= 0`` (zero for ``delta <= 0``, never adhesive).

    Concrete laws: ``ContactLaw`` (named Hertz + damping laws), ``ChiLaw`` (its canonical form)
    and the snare's virtual spring. ``stiffness`` and ``exponent`` set the integrators' reference scales
    (``k delta^n``); ``release_indicator`` and ``force_rate_indicator`` are dimensionless event functions.
    """

    @abc.abstractmethod
    def elastic_force(self, delta):
        """The non-dissipative part of the force (zero for ``delta <= 0``)."""

    @abc.abstractmethod
    def unclamped_force(self, delta, delta_dot, impact_speed):
        """The law before the no-adhesion clamp (0 for ``delta <= 0``; may be < 0 while separating)."""

    @abc.abstractmethod
    def first_touch_force(self, impact_speed):
        """Limit of the force as ``delta -> 0+`` at ``delta_dot = v0``."""

    @abc.abstractmethod
    def release_indicator(self, delta, delta_dot, impact_speed):
        """O(1), positive while the law pushes, a simple zero where the force releases with ``delta > 0``."""

    @abc.abstractmethod
    def force_rate_indicator(self, delta, delta_dot, delta_ddot, impact_speed):
        """``dF/dt`` divided by a positive scale so that it is O(1) and, for laws that start at zero force,
        positive at first touch (``dF/dt`` itself vanishes there for ``n > 1``): its zeros are the force's
        extrema during a contact."""

    def force(self, delta, delta_dot, impact_speed):
        """Normal force [N], ``max(0, F_law)`` for ``delta > 0``, else 0 (broadcasts elementwise)."""
        f = self.unclamped_force(delta, delta_dot, impact_speed)
        return jnp.where(f > 0.0, f, 0.0)


class ContactLaw(AbstractContactLaw):
    """Normal contact law ``F(delta, delta_dot; v0)``: Hertz-type stiffness and a named damping law.

    Fields (arrays, differentiable): ``stiffness`` k [N/m^n], ``exponent`` n [-], ``restitution`` c (input
    coefficient, 0 < c <= 1), ``mass`` (effective mass [kg], only used by ``kelvin_voigt``). ``law`` (static):
    one of ``LAWS``.

    ``kelvin_voigt``: ``F = k delta^n + D delta_dot`` with ``D = 2 zeta sqrt(m k_eq)``, ``zeta`` from
    ``kelvin_voigt_damping_ratio`` and the secant stiffness ``k_eq = k delta_max^(n-1)`` at the
    undamped maximum indentation ``delta_max = ((n+1) m v0^2 / (2k))^(1/(n+1))`` (exact for n = 1). Unlike the
    other laws it is not zero at first touch (``F(0+) = D v0``), a known defect (paper, Section 1).
    """

    stiffness: Float[Array, ""]
    exponent: Float[Array, ""]
    restitution: Float[Array, ""]
    mass: Float[Array, ""] | None = None
    law: str = eqx.field(static=True, default="zhiying_qishao")

    def __init__(self, stiffness, exponent=1.5, restitution=1.0, mass=None, law: str = "zhiying_qishao"):
        if law not in LAWS:
            raise ValueError(f"unknown damping law '{law}' (known: {', '.join(LAWS)})")
        if law == "kelvin_voigt" and mass is None:
            raise ValueError("the kelvin_voigt law needs the effective mass (ContactLaw(..., mass=m))")
        self.stiffness = jnp.asarray(stiffness, dtype=float)
        self.exponent = jnp.asarray(exponent, dtype=float)
        self.restitution = jnp.asarray(restitution, dtype=float)
        self.mass = None if mass is None else jnp.asarray(mass, dtype=float)
        self.law = law

    def chi(self) -> Float[Array, ""]:
        """Dimensionless damping ``chi = lambda v0 / k`` of the Hunt-Crossley family (0 for Kelvin-Voigt)."""
        if self.law == "kelvin_voigt":
            return jnp.zeros_like(self.restitution)
        return CHI_LAWS[self.law](self.restitution)

    def _kv_reference(self, impact_speed):
        """Kelvin-Voigt: (positive-speed mask, safe speed, undamped maximum indentation)."""
        v0 = jnp.asarray(impact_speed, dtype=float)
        pos = v0 > 0.0
        v0s = jnp.where(pos, v0, 1.0)
        n = self.exponent
        d_max = ((n + 1.0) * self.mass * v0s**2 / (2.0 * self.stiffness)) ** (1.0 / (n + 1.0))
        return pos, v0s, d_max

    def damping(self, impact_speed: ArrayLike) -> Array:
        """``lambda = chi k / v0`` [N s/m^(n+1)] (Hunt-Crossley family) or the dashpot ``D`` [N s/m] (Kelvin-Voigt).

        Zero when ``impact_speed <= 0`` (no defined impact), with finite gradients.
        """
        if self.law != "kelvin_voigt":
            return self.canonical().damping(impact_speed)
        pos, _, d_max = self._kv_reference(impact_speed)
        k_eq = self.stiffness * d_max ** (self.exponent - 1.0)
        value = 2.0 * kelvin_voigt_damping_ratio(self.restitution) * jnp.sqrt(self.mass * k_eq)
        return jnp.where(pos, value, 0.0)

    def canonical(self) -> "ContactLaw | ChiLaw":
        """The same force as a ``ChiLaw`` (Hunt-Crossley family) or ``self`` (Kelvin-Voigt).

        Simulations trace the canonical form so that all Hunt-Crossley-family laws share one compiled
        program (the law name is static; ``chi(c)`` is an array computed outside the solve)."""
        if self.law == "kelvin_voigt":
            return self
        return ChiLaw(self.stiffness, self.exponent, self.chi())

    def elastic_force(self, delta: Float[Array, "*b"]) -> Float[Array, "*b"]:
        """``k delta^n`` (zero for ``delta <= 0``)."""
        return self.stiffness * safe_power(delta, self.exponent)

    def unclamped_force(self, delta, delta_dot, impact_speed) -> Array:
        """The law's force before the no-adhesion clamp (0 for ``delta <= 0``; may be < 0 while separating)."""
        if self.law != "kelvin_voigt":
            return self.canonical().unclamped_force(delta, delta_dot, impact_speed)
        delta, delta_dot = jnp.asarray(delta, float), jnp.asarray(delta_dot, float)
        f = self.stiffness * safe_power(delta, self.exponent) + self.damping(impact_speed) * delta_dot
        return jnp.where(delta > 0.0, f, 0.0)

    def first_touch_force(self, impact_speed) -> Array:
        """Limit of the force as ``delta -> 0+`` at ``delta_dot = v0``: ``D v0`` for Kelvin-Voigt, else 0."""
        if self.law != "kelvin_voigt":
            return jnp.zeros_like(jnp.asarray(impact_speed, float))
        return self.damping(impact_speed) * jnp.asarray(impact_speed, float)

    def release_indicator(self, delta, delta_dot, impact_speed) -> Array:
        """Smooth function that is positive while the law pushes and has a simple zero where the force is
        released with ``delta > 0`` (used as a separation event), dimensionless and O(1) so a root finder's
        absolute tolerance is meaningful. Hunt-Crossley family: ``1 + chi delta_dot / v0`` (the factor
        besides ``k delta^n``; stays > 0 for a frictionless impact since ``chi e < 1``); Kelvin-Voigt: the
        unclamped force ``k delta^n + D delta_dot`` divided by ``k delta_max^n``."""
        if self.law != "kelvin_voigt":
            return self.canonical().release_indicator(delta, delta_dot, impact_speed)
        _, _, d_max = self._kv_reference(impact_speed)
        return self.unclamped_force(delta, delta_dot, impact_speed) / (self.stiffness * d_max**self.exponent)

    def force_rate_indicator(self, delta, delta_dot, delta_ddot, impact_speed):
        """Kelvin-Voigt: ``(k n delta^(n-1) delta_dot + D delta_ddot) / (k delta_max^(n-1) v0)`` (negative at
        first touch: the force is largest at ``delta = 0+``); other laws: ``ChiLaw.force_rate_indicator``."""
        if self.law != "kelvin_voigt":
            return self.canonical().force_rate_indicator(delta, delta_dot, delta_ddot, impact_speed)
        _, v0s, d_max = self._kv_reference(impact_speed)
        n = self.exponent
        rate = self.stiffness * n * safe_power(delta, n - 1.0) * delta_dot + self.damping(impact_speed) * delta_ddot
        return rate / (self.stiffness * d_max ** (n - 1.0) * v0s)


class ChiLaw(AbstractContactLaw):
    """Hunt-Crossley-family law given directly by ``chi``: ``F = max(0, k delta^n (1 + chi delta_dot / v0))``.

    The canonical form of every ``ContactLaw`` except Kelvin-Voigt (same methods)."""

    stiffness: Float[Array, ""]
    exponent: Float[Array, ""]
    chi: Float[Array, ""]

    def elastic_force(self, delta):
        return self.stiffness * safe_power(delta, self.exponent)

    def damping(self, impact_speed):
        """``lambda = chi k / v0`` (0 for ``v0 <= 0``)."""
        v0 = jnp.asarray(impact_speed, float)
        pos = v0 > 0.0
        return jnp.where(pos, self.chi * self.stiffness / jnp.where(pos, v0, 1.0), 0.0)

    def _ratio(self, delta_dot, impact_speed):
        v0 = jnp.asarray(impact_speed, float)
        pos = v0 > 0.0
        return jnp.where(pos, self.chi * jnp.asarray(delta_dot, float) / jnp.where(pos, v0, 1.0), 0.0)

    def unclamped_force(self, delta, delta_dot, impact_speed):
        return self.elastic_force(jnp.asarray(delta, float)) * (1.0 + self._ratio(delta_dot, impact_speed))

    def first_touch_force(self, impact_speed):
        return jnp.zeros_like(jnp.asarray(impact_speed, float))

    def release_indicator(self, delta, delta_dot, impact_speed):
        return 1.0 + self._ratio(delta_dot, impact_speed)

    def force_rate_indicator(self, delta, delta_dot, delta_ddot, impact_speed):
        """``dF/dt / (k n delta^(n-1) v0) = (u (1 + chi u / v0) + chi delta delta_ddot / n v0) / v0``: equals
        ``1 + chi`` at first touch."""
        v0 = jnp.asarray(impact_speed, float)
        v0s = jnp.where(v0 > 0.0, v0, 1.0)
        delta = jnp.where(delta > 0.0, delta, 0.0)
        return (delta_dot * (1.0 + self.chi * delta_dot / v0s) + self.chi * delta * delta_ddot / (self.exponent * v0s)) / v0s
