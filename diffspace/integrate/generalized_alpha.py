r"""Generalized-alpha integration of stiff constrained mechanical systems (index-3 DAE, fixed step).

For an :class:`~.constrained.AbstractConstrainedSystem` in vector-space coordinates (``q`` and ``w = dq/dt``
of equal size, ``retract(q, dw) = q + dw``) with a constant mass matrix,

.. math:: M\ddot q + G(t, q)^T\lambda = Q(t, q, \dot q), \qquad g(t, q) = 0,

the generalized-alpha scheme of Chung & Hulbert (1993) in the constrained form of Arnold & Bruls (2007)
advances ``(q, v, qdd, a, lambda)`` by a step ``h`` with

.. math::
    q_{n+1} &= q_n + h v_n + h^2 (\tfrac12 - \beta) a_n + h^2 \beta a_{n+1}, \qquad
    v_{n+1} = v_n + h (1 - \gamma) a_n + h \gamma a_{n+1},\\
    (1 - \alpha_m) a_{n+1} + \alpha_m a_n &= (1 - \alpha_f) \ddot q_{n+1} + \alpha_f \ddot q_n,

where ``qdd_{n+1}`` and ``lambda_{n+1}`` satisfy the equations of motion and the **position** constraints
at ``t_{n+1}`` (index 3: no drift, no Baumgarte, no projection needed). From the spectral radius at infinite
frequency ``rho_inf`` (numerical damping of the unresolved high frequencies, here the shell's kHz modes):
``alpha_m = (2 rho - 1) / (rho + 1)``, ``alpha_f = rho / (rho + 1)``, ``gamma = 1/2 + alpha_f - alpha_m``,
``beta = (gamma + 1/2)^2 / 4``; second order, unconditionally stable.

**Newton iteration** in ``(qdd_{n+1}, lambda_{n+1})``: residuals ``r_1 = M qdd - Q + G^T lambda`` and
``r_2 = g / c_k`` with ``c_k = beta h^2 (1 - alpha_f) / (1 - alpha_m)``, ``c_c = gamma h (1 - alpha_f) /
(1 - alpha_m)``, iteration matrix

.. math:: S = \begin{bmatrix} M + c_c C + c_k K & G^T \\ G & 0 \end{bmatrix},\qquad
          K = -\partial Q/\partial q,\ C = -\partial Q/\partial\dot q.

``S`` is inverted once (:class:`IterationMatrix`) and reused step after step (a chord / modified Newton
iteration; each correction is one matrix-vector product, on a CPU several times faster than the triangular
solves of LU factors, and the iteration's fixed point does not depend on how ``S^{-1}`` is applied): either
frozen at the state where it was formed or, for systems whose coordinates are all 3-vectors and that
turn rigidly about a known axis (a deploying mast), **co-rotated**: ``S(t) = Q(t) S_0 Q(t)^T`` with ``Q``
the block rotation by ``R(t)``, exact for the rigidly rotated reference state, so only the small elastic
deformation and stress separate it from the true Jacobian and each iteration contracts the error by about
that ratio. **Refactoring**: when the deformation (or a jump of the drive's acceleration) leaves that
tangent behind, so that a step's iteration ends with an estimated error above a tenth of its tolerance, the
step is taken again from its start with ``S`` assembled and inverted there (the element tangents of the
deformed structure and the constraints' second derivatives weighted by the multipliers) and twice the
iterations; later steps keep the new inverse. The step and its retake share one traced chord iteration (a
``lax.scan`` over three chunks of ``iterations`` corrections: the first with the carried matrix, the other two,
run only for a retake, restarted with the fresh one), so the compiled program holds the residual and its
solve once. A fixed number of iterations keeps the step a fixed computation: reverse-mode differentiation
goes through the (``stop_gradient``-ed) inverse and the unrolled iterations, whose derivative converges
to the implicit-function derivative as fast as the iterates converge.

:func:`alpha_solve` runs ``n_frames x stride`` steps in nested ``lax.scan`` loops (``jax.checkpoint`` per
step: memory is one state per step), records ``observe(state)`` after every step and the state at every
frame.
"""

from __future__ import annotations

from functools import partial
from typing import Callable

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from .constrained import AbstractConstrainedSystem, kkt_solve


class AlphaParameters(eqx.Module):
    """Generalized-alpha coefficients (module docstring) for the spectral radius ``rho_inf`` in ``[0, 1]``."""

    alpha_m: float = eqx.field(static=True)
    alpha_f: float = eqx.field(static=True)
    gamma: float = eqx.field(static=True)
    beta: float = eqx.field(static=True)

    @classmethod
    def from_spectral_radius(cls, rho_inf: float) -> "AlphaParameters":
        alpha_m = (2.0 * rho_inf - 1.0) / (rho_inf + 1.0)
        alpha_f = rho_inf / (rho_inf + 1.0)
        gamma = 0.5 + alpha_f - alpha_m
        return cls(alpha_m, alpha_f, gamma, 0.25 * (gamma + 0.5) ** 2)

    def coefficients(self, h) -> tuple[Float[Array, ""], Float[Array, ""]]:
        """``(c_k, c_c)``: ``d q_{n+1} / d qdd_{n+1}`` and ``d v_{n+1} / d qdd_{n+1}``."""
        ratio = (1.0 - self.alpha_f) / (1.0 - self.alpha_m)
        return self.beta * h**2 * ratio, self.gamma * h * ratio


class AlphaState(eqx.Module):
    """Time, position, velocity, acceleration ``qdd``, pseudo-acceleration ``a`` and multipliers."""

    t: Float[Array, ""]
    q: Float[Array, " n"]
    v: Float[Array, " n"]
    acc: Float[Array, " n"]
    a: Float[Array, " n"]
    lam: Float[Array, " m"]


class IterationMatrix(eqx.Module):
    """The inverse of ``S`` assembled at the time ``t_ref`` (module docstring) and, optionally, the rotation
    ``R(t)`` of the rigid motion (co-rotation: ``S`` is turned by ``R(t) R(t_ref)^T``); ``n`` is the number of
    coordinates. The inverse is stored flat (row after row): a 1-D array has one memory layout, so the
    compiled time loop, which carries it from step to step, does not transpose it on every step between the
    inversion's (column-major) result and the product's (row-major) operand."""

    inverse: Float[Array, " ss"]
    t_ref: Float[Array, ""]
    n: int = eqx.field(static=True)
    rotation: Callable | None = None

    def solve(self, t, r_dyn: Float[Array, " n"], r_con: Float[Array, " m"]):
        """``S(t)^{-1} [r_dyn; r_con]`` split as ``(dq, dlam)``."""
        rot = None if self.rotation is None else self.rotation(t) @ self.rotation(self.t_ref).T
        if rot is not None:
            r_dyn = (r_dyn.reshape(-1, 3) @ rot).reshape(-1)  # R^T per 3-vector
        r = jnp.concatenate([r_dyn, r_con])
        x = self.inverse.reshape(r.shape[0], r.shape[0]) @ r
        dq, dlam = x[: self.n], x[self.n:]
        if rot is not None:
            dq = (dq.reshape(-1, 3) @ rot.T).reshape(-1)
        return dq, dlam


def constraint_jacobian(system: AbstractConstrainedSystem, t, q) -> Float[Array, "m n"]:
    """``G = dg/dq`` (forward mode)."""
    return jax.jacfwd(lambda qq: system.constraints(t, qq))(q)


def iteration_matrix(mass, stiffness, damping, jacobian, params: AlphaParameters, h,
                     rotation: Callable | None = None, t_ref=0.0) -> IterationMatrix:
    """Invert ``S = [[M + c_c C + c_k K, G^T], [G, 0]]`` (module docstring) from ``M``, ``K``, ``C`` and
    ``G`` at one state, the state at time ``t_ref``; ``rotation(t)`` for co-rotation. The inverse carries no
    gradient: at convergence the step does not depend on it."""
    c_k, c_c = params.coefficients(h)
    m = jacobian.shape[0]
    top = jnp.concatenate([mass + c_c * damping + c_k * stiffness, jacobian.T], 1)
    s = jnp.concatenate([top, jnp.concatenate([jacobian, jnp.zeros((m, m))], 1)], 0)
    inverse = jax.lax.stop_gradient(jnp.linalg.inv(s)).reshape(-1)
    return IterationMatrix(inverse, jnp.asarray(t_ref, float), mass.shape[0], rotation)


def _along(f, t, q, v, has_aux: bool = False):
    """``(f(t, q), df/dt)`` along the motion ``dq/dt = v`` (forward mode); ``v = None``: at rest, only ``t``
    varies (nothing is traced for the velocity terms)."""
    if v is None:
        return jax.jvp(lambda tt: f(tt, q), (t,), (jnp.ones_like(t),), has_aux=has_aux)
    return jax.jvp(f, (t, q), (jnp.ones_like(t), v), has_aux=has_aux)


def _kkt_accelerations(system: AbstractConstrainedSystem, t, q, v):
    """Accelerations and multipliers of ``[M G^T; G 0] [qdd; lambda] = [Q; -d^2 g/dt^2 |_{qdd = 0}]``
    (``v = None``: at rest), and the applied forces ``Q``."""
    rate = lambda tt, qq: _along(system.constraints, tt, qq, v)[1]  # noqa: E731
    _, free_curvature = _along(rate, t, q, v)
    forces = system.forces(t, q, jnp.zeros_like(q) if v is None else v)
    return kkt_solve(system.mass_matrix(q), constraint_jacobian(system, t, q), forces, -free_curvature), forces


def consistent_state(system: AbstractConstrainedSystem, t0, q0, v0, params: AlphaParameters,
                     h) -> tuple[AlphaState, Float[Array, " n"]]:
    """Initial state from ``q0``, ``v0`` (consistent with the constraints; ``None``: at rest) and the applied
    forces ``Q`` there: accelerations and multipliers of the index-1 KKT system, and the pseudo-acceleration
    started at ``a_0 = qdd(t_0 + Delta h)`` with ``Delta = alpha_m - alpha_f`` (Arnold & Bruls 2007: ``a_n``
    approximates the acceleration at ``t_n + Delta h``; starting it at ``qdd(t_0)`` leaves a first-order
    transient in the accelerations and multipliers, slow to die out for ``rho_inf`` near 1). ``qdd(t_0 + Delta
    h) ~ qdd + Delta h dqdd/dt`` with the exact time derivative along the motion at fixed velocity (forward
    mode through the KKT solve; the velocity term ``dqdd/dv . qdd`` is left out: through the damping forces it
    carries the stiff modes' response, which the step does not resolve and which would make the start
    diverge)."""
    t0 = jnp.asarray(t0, float)
    (acc, lam), (jerk, _), forces = _along(lambda t, q: _kkt_accelerations(system, t, q, v0), t0, q0, v0,
                                           has_aux=True)
    v0 = jnp.zeros_like(q0) if v0 is None else v0
    return AlphaState(t0, q0, v0, acc, acc + (params.alpha_m - params.alpha_f) * h * jerk, lam), forces


class Chord(eqx.Module):
    """The chord iteration's carry: accelerations, multipliers, the max norms of the last two corrections and
    the applied forces ``Q`` of the last iteration."""

    acc: Float[Array, " n"]
    lam: Float[Array, " m"]
    last: Float[Array, ""]
    before: Float[Array, ""]
    forces: Float[Array, " n"]

    @classmethod
    def start(cls, state: AlphaState) -> "Chord":
        """From the step's start state (its accelerations and multipliers as the first guess)."""
        return cls(state.acc, state.lam, jnp.zeros(()), jnp.zeros(()), jnp.zeros_like(state.q))

    @property
    def error(self) -> Float[Array, ""]:
        """Error of ``qdd`` left after the last correction: its size times the observed contraction rate."""
        return jnp.where(self.before > 0.0, self.last * self.last / jnp.where(self.before > 0.0, self.before, 1.0),
                         self.last)


def _predictor(params: AlphaParameters, h, state: AlphaState):
    """``update(acc) = (q, v, a)`` at the end of the step as functions of its accelerations ``qdd_{n+1}``."""
    ratio = (1.0 - params.alpha_f) / (1.0 - params.alpha_m)
    a_known = (params.alpha_f * state.acc - params.alpha_m * state.a) / (1.0 - params.alpha_m)
    q_known = state.q + h * state.v + h**2 * ((0.5 - params.beta) * state.a + params.beta * a_known)
    v_known = state.v + h * ((1.0 - params.gamma) * state.a + params.gamma * a_known)

    def update(acc):
        a = a_known + ratio * acc
        return q_known + h**2 * params.beta * ratio * acc, v_known + h * params.gamma * ratio * acc, a

    return update


def chord(system: AbstractConstrainedSystem, matrix: IterationMatrix, params: AlphaParameters, h,
          state: AlphaState, iterations: int, carry: Chord) -> Chord:
    """``iterations`` chord corrections of the step from ``state`` (module docstring), continuing ``carry``."""
    c_k, _ = params.coefficients(h)
    t1 = state.t + h
    mass = system.mass_matrix(state.q)
    update = _predictor(params, h, state)

    def iterate(c: Chord, _):
        q, v, _ = update(c.acc)
        g, g_vjp = jax.vjp(lambda qq: system.constraints(t1, qq), q)
        forces = system.forces(t1, q, v)
        d_acc, d_lam = matrix.solve(t1, mass @ c.acc - forces + g_vjp(c.lam)[0], g / c_k)
        return Chord(c.acc - d_acc, c.lam - d_lam, jnp.max(jnp.abs(d_acc)), c.last, forces), None

    return jax.lax.scan(iterate, carry, None, length=iterations)[0]


def end_state(params: AlphaParameters, h, state: AlphaState, carry: Chord) -> AlphaState:
    """The state at the end of the step from ``state`` with the iterated accelerations and multipliers."""
    q, v, a = _predictor(params, h, state)(carry.acc)
    return AlphaState(state.t + h, q, v, carry.acc, a, carry.lam)


REFACTOR_MARGIN = 0.1
"""``alpha_solve`` takes a step again with a freshly inverted iteration matrix when the chord iteration left an
error above this fraction of its tolerance (a safety margin: the error is an estimate)."""


class AlphaSolution(eqx.Module):
    """``frames``: the state after every frame (``n_frames``); ``observed``: ``observe(state, Q)`` after every
    step (leading axis ``n_frames * stride``); ``newton_error``: the estimated error of the accelerations left
    by the chord iteration per step (:attr:`Chord.error`); ``refactored``: per frame, whether the iteration
    matrix was formed again at its start."""

    frames: AlphaState
    observed: object
    newton_error: Float[Array, " S"]
    refactored: Array


def alpha_solve(system: AbstractConstrainedSystem, matrix: IterationMatrix | None, params: AlphaParameters, h,
                state: AlphaState, n_frames: int, stride: int, iterations: int = 3,
                observe: Callable | None = None,
                refactor: Callable[[AlphaState], IterationMatrix] | None = None,
                tolerance: float = 1e-5) -> AlphaSolution:
    """``n_frames * stride`` fixed steps (module docstring), each :func:`chord` iterations from the step's start
    and :func:`end_state`. With ``refactor`` (the
    iteration matrix at a state: the tangents assembled there), a step whose chord iteration left an estimated
    error above ``REFACTOR_MARGIN`` times ``tolerance`` times its largest acceleration is taken again from its
    start with the matrix formed there and twice the iterations; the following steps keep that matrix (a heavily
    deformed structure, or a jump of the drive's acceleration, leaves the reference tangent behind).
    ``matrix=None`` (with ``refactor``): the first step forms it at the initial state, as a retake does, so the
    program holds the assembly and inversion of ``S`` once, inside the loop. Pure."""
    observe = observe or (lambda s, forces: ())
    if matrix is None and refactor is None:
        raise ValueError("alpha_solve: give the iteration matrix, or refactor to form it at the first step")

    def too_large(carry: Chord):
        return carry.error > REFACTOR_MARGIN * tolerance * jnp.max(jnp.abs(carry.acc))

    def chunk(state: AlphaState, carry, k):
        """Chunk ``k`` of a step's iterations: 0 with the carried matrix; when that left too large an error (or
        no matrix was carried: ``again`` already set), 1 with the matrix refactored at the step's start and the
        iteration restarted, 2 continuing it."""
        matrix, iterate, again = carry

        def run():
            retake = k == 1
            fresh = jax.lax.cond(retake, lambda: refactor(state), lambda: matrix)
            start = jax.tree.map(lambda new, old: jnp.where(retake, new, old), Chord.start(state), iterate)
            done = chord(system, fresh, params, h, state, iterations, start)
            return fresh, done, again | ((k == 0) & too_large(done))

        return jax.lax.cond(jnp.where(k == 0, ~again, again), run, lambda: carry), None

    @jax.checkpoint
    def step(carry, _):
        s, matrix, unformed = carry  # unformed: no matrix carried yet (the first step forms it)
        start = (matrix, Chord.start(s), unformed)
        if refactor is None:
            iterate = chord(system, matrix, params, h, s, iterations, start[1])
            again = too_large(iterate)
        else:  # one traced chord iteration serves the step and its retake (chunks 1 and 2: twice the iterations)
            (matrix, iterate, again), _ = jax.lax.scan(partial(chunk, s), start, jnp.arange(3))
        new = end_state(params, h, s, iterate)
        return (new, matrix, jnp.zeros((), bool)), (observe(new, iterate.forces), iterate.error, again)

    def frame(carry, _):
        carry, (observed, error, again) = jax.lax.scan(step, carry, None, length=stride)
        return carry, (carry[0], observed, error, again)

    unformed = matrix is None
    if unformed:  # a placeholder of the matrix's shape, replaced at the first step before it is used
        matrix = jax.tree.map(lambda x: jnp.zeros(x.shape, x.dtype), jax.eval_shape(refactor, state))
    init = (state, matrix, jnp.asarray(unformed))
    _, (frames, observed, error, refactored) = jax.lax.scan(frame, init, None, length=n_frames)
    flat = lambda x: x.reshape(-1, *x.shape[2:])  # noqa: E731
    return AlphaSolution(frames, jax.tree.map(flat, observed), flat(error), flat(refactored))


__all__ = [
    "REFACTOR_MARGIN",
    "AlphaParameters",
    "AlphaSolution",
    "AlphaState",
    "Chord",
    "IterationMatrix",
    "alpha_solve",
    "chord",
    "consistent_state",
    "constraint_jacobian",
    "end_state",
    "iteration_matrix",
]
