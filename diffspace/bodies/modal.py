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

**Kinetic energy** (paper Eqs. 12-16, derived completely to first order in the deflection). The body
frame's origin is the mass centre of the undeformed link (``int mu r ds = 0``; the rigid body carries the link's
mass ``m`` and inertia ``J_0``). A point of the beam sits at ``r(s) = root + s e_x`` and moves to ``r + w``; with
``u = R^T v`` (velocity of the origin) and ``omega`` in body axes, its velocity is ``u + omega x (r + w) + w'``
(``'``: time derivative in the body frame), and

.. math::
    T = \tfrac12\int_0^L \mu\,|u + \omega\times(r + w) + \dot w|^2 ds
      = \tfrac12 m\,u\cdot u + \tfrac12\omega\cdot J_0\omega
        + u\cdot(\omega\times S) + u\cdot L_v^T\dot\eta + \omega\cdot B(\eta)\dot\eta
        + \tfrac12\omega\cdot J_1(\eta)\omega + \tfrac12\dot\eta\cdot\dot\eta
        \;[+\; \tfrac12\omega\cdot J_2(\eta)\omega],

with the modal integrals (``m_k = int mu phi_k r ds``, a vector; ``c_k = int mu phi_k ds``)

* ``S(eta) = int mu w ds = L_v^T eta``, rows ``L_v,k = c_k e_{d_k}``: the deflection's first moment. It moves
  the link's mass centre to ``x + R S / m`` and couples translation and rotation (``u . (omega x S)``: the
  rotation carries the shifted mass centre round);
* ``B(eta) = L_omega^T + H(eta)``: ``L_omega,k = m_k x e_{d_k}`` (``int mu r x w'``; with ``L_v`` the paper's modal
  matrix ``L`` of Eqs. 13-16) and ``H(eta) eta' = int mu w x w' ds``, column ``l`` of ``H`` being
  ``sum_j (int mu phi_j phi_l) eta_j e_{d_j} x e_{d_l}`` (only modes of equal order in ``y`` and ``z`` couple);
* ``J_1(eta) = sum_k eta_k A_k``, ``A_k = 2 (m_k . e_{d_k}) 1 - m_k e_{d_k}^T - e_{d_k} m_k^T``: the first-order
  change of the inertia, ``int mu (2 (r . w) 1 - r w^T - w r^T)`` (paper Eq. 8's ``I_i(x(t))``);
* ``J_2(eta) = int mu (|w|^2 1 - w w^T)``: **dropped**, the only term of second order in ``eta`` in the mass
  matrix. Its effect on the modes is the centrifugal softening ``-omega^2 eta``, of the same order as the
  geometric (centrifugal) stiffening from the axial shortening ``-1/2 int w'^2`` that a transverse-only field
  leaves out; keeping one without the other is the inconsistent linearisation known to soften rotating beams
  spuriously (Kane, Ryan & Banerjee 1987). Both are ``~ omega^2 / Omega^2`` of the modal stiffness (below 1e-3
  for the paper's arm), and ``J_2`` is ``(|w| / L)^2`` of ``J_0`` in the rigid-body equations.

So the mass matrix is exact to first order in ``eta``. With ``v`` in world axes the link's block (columns
``[v, omega, eta']``) adds to the rigid body's ``diag(m 1, J_0)``

.. math::
    \begin{bmatrix} 0 & -R[S]_\times & R L_v^T \\ [S]_\times R^T & J_1(\eta) & B(\eta) \\
                    L_v R^T & B(\eta)^T & 1 \end{bmatrix}

(:meth:`ModalLink.mass_matrix`; the modal matrix is rotated to the inertial frame at every evaluation, as
Eq. 17 does). The momentum rows (Eqs. 7-8) are ``G^T M w`` of this same matrix: the linear momentum
``m v + R(omega x S + S')`` is the rate of ``m x + R S``, so the true mass centre of the system (deflection
included) stays fixed when the momentum is zero. Lagrange's equations with quasi-velocities (Kirchhoff's
equations for the body, ``p_u' + omega x p_u = R^T F``, ``p_omega' + omega x p_omega + u x p_u = tau``, with
``p = dT/d(u, omega)``; Lagrange's for ``eta``) give, with ``a = L_v^T eta'``,

.. math::
    m\dot v - R[S]_\times\dot\omega + R L_v^T\ddot\eta &= F - R\,(\omega\times(\omega\times S) + 2\,\omega\times a) \\
    [S]_\times R^T\dot v + J\dot\omega + B\ddot\eta &= T - \omega\times(J\omega + B\dot\eta)
        - J_1(\dot\eta)\,\omega \\
    L_v R^T\dot v + B^T\dot\omega + \ddot\eta &= -2\zeta\Omega\dot\eta - \Omega^2\eta
        + \tfrac12\,[\omega\cdot A_k\omega]_k - 2 H(\dot\eta)^T\omega,

``J = J_0 + J_1(eta)`` (the terms in ``u`` cancel: a uniform translation loads nothing; ``H(eta') eta' = 0``).
Paper Eqs. 15-16 are these with ``S``, ``J_1``, ``H`` and the velocity-product terms left out. Kept, they make
energy (``T + eta^T Omega^2 eta / 2``) and momentum exact invariants of the undamped, torque-free model. In the
paper's planar motion (``omega`` along ``z``, deflection along ``y``) ``J_1 omega``, ``H`` and ``A_k`` drop out:
there the first moment ``S`` is the whole first-order correction to Eqs. 15-16 (without it the end-effector
difference of the paper's example came out 31 % low against a segmented beam, and the mass centre drifted by
17 um). The first-order range: against a converged segmented beam the one-mode model stays within 1.5 % while
the link's ``omega^2 / Omega^2`` stays below 0.3 % (2-8 Hz, 0.25-1 N m); at 0.7 % (3 Hz, 1 N m) its end-effector
difference is 3 % low, from the second-order effects left out (growing with ``omega^2 / Omega^2`` like the rotational
stiffening and softening; the tip's axial shortening accounts for 0.1 %).
"""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from ..core.spatial import skew

# roots of 1 + cos(x) cosh(x) = 0 (clamped-free beam); higher ones are (2n - 1) pi / 2 to double precision
_ROOTS = (1.8751040687119611, 4.6940911329741746, 7.8547574382376126, 10.995540734875467, 14.137168391046471)
QUADRATURE_POINTS = 48


def clamped_free_root(n: int) -> float:
    """``beta_n L`` of the ``n``-th clamped-free bending mode (``n >= 1``)."""
    return _ROOTS[n - 1] if n <= len(_ROOTS) else (2 * n - 1) * np.pi / 2


def mode_shape(xi: Float[Array, "..."], n) -> Float[Array, "..."]:
    r"""``psi_n`` at ``xi = s / L`` (normalised: ``int_0^1 psi^2 dxi = 1``); ``n`` an order or an array of
    orders (then the result has ``n``'s axes first: all shapes in one traced evaluation).

    Written without the cancelling ``cosh - sigma sinh`` of the textbook form:
    ``cosh(z) - sigma sinh(z) = e^{z}(1 - sigma)/2 + e^{-z}(1 + sigma)/2`` with
    ``1 - sigma = (sin BL - cos BL - e^{-BL}) / (sinh BL + sin BL)``, so every term stays of order one.
    """
    bl = np.vectorize(clamped_free_root)(n).reshape(np.shape(n) + (1,) * jnp.ndim(xi))
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

    def shapes(self, s: Float[Array, "..."]) -> Float[Array, "k ..."]:
        """Mass-normalised shapes ``phi_k(s)`` of all coordinates at distances ``s`` from the root."""
        return mode_shape(s / self.length, np.array(self.orders)) / jnp.sqrt(self.mass)

    def shape(self, s: Float[Array, "..."], k: int) -> Float[Array, "..."]:
        """Mass-normalised shape ``phi_k(s)`` of coordinate ``k`` at distance ``s`` from the root."""
        return mode_shape(s / self.length, self.orders[k]) / jnp.sqrt(self.mass)

    def _moments(self) -> tuple[Float[Array, " k"], Float[Array, "k 3"]]:
        """``c_k = int mu phi_k ds`` and ``m_k = int mu phi_k r ds`` (Gauss-Legendre quadrature of the shapes)."""
        xi, weights = _gauss_legendre()
        s = self.length * jnp.asarray(xi)
        mu_ds = self.mass * jnp.asarray(weights)  # mu ds = (m / L) (L dxi)
        shapes = self.shapes(s)
        points = self.root + s[:, None] * jnp.array([1.0, 0.0, 0.0])
        return shapes @ mu_ds, (shapes * mu_ds) @ points

    def coupling(self) -> tuple[Float[Array, "k 3"], Float[Array, "k 3"]]:
        """Modal matrix ``(L_v, L_omega)`` in body axes: rows ``c_k e_{d_k}`` and ``m_k x e_{d_k}``."""
        c, first = self._moments()
        dirs = jnp.asarray(self.directions)
        return c[:, None] * dirs, jnp.cross(first, dirs)

    def _inertia_rates(self) -> Float[Array, "k 3 3"]:
        """``A_k = dJ_1 / d eta_k = 2 (m_k . e_k) 1 - m_k e_k^T - e_k m_k^T``."""
        _, first = self._moments()
        dirs = jnp.asarray(self.directions)
        trace = 2.0 * jnp.sum(first * dirs, axis=1)
        outer = first[:, :, None] * dirs[:, None, :]
        return trace[:, None, None] * jnp.eye(3) - outer - jnp.swapaxes(outer, 1, 2)

    def _relative_momentum(self, eta: Float[Array, " k"]) -> Float[Array, "3 k"]:
        """``H(eta)`` with ``H(eta) eta' = int mu w x w' ds`` (unit modal masses: equal orders couple)."""
        orders = np.array(self.orders)
        same = (orders[:, None] == orders[None, :]).astype(float)  # int mu phi_j phi_l ds
        dirs = self.directions
        crosses = np.cross(dirs[:, None, :], dirs[None, :, :])  # e_j x e_l
        return jnp.einsum("jl,j,jlc->cl", same, eta, crosses)

    def mass_matrix(self, rot: Float[Array, "3 3"], eta: Float[Array, " k"]) -> Float[Array, "n n"]:
        """The link's addition to its rigid body's ``diag(m 1, J_0)``, columns ``[v (world), omega, eta']``."""
        lv, lw = self.coupling()
        s = skew(lv.T @ eta)
        inertia = jnp.einsum("k,kij->ij", eta, self._inertia_rates())
        b = lw.T + self._relative_momentum(eta)
        return jnp.block([
            [jnp.zeros((3, 3)), -rot @ s, rot @ lv.T],
            [s @ rot.T, inertia, b],
            [lv @ rot.T, b.T, jnp.eye(self.modes)],
        ])

    def forces(self, rot, omega, eta, eta_dot) -> Float[Array, " n"]:
        """Stiffness, damping and velocity-product forces, rows ``[v, omega, eta']`` (module docstring; the rigid
        body's own ``-omega x J_0 omega`` is not included, and none depends on the body's velocity ``v``)."""
        lv, lw = self.coupling()
        rates = self._inertia_rates()
        s, a = lv.T @ eta, lv.T @ eta_dot
        on_mass_centre = -rot @ (jnp.cross(omega, jnp.cross(omega, s)) + 2.0 * jnp.cross(omega, a))
        inertia = jnp.einsum("k,kij->ij", eta, rates)
        relative = lw.T @ eta_dot + self._relative_momentum(eta) @ eta_dot
        on_rotation = -jnp.cross(omega, inertia @ omega + relative) - jnp.einsum("k,kij,j->i", eta_dot, rates, omega)
        freq = self.omegas()
        on_modes = (
            -2.0 * self.damping * freq * eta_dot
            - freq**2 * eta
            + 0.5 * jnp.einsum("i,kij,j->k", omega, rates, omega)
            - 2.0 * self._relative_momentum(eta_dot).T @ omega
        )
        return jnp.concatenate([on_mass_centre, on_rotation, on_modes])

    def mass_centre_offset(self, eta: Float[Array, " k"]) -> Float[Array, "3"]:
        """Shift of the link's mass centre by the deflection, body frame: ``S(eta) / m``."""
        lv, _ = self.coupling()
        return lv.T @ eta / self.mass

    def tip_deflection(self, eta: Float[Array, " k"]) -> Float[Array, "3"]:
        """Elastic displacement of the free end, body frame: ``sum_k phi_k(L) eta_k e_{d_k}``."""
        tips = self.shapes(self.length)
        return (tips * eta) @ jnp.asarray(self.directions)

    def tip_offset(self, eta: Float[Array, " k"]) -> Float[Array, "3"]:
        """Free end in the body frame, with the elastic deflection."""
        return self.root + jnp.array([self.length, 0.0, 0.0]) + self.tip_deflection(eta)
