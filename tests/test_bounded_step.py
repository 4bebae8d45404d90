"""``bounded_step_solve``: a one-step map between saved times whose count of steps is computed at run time from a
traced horizon (the snare strike's loop), on a harmonic oscillator stepped by velocity Verlet, against its exact
solution, against ``fixed_step_solve`` with the same steps, and differentiated in both modes."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from diffspace.integrate import ZeroStep, bounded_step_solve, fixed_step_solve

OMEGA = 3.0


def verlet(t, y, acc, h):
    """Velocity Verlet for x'' = -omega^2 x; carries the acceleration it applied last."""
    x, v = y
    x = x + h * v + 0.5 * h**2 * acc
    new = -OMEGA**2 * x
    return (x, v + 0.5 * h * (acc + new)), new


def start(t, y, h):
    return -OMEGA**2 * y[0]


def positions(t_end, max_step, max_steps=100_000, differentiation="reverse", n_save=11):
    return bounded_step_solve(verlet, start, (jnp.asarray(1.0), jnp.asarray(0.0)), t_end, n_save, max_step,
                              max_steps, differentiation)


def test_steps_fit_the_horizon_and_converge_at_second_order_to_the_exact_motion():
    """k = ceil(dt_save / max_step) equal steps per saved interval, so the saved times are step ends; the error
    against cos(omega t) falls 4x per halving of the step."""
    solve = jax.jit(positions)
    errors = []
    for max_step in (2e-2, 1e-2, 5e-3):
        sol = solve(jnp.asarray(2.3), max_step)
        k = int(np.ceil(0.23 / max_step))
        assert int(sol.num_steps) == 10 * k and bool(sol.finite) and bool(sol.within_budget)
        np.testing.assert_allclose(sol.ts, np.linspace(0.0, 2.3, 11), rtol=1e-15)
        errors.append(float(jnp.max(jnp.abs(sol.ys[0] - jnp.cos(OMEGA * sol.ts)))))
    assert errors[0] / errors[1] == pytest.approx(4.0, rel=0.1) and errors[1] / errors[2] == pytest.approx(4.0, rel=0.1)


def test_equals_the_static_solve_with_the_same_steps():
    bounded = jax.jit(positions)(jnp.asarray(1.7), 1e-2)
    fixed = fixed_step_solve(verlet, start, (jnp.asarray(1.0), jnp.asarray(0.0)), 1.7, 11, 17)
    np.testing.assert_allclose(bounded.ys[0], fixed.ys[0], rtol=1e-13, atol=1e-15)
    assert int(bounded.num_steps) == int(fixed.num_steps) == 170


def test_a_zero_step_start_equals_the_start_function_and_is_differentiable():
    """``ZeroStep``: the carry at t = 0 is velocity Verlet's step of length zero from a placeholder (the state
    unchanged, the acceleration evaluated there), taken inside the loop: the same solve as ``start`` (to
    round-off), with the same gradient."""

    def solve(x0, start_with):
        return fixed_step_solve(verlet, start_with, (jnp.asarray(x0), jnp.asarray(0.0)), 1.7, 11, 17)

    solved = eqx.filter_jit(solve)
    by_function, by_zero_step = solved(jnp.asarray(1.0), start), solved(jnp.asarray(1.0), ZeroStep(jnp.asarray(7.0)))
    np.testing.assert_allclose(by_zero_step.ys[0], by_function.ys[0], rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(by_zero_step.ys[1], by_function.ys[1], rtol=1e-14, atol=1e-15)
    assert int(by_zero_step.num_steps) == 170
    end = lambda x0, s: solve(x0, s).ys[0][-1]  # noqa: E731
    np.testing.assert_allclose(jax.grad(end)(1.0, ZeroStep(jnp.asarray(0.0))), jax.grad(end)(1.0, start), rtol=1e-14)
    np.testing.assert_allclose(jax.grad(end)(1.0, start), np.cos(OMEGA * 1.7), rtol=1e-3)  # x(t) = x0 cos(omega t)


def test_a_step_budget_too_small_is_reported():
    """More steps than max_steps allows: the steps are stretched to the budget and within_budget is False."""
    sol = jax.jit(lambda t: positions(t, 1e-2, max_steps=50))(jnp.asarray(2.0))
    assert not bool(sol.within_budget) and int(sol.num_steps) == 50


@pytest.mark.parametrize("differentiation", ["reverse", "forward"])
def test_derivatives_match_central_differences(differentiation):
    """d x(t_end) / d t_end through the traced horizon (reverse mode: a checkpointed loop; forward: a plain one)
    against central differences of the same discrete map (the step count is piecewise constant: the differences
    stay within one count)."""
    final = lambda t: positions(t, 1e-2, differentiation=differentiation).ys[0][-1]  # noqa: E731
    t0, h = 1.234, 1e-6
    derivative = jax.grad(final) if differentiation == "reverse" else lambda t: jax.jvp(final, (t,), (1.0,))[1]
    slope = float(jax.jit(derivative)(jnp.asarray(t0)))
    value = jax.jit(final)
    fd = (float(value(jnp.asarray(t0 + h))) - float(value(jnp.asarray(t0 - h)))) / (2 * h)
    assert slope == pytest.approx(fd, rel=1e-6)
    assert slope == pytest.approx(-OMEGA * np.sin(OMEGA * t0), rel=1e-3)  # the exact motion's velocity
