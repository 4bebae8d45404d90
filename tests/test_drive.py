"""Drive profiles: boundary values, rate = d angle / dt, continuity, monotonicity and parameter gradients."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from diffspace.actuation.drive import BSpline, Cubic, Cycloidal, Quintic, RestToRest, Tabulated, Trapezoid

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


# ------------------------------------------------------------------ point-to-point laws of the mast paper
H, T_MOVE = np.pi / 2, 6.1  # 90 deg in 6.1 s (paper Section 3)
LAWS = {
    "cubic": Cubic(0.1, 0.1 + H, T_MOVE, 0.5),
    "quintic": Quintic(0.1, 0.1 + H, T_MOVE, 0.5),
    "cycloidal": Cycloidal(0.1, 0.1 + H, T_MOVE, 0.5),
    "trapezoid": Trapezoid(0.1, 0.1 + H, T_MOVE, 0.1, 0.5),
    "spline": BSpline(0.1, 0.1 + H, T_MOVE, [0.3, -0.2, 0.9, 1.2, 2.0], 0.5),  # any interior points
}


@pytest.mark.parametrize("name", list(LAWS))
def test_point_to_point_boundary_conditions(name):
    """Angle at both ends, zero rate at both ends; zero acceleration at both ends except for the cubic
    (+-6 h / T^2) and the trapezoid (+-h / ((T - t_r) t_r)), whose accelerations jump there."""
    law = LAWS[name]
    t0, t1 = 0.5, 0.5 + T_MOVE
    times = jnp.array([t0, t1, t0 - 1.0, t1 + 1.0])
    angle, rate, acc = jax.jit(jax.vmap(lambda t: (*law.state(t), law.acceleration(t))))(times)
    np.testing.assert_allclose(angle, [0.1, 0.1 + H, 0.1, 0.1 + H], rtol=0, atol=1e-14)
    np.testing.assert_allclose(rate, 0.0, rtol=0, atol=1e-14)
    jump = {"cubic": 6 * H / T_MOVE**2, "trapezoid": H / ((T_MOVE - 0.1) * 0.1)}.get(name, 0.0)
    np.testing.assert_allclose(acc, [jump, -jump, 0.0, 0.0], rtol=0, atol=1e-12)


@pytest.mark.parametrize("name, peak", [("cubic", 1.5), ("quintic", 1.875), ("cycloidal", 2.0)])
def test_peak_rates(name, peak):
    """Peak rates 1.5 h/T (cubic), 1.875 h/T (quintic), 2 h/T (cycloidal), at mid-move and nowhere higher."""
    law = LAWS[name]
    rates = jax.jit(jax.vmap(law.rate))(jnp.linspace(0.5, 0.5 + T_MOVE, 2001))
    assert float(law.rate(0.5 + T_MOVE / 2)) == pytest.approx(peak * H / T_MOVE, rel=1e-13)
    assert float(jnp.max(rates)) <= peak * H / T_MOVE * (1 + 1e-13)


def test_trapezoid_is_the_papers_rate_plan():
    """Eq. (47): 150 deg/s^2 for 0.1 s, 15 deg/s cruise, 90 deg in 6.1 s."""
    law = Trapezoid(0.0, H, T_MOVE, 0.1)
    for t, rate in ((0.05, 7.5), (0.1, 15.0), (3.0, 15.0), (6.0, 15.0), (6.05, 7.5)):
        assert np.rad2deg(float(law.rate(t))) == pytest.approx(rate, rel=1e-12)
    assert np.rad2deg(float(law.acceleration(0.05))) == pytest.approx(150.0, rel=1e-12)


@pytest.mark.parametrize("name", list(LAWS))
def test_point_to_point_rates_are_time_derivatives(name):
    law = LAWS[name]

    @jax.jit
    def rates_and_differences(ts):
        rate, acc = jax.vmap(law.rate)(ts), jax.vmap(law.acceleration)(ts)
        return rate, acc, jax.vmap(lambda t: _fd(law.angle, t))(ts), jax.vmap(lambda t: _fd(law.rate, t))(ts)

    rate, acc, fd_rate, fd_acc = rates_and_differences(jnp.linspace(0.3, 7.0, 157) + 1e-3 * np.pi)
    np.testing.assert_allclose(rate, fd_rate, atol=1e-8)
    np.testing.assert_allclose(acc, fd_acc, atol=1e-6)


def test_spline_fit_and_gradient():
    """The fitted spline follows the cycloidal law; d q''(t) / d p_k matches central differences."""
    cycloidal = LAWS["cycloidal"]
    fit = BSpline.fit(cycloidal, 6)
    ts = jnp.linspace(0.5, 0.5 + T_MOVE, 301)
    error = jax.jit(lambda ts: jnp.max(jnp.abs(jax.vmap(fit.angle)(ts) - jax.vmap(cycloidal.angle)(ts))))(ts)
    assert float(error) < 2e-4

    def acc(p):
        return BSpline(0.1, 0.1 + H, T_MOVE, p, 0.5).acceleration(2.0)

    @jax.jit
    def gradient_and_differences(p):
        steps = 1e-6 * jnp.eye(p.shape[0])
        return jax.grad(acc)(p), jax.vmap(lambda dp: (acc(p + dp) - acc(p - dp)) / 2e-6)(steps)

    g, fd = gradient_and_differences(fit.points)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-9)
