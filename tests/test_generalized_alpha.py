"""Generalized-alpha (`diffspace.integrate.generalized_alpha`) on a pendulum in Cartesian coordinates, against an
independent solution of the pendulum's angle equation (SciPy), with the iteration matrix given or formed by the
first step."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.integrate import solve_ivp

from diffspace.integrate.constrained import AbstractConstrainedSystem
from diffspace.integrate.generalized_alpha import (AlphaParameters, alpha_solve, consistent_state,
                                                   constraint_jacobian, iteration_matrix)

GRAVITY, LENGTH, MASS = 9.81, 0.7, 1.3
START_ANGLE = 1.1  # rad from the downward vertical: far from the linear pendulum


class Pendulum(AbstractConstrainedSystem):
    """A point mass on a massless rod: ``q = (x, y)``, ``y`` up, ``g = (|q|^2 - L^2) / 2``."""

    mass: float = eqx.field(static=True, default=MASS)

    def mass_matrix(self, q):
        return self.mass * jnp.eye(2)

    def forces(self, t, q, w):
        return jnp.array([0.0, -self.mass * GRAVITY])

    def rates(self, q, w):
        return w

    def retract(self, q, dw):
        return q + dw

    def constraints(self, t, q):
        return jnp.atleast_1d(0.5 * (q @ q - LENGTH**2))


def _angle_reference(times):
    """The angle from the downward vertical, ``theta'' = -g/L sin(theta)``, by SciPy's DOP853 at 1e-12."""
    sol = solve_ivp(lambda t, s: [s[1], -GRAVITY / LENGTH * np.sin(s[0])], (0.0, times[-1]), [START_ANGLE, 0.0],
                    method="DOP853", rtol=1e-12, atol=1e-12, t_eval=times)
    return sol.y[0]


def _solve(matrix_given: bool, h=1e-3, n_frames=40, stride=25):
    system = Pendulum()
    params = AlphaParameters.from_spectral_radius(0.8)
    q0 = LENGTH * jnp.array([jnp.sin(START_ANGLE), -jnp.cos(START_ANGLE)])
    state0, _ = consistent_state(system, 0.0, q0, None, params, h)

    def refactor(state):  # K = d(G^T lambda)/dq (the applied force is constant), no damping
        k = jax.hessian(lambda q: state.lam @ system.constraints(state.t, q))(state.q)
        return iteration_matrix(system.mass_matrix(state.q), k, jnp.zeros((2, 2)),
                                constraint_jacobian(system, state.t, state.q), params, h, t_ref=state.t)

    matrix = refactor(state0) if matrix_given else None
    return jax.jit(lambda s: alpha_solve(system, matrix, params, h, s, n_frames, stride, 4, refactor=refactor,
                                         tolerance=1e-8))(state0)


def test_the_first_step_forms_the_matrix_and_both_starts_follow_the_pendulum():
    given, formed = _solve(True), _solve(False)
    times = np.asarray(formed.frames.t)
    reference = _angle_reference(times)
    for sol in (given, formed):
        q = np.asarray(sol.frames.q)
        angle = np.arctan2(q[:, 0], -q[:, 1])
        np.testing.assert_allclose(angle, reference, atol=2e-5)  # second order at h = 1 ms over 1 s
        np.testing.assert_allclose(np.linalg.norm(q, axis=1), LENGTH, rtol=1e-10)  # index 3: no drift
    # only the start differs (the first step's matrix, and its doubled iterations): the runs agree to the
    # chord iteration's tolerance, far inside the discretisation error above
    np.testing.assert_allclose(formed.frames.q, given.frames.q, atol=1e-9)
    assert bool(formed.refactored[0]) and not bool(given.refactored[0])


def test_without_a_matrix_or_a_way_to_form_it_the_solve_refuses():
    system = Pendulum()
    params = AlphaParameters.from_spectral_radius(0.8)
    state0, _ = consistent_state(system, 0.0, jnp.array([0.0, -LENGTH]), None, params, 1e-3)
    with pytest.raises(ValueError, match="refactor"):
        alpha_solve(system, None, params, 1e-3, state0, 2, 2)
