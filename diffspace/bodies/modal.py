r"""Assumed-mode flexible link: clamped-free Euler-Bernoulli bending modes attached to a rigid body.

The link is a uniform beam (mass per length ``mu = m / L``) along its body's ``x`` axis, clamped at
``root`` (body frame) and free at ``root + L e_x``. Its transverse deflection (paper Eqs. 11-12) is

.. math:: w(s, t) = \sum_k \phi_k(s)\,\eta_k(t)\,e_{d_k}, \qquad 0 \le s \le L,

with ``e_{d_k}`` the body ``y`` or ``z`` axis. The clamped-free modes of Eq. 11
(``EI w'''' = -mu w_tt``, ``w(0) = w'(0) = 0``, ``w''(L) = w'''(L) = 0``) are

.. math:: \psi_n(s) = \cosh\beta_n s - \cos\beta_n s - \sigma_n(\sinh\beta_n s - \sin\beta_n s), \quad
          \sigma_n = \frac{\cosh\beta_n L + \cos\beta_n L}{\sinh\beta_n L + \sin\beta_n L},

``1 + cos(beta_n L) cosh(beta_n L) = 0`` (``beta_n L = 1.8751, 4.6941, 7.8548, ...``), normalised to
``int psi^2 ds = L`` and scaled to unit modal mass, ``phi_n = psi_n / sqrt(m)`` (``int mu phi_i phi_j = delta_ij``).
The modal frequencies are ``omega_n = (beta_n L)^2 sqrt(EI / (mu L^4))``: the configured first frequency fixes
``EI``, and ``omega_n = omega_1 (beta_n / beta_1)^2``. Modal coordinates are taken in order
(mode 1 in ``y``, mode 1 in ``z``, mode 2 in ``y``, ...); ``modes = 2`` is the paper's first mode in both
transverse directions.

**Coupling** (paper Eqs. 13-16). The kinetic energy of the link, to first order in the deflection, is the
rigid body's plus

.. math:: T_c = \dot\eta^T (L_v u + L_\omega \omega) + \tfrac12 \dot\eta^T\dot\eta, \qquad u = R^T v,

with the modal matrix rows ``L_v,k = c_k e_{d_k}``, ``L_omega,k = e_x x e_{d_k} d_k``,
``c_k = int mu phi_k ds`` and ``d_k = int mu (x_root + s) phi_k ds`` (moment about the centre of mass,
body origin). With ``v`` in world axes, the mass-matrix block is ``[L_v R^T, L_omega]``: the modal matrix is
transformed to the inertial frame at every evaluation, as the paper's Eq. 17 does. The equations of motion
follow from Lagrange's equations with quasi-velocities (Euler-Poincare for the body rotation), with
``a = L_v^T eta'``, ``b = L_omega^T eta'``:

.. math::
    m\dot v + R L_v^T\ddot\eta &= F - R(\omega \times a) \\
    J\dot\omega + L_\omega^T\ddot\eta &= T - \omega\times(J\omega + b) + a \times u \\
    L_v R^T \dot v + L_\omega\dot\omega + \ddot\eta &= -2\zeta\Omega\dot\eta - \Omega^2\eta + L_v(\omega\times u).

Eqs. 15-16 of the paper are these equations without the velocity-product terms on the right; keeping
them makes energy (``T + eta^T Omega^2 eta / 2``) and momentum (``G^T M w``, see
:meth:`.rigid.RigidBodies.generators`) exact invariants of the undamped, torque-free model. The terms of
second order in the deflection (geometric stiffening, deflection-dependent inertia) are neglected.
"""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

# roots of 1 + cos(x) cosh(x) = 0 (clamped-free beam); higher ones are (2n - 1) pi / 2 to double precision
_ROOTS = (1.8751040687119611, 4.6940911329741746, 7.8547574382376126, 10.995540734875467, 14.137168391046471)
QUADRATURE_POINTS = 48


def clamped_free_root(n: int) -> float:
    """``beta_n L`` of the ``n``-th clamped-free bending mode (``n >= 1``)."""
    return _ROOTS[n - 1] if n <= len(_ROOTS) else (2 * n - 1) * np.pi / 2


def mode_shape(xi: Float[Array, "..."], n: int) -> Float[Array, "..."]:
    r"""``psi_n`` at ``xi = s / L`` (normalised: ``int_0^1 psi^2 dxi = 1``).

    Written without the cancelling ``cosh - sigma sinh`` of the textbook form:
    ``cosh(z) - sigma sinh(z) = e^{z}(1 - sigma)/2 + e^{-z}(1 + sigma)/2`` with
    ``1 - sigma = (sin BL - cos BL - e^{-BL}) / (sinh BL + sin BL)``, so every term stays of order one.
    """
    bl = clamped_free_root(n)
    denominator = np.sinh(bl) + np.sin(bl)
    sigma = (np.cosh(bl) + np.cos(bl)) / denominator
    one_minus_sigma = (np.sin(bl) - np.cos(bl) - np.exp(-bl)) / denominator
    z = bl * xi
    growing = 0.5 * one_minus_sigma * jnp.exp(z)
    decaying = 0.5 * (1.0 + sigma) * jnp.exp(-z)
    return growing + decaying - jnp.cos(z) + sigma * jnp.sin(z)


def _gauss_legendre() -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights on ``[0, 1]``."""
    x, w = np.polynomial.legendre.leggauss(QUADRATURE_POINTS)
    return 0.5 * (x + 1.0), 0.5 * w


class ModalLink(eqx.Module):
    """Assumed bending modes of rigid body ``body`` (module docstring); ``modes`` coordinates.

    ``root``: clamped end in the body frame (the beam runs along ``+x`` from it); ``frequency``: first
    bending frequency (Hz); ``damping``: modal damping ratio ``zeta`` (all modes).
    """

    body: int = eqx.field(static=True)
    modes: int = eqx.field(static=True)
    length: Float[Array, ""]
    mass: Float[Array, ""]
    root: Float[Array, "3"]
    frequency: Float[Array, ""]
    damping: Float[Array, ""]

    @property
    def orders(self) -> tuple[int, ...]:
        """Bending-mode number of each coordinate (1, 1, 2, 2, ...)."""
        return tuple(k // 2 + 1 for k in range(self.modes))

    @property
    def directions(self) -> np.ndarray:
        """Deflection axis (body frame) of each coordinate: ``y`` for even, ``z`` for odd positions."""
        return np.array([[0.0, 1.0, 0.0] if k % 2 == 0 else [0.0, 0.0, 1.0] for k in range(self.modes)])

    def omegas(self) -> Float[Array, " k"]:
        """Circular frequencies ``omega_n = 2 pi f_1 (beta_n / beta_1)^2``."""
        ratio = np.array([(clamped_free_root(n) / clamped_free_root(1)) ** 2 for n in self.orders])
        return 2.0 * jnp.pi * self.frequency * ratio

    def bending_stiffness(self) -> Float[Array, ""]:
        """``EI`` of the uniform beam with the configured first frequency."""
        mu = self.mass / self.length
        return (2.0 * jnp.pi * self.frequency) ** 2 * mu * self.length**4 / clamped_free_root(1) ** 4

    def shape(self, s: Float[Array, "..."], k: int) -> Float[Array, "..."]:
        """Mass-normalised shape ``phi_k(s)`` of coordinate ``k`` at distance ``s`` from the root."""
        return mode_shape(s / self.length, self.orders[k]) / jnp.sqrt(self.mass)

    def coupling(self) -> tuple[Float[Array, "k 3"], Float[Array, "k 3"]]:
        """Modal matrix ``(L_v, L_omega)`` in body axes (Gauss-Legendre quadrature of the shapes)."""
        xi, weights = _gauss_legendre()
        s = self.length * jnp.asarray(xi)
        mu_ds = self.mass * jnp.asarray(weights)  # mu ds = (m / L) (L dxi)
        shapes = jnp.stack([self.shape(s, k) for k in range(self.modes)])
        c = shapes @ mu_ds
        d = shapes @ (mu_ds * (self.root[0] + s))
        dirs = jnp.asarray(self.directions)
        return c[:, None] * dirs, d[:, None] * jnp.cross(jnp.array([1.0, 0.0, 0.0]), dirs)

    def tip_deflection(self, eta: Float[Array, " k"]) -> Float[Array, "3"]:
        """Elastic displacement of the free end, body frame: ``sum_k phi_k(L) eta_k e_{d_k}``."""
        tips = jnp.stack([self.shape(self.length, k) for k in range(self.modes)])
        return (tips * eta) @ jnp.asarray(self.directions)

    def tip_offset(self, eta: Float[Array, " k"]) -> Float[Array, "3"]:
        """Free end in the body frame, with the elastic deflection."""
        return self.root + jnp.array([self.length, 0.0, 0.0]) + self.tip_deflection(eta)
