r"""Constrained dynamics in any coordinates: KKT solve, Baumgarte stabilisation, projection, multipliers.

A system (an :class:`AbstractConstrainedSystem`) has configuration ``q`` (``nq``) and velocity ``w`` (``nv``),
linked by ``dq/dt = N(q) w`` (``rates``; ``nq != nv`` is allowed, e.g. quaternions with body angular
velocities), and obeys

.. math::
    M(q)\,\dot w + B^T\lambda = Q(t, q, w), \qquad \Phi(t, q) = 0, \qquad A(q)\,w = b(t),

with ``Phi`` the holonomic constraints (``m`` rows) and optional extra rows linear in the velocity (``k``
rows, given as the matrix ``A(q)`` and target ``b(t)``; the paper's momentum constraints, Eqs. 7-8).
``B`` is the velocity Jacobian, ``dPhi/dt = B w + Phi_t`` (paper Eq. 3), evaluated by forward-mode autodiff of
``Phi`` along ``N(q) w``.

**Index-1 formulation with Baumgarte stabilisation** (paper Eqs. 4, 9, 10). The constraints are imposed at
acceleration level, with the drift fed back:

.. math::
    \ddot\Phi + 2\alpha\dot\Phi + \beta^2\Phi = 0, \qquad \dot\psi + 2\alpha\psi = 0 \quad (\psi = A w - b),

so ``J \dot w = \gamma`` with ``J = [B; A]`` and ``gamma = -(d/dt)(J) w - Phi_tt - 2 alpha [Phi'; psi]
- beta^2 [Phi; 0]`` (the velocity-product term ``mu`` of Eq. 4, again by a forward-mode pass along
``(N(q) w, 1)`` at fixed ``w``). The KKT system (Eq. 10)

.. math:: \begin{bmatrix} M & J^T \\ J & 0\end{bmatrix}\begin{bmatrix}\dot w\\ \lambda\end{bmatrix}
          = \begin{bmatrix} Q \\ \gamma\end{bmatrix}

is solved through the Schur complement (Cholesky of ``M`` and of ``S = J M^{-1} J^T``, by the array loops of
:mod:`diffspace.core.linalg`: no LAPACK call, so the solves batch under ``vmap`` without jaxlib 0.10.2's
thread-pool deadlock, and they are differentiated implicitly); the rows must be independent (``S`` positive
definite). ``-J^T lambda`` is the generalised constraint force: the
multipliers are the joint reactions in the units of their rows.

**Projection** (optional, after every solver step). The index-1 solution drifts off ``Phi = 0`` at the
rate of the integration error; Baumgarte damps that drift but does not remove it. The projection takes the
mass-weighted least-norm correction back to the manifold, by a fixed number of Gauss-Newton iterations
(``lax.scan``; quadratic convergence from the already small drift)

.. math:: \delta w = -M^{-1}B^T (B M^{-1} B^T)^{-1}\Phi(q), \qquad q \leftarrow \mathrm{retract}(q, \delta w),

then the (exact, linear) velocity projection ``w -= M^{-1}J^T S^{-1} [Phi'; psi]``. It is applied by
:class:`ProjectedSolver`, a Diffrax solver wrapper that projects the end point of every step and restarts
the next step's first stage there (``made_jump``); the dense output joins the projected step ends, with
the unprojected step's interior slopes, so saved points inside a step carry the (small) drift of one step.
:func:`solve_constrained` is the driver.
"""

from __future__ import annotations

import abc

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from ..core.linalg import spd_solve, spd_solver


class AbstractConstrainedSystem(eqx.Module):
    """A mechanical system ``M w' + J^T lambda = Q`` with holonomic and velocity-level constraints."""

    @abc.abstractmethod
    def mass_matrix(self, q: Float[Array, " nq"]) -> Float[Array, "nv nv"]:
        """Symmetric positive-definite ``M(q)``."""

    @abc.abstractmethod
    def forces(self, t, q, w) -> Float[Array, " nv"]:
        """Applied plus velocity-product generalised forces ``Q(t, q, w)``."""

    @abc.abstractmethod
    def rates(self, q, w) -> Float[Array, " nq"]:
        """``dq/dt = N(q) w`` (plus terms to which the constraints are blind, e.g. quaternion-norm control)."""

    @abc.abstractmethod
    def retract(self, q, dw) -> Float[Array, " nq"]:
        """``q`` displaced by the velocity-space step ``dw`` (first order: ``q + N(q) dw``)."""

    @abc.abstractmethod
    def constraints(self, t, q) -> Float[Array, " m"]:
        """Holonomic (possibly rheonomic) constraints ``Phi(t, q)``."""

    def linear_rows(self, t, q) -> tuple[Float[Array, "k nv"], Float[Array, " k"]]:
        """Extra velocity-level rows ``A(q) w = b(t)`` as ``(A, b)`` (default none)."""
        return jnp.zeros((0, self.mass_matrix(q).shape[0])), jnp.zeros(0)


class Stabilization(eqx.Module):
    """Baumgarte gains (paper Eq. 9, 1/s; both zero: plain index-1) and the optional per-step projection."""

    alpha: Float[Array, ""] = eqx.field(converter=lambda x: jnp.asarray(x, dtype=float), default=0.0)
    beta: Float[Array, ""] = eqx.field(converter=lambda x: jnp.asarray(x, dtype=float), default=0.0)
    project: bool = eqx.field(static=True, default=False)
    iterations: int = eqx.field(static=True, default=2)


class ConstraintRows(eqx.Module):
    """The constraint rows at one state: ``jacobian`` ``J = [B; A]``, acceleration right-hand side ``gamma``
    (Baumgarte terms included), ``position`` ``Phi`` and ``velocity`` ``[Phi'; psi]``."""

    jacobian: Float[Array, "mk nv"]
    gamma: Float[Array, " mk"]
    position: Float[Array, " m"]
    velocity: Float[Array, " mk"]


def _time(t) -> Float[Array, ""]:
    return jnp.asarray(t, dtype=float)


def _affine_jacobian(fn, w: Float[Array, " nv"]) -> Float[Array, "r nv"]:
    """Jacobian of a function affine in ``w``: forward mode when it has more rows than columns, else reverse."""
    rows = jax.eval_shape(fn, w).shape[0]
    if rows == 0:
        return jnp.zeros((0, w.shape[0]))
    return jax.jacrev(fn)(w) if rows < w.shape[0] else jax.jacfwd(fn)(w)


def constraint_velocity(system: AbstractConstrainedSystem, t, q, w) -> Float[Array, " m"]:
    """``dPhi/dt = B w + Phi_t`` by one forward-mode pass along ``(N(q) w, 1)``."""
    t = _time(t)
    _, phi_dot = jax.jvp(lambda qq, tt: system.constraints(tt, qq), (q, t), (system.rates(q, w), jnp.ones_like(t)))
    return phi_dot


def constraint_rows(system: AbstractConstrainedSystem, t, q, w, stab: Stabilization) -> ConstraintRows:
    """Jacobian and Baumgarte-stabilised right-hand side of ``J w' = gamma`` (module docstring)."""
    t = _time(t)
    tangent = (system.rates(q, w), jnp.ones_like(t))

    def velocity_and_position(qq, tt):
        tangents = (system.rates(qq, w), jnp.ones_like(tt))
        phi, phi_dot = jax.jvp(lambda a, b: system.constraints(b, a), (qq, tt), tangents)
        return phi_dot, phi

    # one forward-over-forward pass: Phi, Phi' and Phi'' at zero acceleration
    phi_dot, phi_ddot_free, phi = jax.jvp(velocity_and_position, (q, t), tangent, has_aux=True)
    (jac_a, target), (jac_a_dot, target_dot) = jax.jvp(lambda qq, tt: system.linear_rows(tt, qq), (q, t), tangent)
    psi, psi_dot_free = jac_a @ w - target, jac_a_dot @ w - target_dot
    jac_b = _affine_jacobian(lambda ww: constraint_velocity(system, t, q, ww), w)
    gamma_b = -phi_ddot_free - 2.0 * stab.alpha * phi_dot - stab.beta**2 * phi
    gamma_a = -psi_dot_free - 2.0 * stab.alpha * psi
    return ConstraintRows(
        jacobian=jnp.concatenate([jac_b, jac_a]),
        gamma=jnp.concatenate([gamma_b, gamma_a]),
        position=phi,
        velocity=jnp.concatenate([phi_dot, psi]),
    )


def kkt_solve(mass, jacobian, force, gamma):
    """``(w', lambda)`` of ``[M J^T; J 0][w'; lambda] = [Q; gamma]`` by the Schur complement (Cholesky twice)."""
    minv = spd_solver(mass)
    free = minv(force)
    if jacobian.shape[0] == 0:
        return free, jnp.zeros(0)
    minv_jt = minv(jacobian.T)
    lam = spd_solve(jacobian @ minv_jt, jacobian @ free - gamma)
    return free - minv_jt @ lam, lam


def constrained_accelerations(system: AbstractConstrainedSystem, t, q, w, stab: Stabilization,
                              rows: ConstraintRows | None = None):
    """Accelerations ``w'`` and multipliers ``lambda`` (holonomic rows first, then the velocity rows);
    ``rows``: the :func:`constraint_rows` of this state when they are at hand."""
    rows = constraint_rows(system, t, q, w, stab) if rows is None else rows
    return kkt_solve(system.mass_matrix(q), rows.jacobian, system.forces(t, q, w), rows.gamma)


def _least_norm_step(minv, jacobian, residual):
    """Mass-weighted least-norm ``dw`` with ``J dw = -residual``: ``-M^{-1} J^T (J M^{-1} J^T)^{-1} residual``
    (``minv``: the solver of ``M``, :func:`~diffspace.core.linalg.spd_solver`)."""
    minv_jt = minv(jacobian.T)
    return -minv_jt @ spd_solve(jacobian @ minv_jt, residual)


def violation(system: AbstractConstrainedSystem, t, q, w) -> tuple[Float[Array, ""], Float[Array, ""]]:
    """``max |Phi|`` and ``max |[Phi'; A w - b]|`` at one state."""
    t = _time(t)
    phi, phi_dot = jax.jvp(lambda qq, tt: system.constraints(tt, qq), (q, t), (system.rates(q, w), jnp.ones_like(t)))
    jac_a, target = system.linear_rows(t, q)
    return max_abs(phi), max_abs(jnp.concatenate([phi_dot, jac_a @ w - target]))


def max_abs(x: Float[Array, " r"]) -> Float[Array, ""]:
    """``max |x|`` (0 for no rows)."""
    return jnp.max(jnp.abs(x), initial=0.0)


def _velocity_rows(system: AbstractConstrainedSystem, t, q, w):
    """``J = [B; A]`` and the velocity residual ``[Phi'; psi]`` (first derivatives only)."""
    jac_b = _affine_jacobian(lambda ww: constraint_velocity(system, t, q, ww), w)
    jac_a, target = system.linear_rows(t, q)
    residual = jnp.concatenate([constraint_velocity(system, t, q, w), jac_a @ w - target])
    return jnp.concatenate([jac_b, jac_a]), residual


def project_positions(system: AbstractConstrainedSystem, t, q, iterations: int = 2) -> Float[Array, " nq"]:
    """Gauss-Newton projection of ``q`` onto ``Phi(t, q) = 0`` (``iterations`` fixed steps, module docstring)."""
    t = _time(t)
    mass = system.mass_matrix(q)
    minv = spd_solver(mass)
    w_zero = jnp.zeros(mass.shape[0])
    if jax.eval_shape(lambda: system.constraints(t, q)).shape[0] == 0:
        return q

    def step(qk, _):
        jac = _affine_jacobian(lambda ww: constraint_velocity(system, t, qk, ww), w_zero)
        return system.retract(qk, _least_norm_step(minv, jac, system.constraints(t, qk))), None

    q, _ = jax.lax.scan(step, q, None, length=iterations)
    return q


def project_velocities(system: AbstractConstrainedSystem, t, q, w) -> Float[Array, " nv"]:
    """Velocity projected onto ``[B; A] w = [-Phi_t; b]`` (mass-weighted least norm, exact in one step)."""
    jacobian, residual = _velocity_rows(system, _time(t), q, w)
    if jacobian.shape[0] == 0:
        return w
    return w + _least_norm_step(spd_solver(system.mass_matrix(q)), jacobian, residual)
