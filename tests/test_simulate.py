"""Free-floating integration: conservation laws and gradients through the Diffrax solve."""

import functools

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import diffspace as ds
from diffspace.integrate import AbstractHybridSystem, SolverSettings, simulate

from .random_robots import write_random_robot

SETTINGS = SolverSettings(rtol=1e-12, atol=1e-13, n_save=51, max_steps=200_000)  # momentum is checked to 1e-9
# relative: integrate well below that


@pytest.fixture(scope="module")
def robot(tmp_path_factory):
    return ds.load_robot(write_random_robot(tmp_path_factory.mktemp("r"), 21, 5, True))


def _initial(robot):
    rng = np.random.default_rng(3)
    q0 = robot.neutral().at[7:].set(jnp.array(rng.uniform(-1, 1, robot.n_joints)))
    v0 = jnp.array(rng.normal(size=robot.nv))
    return q0, v0


def _momenta(robot, traj):
    return np.asarray(jax.vmap(lambda q, v: jnp.concatenate(ds.momentum(robot, q, v)))(traj.q, traj.v))


def test_momentum_conserved_with_internal_torques(robot):
    q0, v0 = _initial(robot)
    n = robot.n_joints

    def torque(t, q, v):
        return jnp.sin(3.0 * t) * jnp.arange(1.0, n + 1) - 0.3 * v[6:]

    traj = simulate(robot, q0, v0, 5.0, torque, settings=SETTINGS)
    mom = _momenta(robot, traj)
    assert np.abs(mom - mom[0]).max() < 1e-9 * np.abs(mom[0]).max()
    assert np.abs(traj.q[-1, 7:] - q0[7:]).max() > 0.1  # the joints really moved


def test_energy_conserved_without_torques(robot):
    q0, v0 = _initial(robot)
    traj = simulate(robot, q0, v0, 5.0, settings=SETTINGS)
    energy = np.asarray(jax.vmap(lambda q, v: ds.kinetic_energy(robot, q, v))(traj.q, traj.v))
    mom = _momenta(robot, traj)
    assert np.abs(energy - energy[0]).max() < 1e-9 * energy[0]
    assert np.abs(mom - mom[0]).max() < 1e-9 * np.abs(mom[0]).max()
    assert np.abs(np.linalg.norm(traj.q[:, 3:7], axis=1) - 1.0).max() < 1e-10


def test_gradient_wrt_link_mass_and_joint_rate(robot):
    q0, v0 = _initial(robot)

    @jax.jit
    def final_angle(mass_scale, rate):
        scaled = eqx.tree_at(lambda r: r.mass, robot, robot.mass.at[2].multiply(mass_scale))
        traj = simulate(scaled, q0, v0.at[7].set(rate), 1.0,
                        settings=SolverSettings(rtol=1e-11, atol=1e-12, n_save=2, max_steps=2048))
        return traj.q[-1, 8] + 0.5 * traj.q[-1, 0]

    x = (1.0, float(v0[7]))
    grads = jax.jit(jax.grad(final_angle, argnums=(0, 1)))(*x)
    eps = 1e-5
    fd = [
        (final_angle(x[0] + eps, x[1]) - final_angle(x[0] - eps, x[1])) / (2 * eps),
        (final_angle(x[0], x[1] + eps) - final_angle(x[0], x[1] - eps)) / (2 * eps),
    ]
    for g, f in zip(grads, fd):
        assert abs(g - f) < 1e-6 * max(abs(f), 1e-3), (g, f)


@pytest.mark.parametrize(
    "g, root, evaluations",
    [
        (lambda t: 0.4876 - t, 0.4876, 3),  # linear: the false position of the two ends
        (lambda t: jnp.minimum(0.5 - t, 2.0 * (0.6 - t)), 0.5, 3),  # the first crossing of two conditions (a kink)
        (lambda t: jnp.minimum(0.45 - t + 0.3 * (t - 0.45) ** 2, (t - 0.3) * (0.62 - t)), 0.45, 8),  # kink at the root
        (lambda t: jnp.exp(20.0 * (t - 0.41)) - 1.0, 0.41, 9),  # strongly convex: plain false position crawls
        (lambda t: 0.7 - t, 0.7, 3),  # no sign change inside (Diffrax's "no event" call): the interval end
    ],
)
def test_event_root_finder_finds_event_roots_through_kinks(g, root, evaluations):
    """The event root finder of ``hybrid_solve`` (min over conditions has kinks; plain Newton cycled there):
    the root to 1e-12 within a few evaluations (Anderson-Bjoerck false position is superlinear: bisection
    alone would need ~40), never evaluating a derivative of ``g``, and the event time's derivative by the
    implicit function theorem."""
    import optimistix as optx

    from diffspace.integrate.event_root import EventRootFinder

    @jax.custom_jvp
    def no_derivative(t):
        return g(t)

    @no_derivative.defjvp
    def _fail(primals, tangents):
        raise AssertionError("the root finder differentiated the event function")

    finder = EventRootFinder(rtol=1e-12, atol=1e-12)
    options = {"lower": jnp.asarray(0.4), "upper": jnp.asarray(0.7)}
    sol = optx.root_find(lambda t, _: no_derivative(t), finder, jnp.asarray(0.7), options=options, throw=False)
    assert sol.result == optx.RESULTS.successful
    assert float(sol.value) == pytest.approx(root, abs=1e-12)
    assert int(sol.stats["num_steps"]) <= evaluations
    # the event time is differentiable by the implicit function theorem: d root / d shift of g = 1 / -g'(root)
    shifted = lambda s: optx.root_find(lambda t, _: g(t) + s, finder, jnp.asarray(0.7), options=options,  # noqa: E731
                                       throw=False).value
    if root < 0.7:
        slope = jax.grad(g)(jnp.asarray(root))
        assert float(jax.grad(shifted)(0.0)) == pytest.approx(-1.0 / float(slope), rel=1e-9)


class _BouncingBall(AbstractHybridSystem):
    """A ball falling onto a wall; the mode counts the bounces."""

    gravity: jax.Array
    wall: jax.Array
    restitution: jax.Array

    def vector_field(self, t, y, mode):
        return jnp.stack([y[1], -self.gravity])

    def conditions(self, t, y, mode, segment_start):
        return (jnp.where(y[1] < 0.0, y[0] - self.wall, 1.0),)

    def transition(self, t, y, mode):
        return jnp.stack([y[0], -self.restitution * y[1]]), mode + 1


def _bouncing_ball(drop_height, gravity, wall, restitution, t_final=1.2, adjoint=None):
    """First and second event times, final height and velocity of a ball dropped onto a wall."""
    from diffspace.integrate import hybrid_solve

    system = _BouncingBall(jnp.asarray(gravity), jnp.asarray(wall), jnp.asarray(restitution))
    sol = hybrid_solve(system, jnp.stack([drop_height, 0.0]), jnp.asarray(0), t_final,
                       SolverSettings(n_save=5, max_steps=20_000, max_segments=4), adjoint=adjoint)
    return jnp.stack([sol.segment_end[0], sol.segment_end[1], sol.final_y[0], sol.final_y[1]])


def _bouncing_ball_exact(drop_height, gravity, wall, restitution, t_final=1.2):
    """:func:`_bouncing_ball` in closed form (the free flight is a parabola, which Tsit5 integrates exactly)."""
    speed = jnp.sqrt(2.0 * gravity * (drop_height - wall))
    first = speed / gravity
    second = first + 2.0 * restitution * speed / gravity
    rebound, flight = restitution**2 * speed, t_final - second
    return jnp.stack([first, second, wall + rebound * flight - 0.5 * gravity * flight**2, rebound - gravity * flight])


def test_event_times_and_states_are_differentiated_exactly():
    """Derivatives of the event times and of the state after two bounces with respect to the initial state
    (drop height), the vector field (gravity), the condition (wall height) and the transition (restitution):
    forward and reverse mode equal the closed form's (the implicit-function-theorem derivative of each event
    must carry every one of these dependences)."""
    point = (1.0, 9.81, 0.2, 0.7)
    argnums = (0, 1, 2, 3)
    np.testing.assert_allclose(jax.jit(_bouncing_ball)(*point), _bouncing_ball_exact(*point), rtol=1e-11, atol=1e-12)
    expected = np.stack(jax.jacfwd(_bouncing_ball_exact, argnums)(*point), axis=-1)
    reverse = np.stack(jax.jit(jax.jacrev(_bouncing_ball, argnums))(*point), axis=-1)
    by_forward_mode = functools.partial(_bouncing_ball, adjoint=diffrax.ForwardMode())
    forward = np.stack(jax.jit(jax.jacfwd(by_forward_mode, argnums))(*point), axis=-1)
    np.testing.assert_allclose(forward, expected, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(reverse, expected, rtol=1e-9, atol=1e-10)


@jax.custom_jvp
def _never_differentiated(x):
    return x


@_never_differentiated.defjvp
def _never_differentiated_jvp(primals, tangents):
    raise AssertionError("the neutral event's indicator was differentiated")


_SPRING = 4.0  # stiffness per unit mass of the wall, omega = 2
_WALL_DISTANCE, _T_FINAL = 10.0, 14.0


def _wall_field(y, mode):
    in_contact = (mode[0] == 1) | (mode[0] == 2)
    return jnp.stack([y[1], jnp.where(in_contact, -_SPRING * y[0], 0.0)])


def _force_extremum(y, mode, speed):
    """Rate of the wall force (``_SPRING * x``) per ``_SPRING * speed``: falls to 0 at the peak while
    compressing (phase 1, which ends exactly there), and stays below ``EXTREMUM_MARGIN`` while restituting."""
    from diffspace.integrate import EXTREMUM_MARGIN

    rate = _never_differentiated(_wall_field(y, mode)[0]) / speed
    return jnp.where(mode[0] == 1, rate, EXTREMUM_MARGIN - rate)


class _SpringWall(AbstractHybridSystem):
    """The mode is ``[phase, recorded peak force, recorded release time]``."""

    speed: jax.Array

    def vector_field(self, t, y, mode):
        return _wall_field(y, mode)

    def conditions(self, t, y, mode, segment_start):
        from diffspace.integrate import neutral_event

        other = jnp.where(mode[0] == 2, y[0], jnp.inf)
        neutral = neutral_event(_force_extremum, t, segment_start, y, mode, self.speed, other=other)
        return (jnp.where(mode[0] == 0, -y[0], jnp.where(mode[0] == 3, 1.0, neutral)),)

    def transition(self, t, y, mode):
        peak, release = jnp.where(mode[0] == 1, _SPRING * y[0], mode[1]), jnp.where(mode[0] == 2, t, mode[2])
        return y, jnp.stack([mode[0] + 1.0, peak, release])


def _spring_wall(speed, rtol=1e-10, adjoint=None):
    """A unit mass approaches a spring wall at ``speed`` from ``_WALL_DISTANCE`` away. Phase 0 ends at the touch
    (an ordinary event: the field changes); phase 1 at the force peak (a neutral event: same field, state kept),
    recording the force; phase 2 at the release (``x = 0``: an ordinary event, ``other``, recording its time)
    unless a force valley comes first; phase 3 is free flight. Returns the peak force, the release time and
    the final state."""
    from diffspace.integrate import hybrid_solve

    sol = hybrid_solve(_SpringWall(jnp.asarray(speed)), jnp.stack([-_WALL_DISTANCE, speed]), jnp.zeros(3), _T_FINAL,
                       SolverSettings(rtol, rtol, n_save=5, max_steps=20_000, max_segments=5), dtmax=0.5, adjoint=adjoint)
    return jnp.stack([sol.final_mode[1], sol.final_mode[2], sol.final_y[0], sol.final_y[1]])


def _spring_wall_exact(speed):
    omega = jnp.sqrt(_SPRING)
    release = _WALL_DISTANCE / speed + jnp.pi / omega
    return jnp.stack([omega * speed, release, -speed * (_T_FINAL - release), -speed])


@pytest.mark.slow  # CI time; the capture gradients through neutral events stay fast (conformance, test_capture)
def test_neutral_event_keeps_exact_derivatives_without_differentiating_its_indicator():
    """A neutral event (``integrate.neutral_event``: the force peak of a mass on a spring wall) is never
    differentiated, yet the force it records, the release time of the ordinary event combined with it
    (``other``) and the final state have the closed form's derivatives, forward and reverse. Its time moves with
    its segment's start (the touch): the derivatives then agree to 4e-10 at rtol 1e-10; with a fixed event time
    (also exact for the continuous model) the discrete solution's derivative was 2.8e-8 off, the error growing
    with the approach time."""
    speed = 1.0
    np.testing.assert_allclose(jax.jit(_spring_wall)(speed), _spring_wall_exact(speed), rtol=1e-9, atol=1e-9)
    expected = jax.jacfwd(_spring_wall_exact)(speed)
    reverse = jax.jit(jax.jacrev(_spring_wall))(speed)
    forward = jax.jit(jax.jacfwd(functools.partial(_spring_wall, adjoint=diffrax.ForwardMode())))(speed)
    np.testing.assert_allclose(forward, expected, rtol=1e-10, atol=3e-9)
    np.testing.assert_allclose(reverse, expected, rtol=1e-10, atol=3e-9)
