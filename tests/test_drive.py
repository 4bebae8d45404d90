"""Drive profiles: boundary values, rate = d angle / dt, continuity, monotonicity and parameter gradients."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from diffspace.actuation.drive import RestToRest, Tabulated

QUINTIC = RestToRest(0.2, 1.2, 2.0, start_time=0.5)
TABLE = Tabulated([0.0, 0.4, 1.0, 1.5, 2.5], [0.0, 0.3, 0.35, 1.0, 1.1])


def _fd(f, t, h=1e-6):
    return (f(t + h) - f(t - h)) / (2 * h)


@pytest.mark.parametrize("drive", [QUINTIC, TABLE], ids=["rest_to_rest", "tabulated"])
def test_rest_at_both_ends_and_held_outside(drive):
    t0 = float(drive.times[0]) if isinstance(drive, Tabulated) else float(drive.start_time)
    t1 = float(drive.end_time)
    q0, q1 = (drive.values[0], drive.values[-1]) if isinstance(drive, Tabulated) else (drive.start, drive.end)
    for t, q in ((t0, q0), (t1, q1), (t0 - 0.3, q0), (t1 + 5.0, q1)):
        angle, rate = drive.state(t)
        assert float(angle) == pytest.approx(float(q), abs=1e-15)
        assert abs(float(rate)) < 1e-15
    if isinstance(drive, RestToRest):  # minimum jerk: acceleration also zero at the ends
        assert abs(float(drive.acceleration(t0))) < 1e-14 and abs(float(drive.acceleration(t1))) < 1e-14


@pytest.mark.parametrize("drive", [QUINTIC, TABLE], ids=["rest_to_rest", "tabulated"])
def test_rate_is_the_time_derivative_and_continuous(drive):
    ts = jnp.linspace(-0.2, 2.8, 301) + 1e-3 * np.pi  # off the knots (q'' jumps there: FD error O(h))
    rate = jax.vmap(drive.rate)(ts)
    fd = jax.vmap(lambda t: _fd(drive.angle, t))(ts)
    np.testing.assert_allclose(rate, fd, atol=1e-8)
    if isinstance(drive, Tabulated):  # C1 at the knots: one-sided rates agree
        for tk in np.asarray(drive.times):
            assert float(drive.rate(tk - 1e-9)) == pytest.approx(float(drive.rate(tk + 1e-9)), abs=1e-7)
    else:
        acc = jax.vmap(drive.acceleration)(ts)
        np.testing.assert_allclose(acc, jax.vmap(lambda t: _fd(drive.rate, t))(ts), atol=1e-6)


def test_quintic_closed_forms():
    """Peak rate 15 (q1 - q0) / (8 T) at mid-move; peak acceleration 10 / sqrt(3) (q1 - q0) / T^2."""
    d = RestToRest(0.0, 1.0, 2.0)
    assert float(d.rate(1.0)) == pytest.approx(15 / 16, rel=1e-14)
    assert float(d.acceleration(2.0 * (3 - np.sqrt(3)) / 6)) == pytest.approx(10 / np.sqrt(3) / 4, rel=1e-12)


def test_tabulated_is_monotone_for_monotone_data():
    ts = jnp.linspace(0.0, 2.5, 2001)
    q = jax.vmap(TABLE.angle)(ts)
    assert float(jnp.min(jnp.diff(q))) >= -1e-15
    assert float(jnp.max(q)) <= 1.1 + 1e-15


def test_parameter_gradients_match_finite_differences():
    """d q(t) / d(end, duration) of the quintic and d q / d(knot value, knot time) of the table."""
    t = 1.3

    def quintic(p):
        return RestToRest(0.2, p[0], p[1], 0.5).state(t)[1]  # the rate: depends on both

    def table(p):
        times = jnp.array([0.0, 0.4, p[1], 1.5, 2.5])
        return Tabulated(times, jnp.array([0.0, 0.3, p[0], 1.0, 1.1])).angle(t)

    for f, p in ((quintic, jnp.array([1.2, 2.0])), (table, jnp.array([0.35, 1.0]))):
        g = jax.grad(f)(p)
        fd = jnp.array([_fd(lambda h: f(p.at[i].add(h)), 0.0) for i in range(2)])
        np.testing.assert_allclose(g, fd, rtol=1e-6)
