"""Unilateral contact with friction (contact.unilateral) and the planar floating-base arm scenario.

Independent references: Coulomb friction on a pressed block in closed form, the paper's kinematics and
Lagrangian (eqs. (1)-(8), written out here with slender rods) for the arm's M, h and tip kinematics, momentum
balance, and central finite differences for the gradients through the LCPs.
"""

from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from diffspace.core import dynamics
from diffspace.contact.unilateral import (
    SEPARATED,
    SLIP_NEGATIVE,
    SLIP_POSITIVE,
    STICK,
    contact_step,
    point_plane_contacts,
)
from diffspace.io.packaged import DATA_DIR
from diffspace.io.results import write_summary
from diffspace.scenarios import load_scenario
from diffspace.scenarios.unilateral import PlanarArm
from diffspace.core.status import ConfigError, Status

CONFIG = DATA_DIR / "unilateral_contact.toml"
FORMULATIONS = ("acceleration", "velocity")
MASSES, LENGTHS, BASE_INERTIA = [1000.0, 30.0, 20.0, 10.0], [1.0, 1.0, 0.7, 0.5], 601.667
Q0 = np.array([0.0, 2.5, 0.0, np.pi / 3, -np.pi / 3, np.arccos(3 / 5)])


# ----------------------------------------------------------------------------- the model
def _paper_points(q):
    """Centres of mass, absolute angles and the tip of eqs. (1)-(2): uniform slender links, angles from the
    downward vertical, joint 1 at l0 below the base centre."""
    down = lambda phi: jnp.stack([jnp.sin(phi), -jnp.cos(phi)])  # noqa: E731
    phi, joint = q[2], q[:2] + LENGTHS[0] * down(q[2])
    points, angles = [q[:2]], [phi]
    for i in range(3):
        phi = phi + q[3 + i]
        points.append(joint + 0.5 * LENGTHS[i + 1] * down(phi))
        angles.append(phi)
        joint = joint + LENGTHS[i + 1] * down(phi)
    return jnp.stack(points), jnp.stack(angles), joint


def _paper_kinetic_energy(q, u):
    """T of eq. (5)."""
    _, (velocities, rates, _) = jax.jvp(_paper_points, (q,), (u,))
    inertia = jnp.array([BASE_INERTIA] + [m * l**2 / 12 for m, l in zip(MASSES[1:], LENGTHS[1:])])
    return 0.5 * jnp.sum(jnp.array(MASSES) * jnp.sum(velocities**2, axis=1)) + 0.5 * jnp.sum(inertia * rates**2)


@jax.jit
def _model_and_references(arm, q, u):
    """The model's quantities and the independent ones, in one compiled program."""
    tip = lambda x: _paper_points(x)[2]  # noqa: E731
    mass = jax.hessian(_paper_kinetic_energy, argnums=1)(q, u)  # eq. (7)
    mixed = jax.jacfwd(jax.grad(_paper_kinetic_energy, argnums=1), argnums=0)(q, u)
    bias = mixed @ u - jax.grad(_paper_kinetic_energy, argnums=0)(q, u)  # eq. (8), Lagrange's sign
    v = arm.free_flyer_velocity(q, u)
    momentum = dynamics.momentum(arm.robot, arm.free_flyer_configuration(q), v)[0][:2]
    references = dict(
        mass=mass, bias=bias, position=tip(q), jacobian=jax.jacfwd(tip)(q),  # u = q'
        drift=jax.jvp(lambda x: jax.jacfwd(tip)(x) @ u, (q,), (u,))[1], core_position=arm.tip_position(q),
        projected=arm.base_motion.project(v) - v, momentum=momentum, q0_tip=arm.tip_position(Q0),
    )
    return arm.evaluate(q, u), references


def test_planar_arm_matches_the_papers_lagrangian_and_the_core_frames():
    arm = PlanarArm.build(MASSES, LENGTHS, BASE_INERTIA)
    rng = np.random.default_rng(0)
    q, u = jnp.asarray(Q0 + 0.3 * rng.normal(size=6)), jnp.asarray(rng.normal(size=6))
    state, ref = _model_and_references(arm, q, u)
    np.testing.assert_allclose(state.mass, ref["mass"], rtol=0, atol=1e-12 * np.abs(ref["mass"]).max())
    np.testing.assert_allclose(state.bias, ref["bias"], rtol=0, atol=1e-12 * np.abs(ref["bias"]).max())
    np.testing.assert_allclose(state.tip.position, ref["position"], atol=1e-14)
    np.testing.assert_allclose(ref["core_position"], ref["position"], atol=1e-14)  # core frame_pose
    np.testing.assert_allclose(state.tip.jacobian, ref["jacobian"], atol=1e-13)
    np.testing.assert_allclose(state.tip.drift, ref["drift"], atol=1e-13)
    # the planar velocity map lies in BaseMotion.planar's subspace; x0, y0 are world translations, so the
    # core's linear momentum is the first two generalised momenta; the paper's q0 puts the tip on y = 0
    np.testing.assert_allclose(ref["projected"], 0.0, atol=1e-15)
    np.testing.assert_allclose(ref["momentum"], (state.mass @ u)[:2], rtol=1e-12)
    assert abs(float(ref["q0_tip"][1])) < 1e-15


# ----------------------------------------------------------------------------- block on a plane
MASS, PRESS, MU, DT, STEPS = 2.0, 10.0, 0.3, 0.01, 120
LIMIT = MU * PRESS
# cases: (push ratio to mu N, push rate [N/s], initial x', initial y', initial gap [m], press on/off)
BLOCK_CASES = np.array([
    [0.0, 0.0, 0.0, 0.0, 0.0, 1.0],  # pressed, no push: sticks
    [0.5, 0.0, 0.0, 0.0, 0.0, 1.0],
    [0.95, 0.0, 0.0, 0.0, 0.0, 1.0],  # just below the friction limit: sticks
    [1.05, 0.0, 0.0, 0.0, 0.0, 1.0],  # just above: slides
    [2.0, 0.0, 0.0, 0.0, 0.0, 1.0],
    [0.0, 0.0, 1.0, 0.0, 0.0, 1.0],  # sliding at 1 m/s, no push: decelerates and stops
    [0.0, 20.0, 0.0, 0.0, 0.0, 1.0],  # push ramping at 20 N/s: slips once 20 t > mu N
    [0.0, 0.0, 0.5, -1.0, 0.0505, 0.0],  # free flight onto the plane at 1 m/s: impact
])


def _block_run(formulation, case):
    """A point mass (x, y) pressed onto y = 0 by PRESS and pushed along x (one row of BLOCK_CASES)."""
    ratio, rate, vx, vy, gap, pressed = case

    def step(state, k):
        q, u = state
        contacts = point_plane_contacts(q[None], jnp.eye(2)[None], jnp.zeros((1, 2)), [0.0, 1.0], [[1.0, 0.0]], MU)
        force = jnp.stack([ratio * LIMIT + rate * k * DT, -PRESS * pressed])
        res = contact_step(formulation, MASS * jnp.eye(2), force, u, contacts, DT, baumgarte_rate=25.0)
        return (q + DT * res.velocity, res.velocity), (res.velocity, res.normal_force[0], res.tangent_force[0, 0],
                                                       res.mode[0], q[1], res.info.converged)

    start = (jnp.stack([0.0, gap]), jnp.stack([vx, vy]))
    return jax.lax.scan(step, start, jnp.arange(STEPS))[1]


@pytest.fixture(scope="module")
def block_runs():
    return {f: [np.asarray(x) for x in jax.jit(jax.vmap(lambda c: _block_run(f, c)))(jnp.asarray(BLOCK_CASES))]
            for f in FORMULATIONS}


@pytest.mark.parametrize("formulation", FORMULATIONS)
def test_block_sticks_below_mu_n_and_slides_with_the_analytic_acceleration_above(block_runs, formulation):
    velocity, normal, tangent, mode, gap, converged = (x[:5] for x in block_runs[formulation])
    assert converged.all()
    np.testing.assert_allclose(normal, PRESS, rtol=1e-12)
    np.testing.assert_allclose(velocity[..., 1], 0.0, atol=1e-14)
    assert np.abs(gap).max() < 1e-15  # no penetration
    t_end = DT * np.arange(1, STEPS + 1)
    for ratio, v, lam_t, m in zip(BLOCK_CASES[:5, 0], velocity[..., 0], tangent, mode):
        if ratio < 1.0:  # sticks: friction balances the push exactly
            np.testing.assert_allclose(v, 0.0, atol=1e-14)
            np.testing.assert_allclose(lam_t, -ratio * LIMIT, atol=1e-12)
            assert np.all(m == STICK)
        else:  # slides: v = (F - mu N) t / m (exact for a constant force), friction at -mu N
            np.testing.assert_allclose(v, (ratio - 1.0) * LIMIT / MASS * t_end, rtol=1e-10)
            np.testing.assert_allclose(lam_t, -LIMIT, rtol=1e-12)
            assert np.all(m == SLIP_POSITIVE)


@pytest.mark.parametrize("formulation", FORMULATIONS)
def test_block_decelerates_stops_and_slips_at_the_friction_limit(block_runs, formulation):
    velocity, _, tangent, mode, _, _ = (x[5] for x in block_runs[formulation])
    # sliding at v0 = 1 m/s with no push: v = v0 - mu N t / m until the stop, then stuck
    t_end = DT * np.arange(1, STEPS + 1)
    t_stop = MASS / LIMIT
    sliding = t_end < t_stop - 1e-9
    np.testing.assert_allclose(velocity[sliding, 0], 1.0 - LIMIT / MASS * t_end[sliding], rtol=1e-12)
    assert np.all(mode[sliding] == SLIP_POSITIVE) and np.allclose(tangent[sliding], -LIMIT, rtol=1e-12)
    stopped = t_end > t_stop + DT
    np.testing.assert_allclose(velocity[stopped, 0], 0.0, atol=1e-14)
    assert np.all(mode[stopped] == STICK)
    # a push ramping at c N/s: stuck while c t <= mu N, sliding from the first step beyond
    mode, rate = block_runs[formulation][3][6], BLOCK_CASES[6, 1]
    t_step = DT * np.arange(STEPS)
    assert np.all(mode[rate * t_step < LIMIT - 1e-9] == STICK)
    assert np.all(mode[rate * t_step > LIMIT + 1e-9] == SLIP_POSITIVE)
    assert t_step[np.argmax(mode == SLIP_POSITIVE)] == pytest.approx(LIMIT / rate, abs=DT)


def test_velocity_level_handles_an_impact_with_zero_penetration(block_runs):
    """A block arriving at 1 m/s stops within one step (inelastic impulse, no penetration)."""
    _, normal, _, mode, gap, _ = (x[7] for x in block_runs["velocity"])
    assert gap.min() >= -1e-15
    k = int(np.argmax(normal > 0))  # the step that would end below the plane: gap 0.0505 - 5 * 0.01
    assert gap[k] == pytest.approx(0.0005, abs=1e-12) and np.allclose(gap[k + 1 :], 0.0, atol=1e-15)
    assert normal[k] * DT == pytest.approx(MASS * (1.0 - 0.0005 / DT), rel=1e-12)  # m (v - g / dt)
    assert mode[k] == SLIP_POSITIVE and np.all(mode[:k] == SEPARATED)


@jax.jit
def _landing(dt, restitution, vx):
    """The block in free flight from gap 0.0505 m at (vx, -1 m/s) onto y = 0, acceleration level, 120 steps."""

    def step(state, k):
        q, u = state
        contacts = point_plane_contacts(q[None], jnp.eye(2)[None], jnp.zeros((1, 2)), [0.0, 1.0], [[1.0, 0.0]], MU)
        res = contact_step("acceleration", MASS * jnp.eye(2), jnp.zeros(2), u, contacts, dt, baumgarte_rate=25.0,
                           restitution=restitution)
        return (q + dt * res.velocity, res.velocity), (q[1], u, res.normal_impulse[0], res.tangent_impulse[0, 0],
                                                       res.closing_speed[0], res.converged)

    start = (jnp.stack([0.0, 0.0505]), jnp.stack([vx, -1.0]))
    return jax.lax.scan(step, start, jnp.arange(120))[1]


@pytest.mark.parametrize("restitution, vx", [(0.0, 0.5), (0.5, 0.5), (0.0, 0.2)])
def test_acceleration_level_landing_is_an_impact_whose_penetration_shrinks_with_the_step(restitution, vx):
    """The step that finds the block past the plane starts with an impulse: Newton's law (normal velocity
    -e v), Coulomb friction (sliding on: tangential impulse -mu p_N; stuck when mu (1 + e) |v_y| >= v_x);
    the penetration is the last free step's overshoot, ceil(g0 / dt) dt - g0 < |v_y| dt (9.5/4.5/2.0 mm at
    10/5/2.5 ms; the Baumgarte force alone stopped it ~15 mm deep whatever the step). Then it is pushed out."""
    penetrations = []
    for dt in (0.01, 0.005, 0.0025):
        gap, u, p_n, p_t, closing, converged = (np.asarray(x) for x in _landing(dt, restitution, vx))
        assert converged.all()
        k = int(np.ceil(0.0505 / dt - 1e-9))  # first sample at or past the plane
        assert np.all(closing[:k] == 0.0) and closing[k] == 1.0 and np.count_nonzero(closing) == 1
        assert gap[k] == pytest.approx(0.0505 - k * dt, abs=1e-12) and gap[:k].min() > 0.0
        assert p_n[k] == pytest.approx(MASS * (1.0 + restitution), rel=1e-12)
        assert p_t[k] == pytest.approx(-min(MU * p_n[k], MASS * vx), rel=1e-12)
        after = u[k] + np.array([p_t[k], p_n[k]]) / MASS
        np.testing.assert_allclose(after, [max(vx - MU * (1.0 + restitution), 0.0), restitution], atol=1e-14)
        assert np.count_nonzero(p_n) == 1
        penetrations.append(-gap.min())
        assert -gap.min() == pytest.approx(k * dt - 0.0505, abs=1e-12) and -gap.min() < dt
    assert penetrations[0] > penetrations[1] > penetrations[2]


@pytest.mark.parametrize("directions", [4, 8])
def test_velocity_level_in_space_uses_the_polyhedral_friction_cone(directions):
    """A block on the plane z = 0 in space (nt = 2): the k-direction cone's friction limit is mu N along a
    cone direction and mu N cos(pi / k) midway between two: a push of 0.85 mu N at 45 deg slides with k = 4
    (limit mu N / sqrt 2) and sticks with k = 8 (a cone direction lies at 45 deg)."""
    angle = jnp.pi / 4

    def run(push):
        def step(state, k):
            q, u = state
            contacts = point_plane_contacts(q[None], jnp.eye(3)[None], jnp.zeros((1, 3)), [0.0, 0.0, 1.0],
                                            [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], MU)
            force = jnp.stack([push * jnp.cos(angle), push * jnp.sin(angle), -PRESS])
            res = contact_step("velocity", MASS * jnp.eye(3), force, u, contacts, DT, n_directions=directions)
            return (q + DT * res.velocity, res.velocity), (res.velocity, res.info.converged)

        return jax.lax.scan(step, (jnp.zeros(3), jnp.zeros(3)), jnp.arange(20))[1]

    velocity, converged = jax.jit(run)(0.85 * LIMIT)
    assert bool(np.all(converged))
    speed = np.linalg.norm(np.asarray(velocity)[-1, :2])
    if directions == 8:
        assert speed < 1e-13
    else:
        assert speed == pytest.approx((0.85 - 1 / np.sqrt(2)) * LIMIT / MASS * 20 * DT, rel=1e-10)


# ----------------------------------------------------------------------------- the arm scenario
@pytest.fixture(scope="module")
def arm_runs():
    """The shipped config in both formulations, with the base free (no base control): one compile each."""
    runs = {}
    for formulation in FORMULATIONS:
        scenario = load_scenario(CONFIG, [f'unilateral.formulation="{formulation}"',
                                          "controller.base_stiffness=[0,0,0]", "controller.base_damping=[0,0,0]"])
        runs[formulation] = (scenario, jax.jit(type(scenario).simulate)(scenario, scenario.params))
    return runs


@pytest.mark.parametrize("formulation", FORMULATIONS)
def test_arm_penetration_and_momentum_balance(arm_runs, formulation):
    scenario, outcome = arm_runs[formulation]
    traj = outcome.trajectory
    assert int(outcome.status) == 0 and bool(np.all(traj.lcp_converged))
    summary = scenario.summary(outcome)
    # the tip presses, sticks, then slides +x and back: every mode but separation after the first step
    assert summary["stick_s"] > 0.5 and summary["slip_positive_s"] > 2.0 and summary["separated_s"] <= 0.01
    # penetration within the step's tolerance: velocity level, the second-order term dt^2 |J_N' u| / 2 of the
    # linearised gap; acceleration level, the Baumgarte steady state of that per-step drift, |J_N' u| / alpha^2
    drift = np.asarray(traj.tip_drift[:, 1])
    alpha, dt = scenario.options.baumgarte_rate, scenario.options.dt
    bound = 0.5 * dt**2 * np.abs(drift).max() if formulation == "velocity" else np.abs(drift).max() / alpha**2
    assert summary["max_penetration_m"] <= bound
    # free base: the linear momentum changes only by the contact impulse (no base input), up to the
    # first-order scheme's O(dt) error (2e-4 of the impulse measured; halving dt halves it, see the slow test)
    change, contact = np.array(summary["momentum_change_N_s"]), np.array(summary["contact_impulse_N_s"])
    assert np.allclose(summary["applied_impulse_N_s"], 0.0)
    assert np.abs(change - contact).max() <= 1e-3 * np.abs(contact).max()


def test_formulations_agree_in_sustained_contact(arm_runs):
    """Both formulations integrate the same smooth contact phases: the modes agree at every step, and away
    from the steps where the mode switches (where a sticking force inside the cone is set differently) the
    forces differ by the O(dt) discretisation difference (~5e-4 of the peak measured) and the tip path by
    ~3e-5 m."""
    acc, vel = (arm_runs[f][1].trajectory for f in FORMULATIONS)
    mode = np.asarray(vel.mode)
    np.testing.assert_array_equal(np.asarray(acc.mode), mode)
    switch = np.zeros(mode.size, bool)
    switch[1:] |= mode[1:] != mode[:-1]
    switch[:-1] |= switch[1:].copy()
    assert switch.sum() <= 10
    peak = np.abs(vel.normal_force).max()
    assert np.abs(acc.normal_force - vel.normal_force)[~switch].max() < 1e-3 * peak
    assert np.abs(acc.tangent_force - vel.tangent_force)[~switch].max() < 1e-3 * peak
    assert np.abs(acc.tip[:, 0] - vel.tip[:, 0]).max() < 1e-4


def test_summary_and_files(arm_runs, tmp_path: Path):
    scenario, outcome = arm_runs["acceleration"]
    summary = scenario.summary(outcome)
    write_summary(tmp_path, summary)  # JSON-ready, finite
    intervals = summary["contact_intervals"]
    assert intervals[0]["start_s"] == 0.0 and intervals[-1]["end_s"] == pytest.approx(5.0)
    assert all(a["end_s"] == pytest.approx(b["start_s"]) for a, b in zip(intervals, intervals[1:]))
    durations = (summary[k] for k in ("separated_s", "stick_s", "slip_positive_s", "slip_negative_s"))
    assert sum(durations) == pytest.approx(5.0)
    assert summary["status"] == "ok" and summary["peak_normal_force_N"] > 5.0
    scenario.write(outcome, tmp_path)
    for name in ("states.csv", "steps.csv", "joint_angles.png", "contact_forces.png", "configurations.png",
                 "inputs.png"):
        assert (tmp_path / name).stat().st_size > 0
    assert int(np.max(outcome.trajectory.mode)) == SLIP_NEGATIVE
    failed = eqx.tree_at(lambda o: o.trajectory.lcp_converged, outcome,
                         outcome.trajectory.lcp_converged.at[7].set(False))
    assert "step 7 (t = 0.070 s)" in scenario.diagnose(failed)


def test_gradients_of_tip_travel_match_central_differences():
    """d(tip travel)/d(stiffness, mu) through 300 acceleration-level LCPs, vs central differences."""
    scenario = load_scenario(CONFIG, ["unilateral.t_final_s=3.0"])
    keys = ("controller.stiffness_N_m", "contact.mu")

    def travel(values):
        params = scenario.with_design(scenario.params, dict(zip(keys, values)))
        return scenario.metrics(params)["tip_travel_m"]

    x = jnp.array([200.0, 0.1])
    value_and_grad = jax.jit(jax.value_and_grad(travel))  # one compile serves the differences too
    grad = np.asarray(value_and_grad(x)[1])
    h = 1e-5 * x  # relative steps small enough that no mode switch moves to another step
    fd = [(value_and_grad(x + e)[0] - value_and_grad(x - e)[0]) / (2 * e.sum()) for e in np.diag(h)]
    assert np.all(np.abs(grad) > 1e-6)
    np.testing.assert_allclose(grad, fd, rtol=1e-5)


def test_config_errors_name_the_key():
    bad = {
        "inputs.times_s=[0.0, 0.0]": "inputs.times_s",
        "inputs.base_force_x_N=[1.0, 2.0, 3.0]": "inputs.base_force_x_N",
        "unilateral.t_final_s=1.005": "unilateral.t_final_s",
        "unilateral.initial_joint_angles_deg=[60.0, -60.0, 40.0]": "unilateral.initial_joint_angles_deg",
        'unilateral.formulation="implicit"': "unilateral.formulation",
        "robot.masses_kg=[1000.0, -30.0, 20.0, 10.0]": "robot.masses_kg",
    }
    for override, key in bad.items():
        with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
            load_scenario(CONFIG, [override])
    scenario = load_scenario(CONFIG)
    with pytest.raises(ConfigError, match="controller.stiffness_N_m"):
        scenario.with_design(scenario.params, {"controller.gain": 1.0})
    assert {p.key for p in scenario.design_space()} >= {"contact.mu", "controller.stiffness_N_m"}


# ----------------------------------------------------------------------------- slow studies
@pytest.mark.slow
def test_momentum_balance_error_is_first_order_in_the_step():
    errors = []
    for dt in (0.01, 0.005):
        scenario = load_scenario(CONFIG, ['unilateral.formulation="velocity"', f"unilateral.dt_s={dt}",
                                          "controller.base_stiffness=[0,0,0]", "controller.base_damping=[0,0,0]"])
        outcome = jax.jit(type(scenario).simulate)(scenario, scenario.params)
        errors.append(scenario.summary(outcome)["momentum_balance_error_N_s"])
    assert errors[0] / errors[1] == pytest.approx(2.0, rel=0.05)  # measured 1.98


@pytest.mark.slow
def test_velocity_level_gradients_match_central_differences():
    scenario = load_scenario(CONFIG, ['unilateral.formulation="velocity"', "unilateral.t_final_s=3.0"])
    keys = ("controller.stiffness_N_m", "contact.mu", "controller.press_force_N")

    def travel(values):
        return scenario.metrics(scenario.with_design(scenario.params, dict(zip(keys, values))))["tip_travel_m"]

    x = jnp.array([200.0, 0.1, 5.0])
    value_and_grad = jax.jit(jax.value_and_grad(travel))
    grad = np.asarray(value_and_grad(x)[1])
    fd = [(value_and_grad(x + e)[0] - value_and_grad(x - e)[0]) / (2 * e.sum()) for e in np.diag(1e-5 * x)]
    np.testing.assert_allclose(grad, fd, rtol=1e-5)


@pytest.mark.slow
def test_sweep_of_the_slide_finds_separation_beyond_the_reach_limit():
    """The tip can slide at most sqrt(2.2^2 - 1.5^2) - 1.266 = 0.343 m along the plane with the base held:
    commanded slides within it keep contact, one beyond it lifts the tip off (the design constraint). A
    config asking for it is refused; a design value gets there, and the stretched arm is flagged
    ``singular_pose`` (a warning: the design layer keeps the case)."""
    scenario = load_scenario(CONFIG)
    slides = jnp.array([0.2, 0.3, 0.4])
    metrics = jax.jit(jax.vmap(lambda x: scenario.metrics(scenario.with_design(scenario.params,
                                                                             {"controller.slide_m": x}))))(slides)
    np.testing.assert_array_equal(np.asarray(metrics["status"]), [0, 0, Status.SINGULAR_POSE])
    separated = np.asarray(metrics["separated_s"])
    assert separated[0] == 0.0 and separated[1] == 0.0 and separated[2] > 1.0
    assert np.asarray(metrics["min_normal_force_N"])[2] == 0.0
    assert np.all(np.asarray(metrics["min_normal_force_N"])[:2] > 1.0)
    np.testing.assert_allclose(np.asarray(metrics["tip_travel_m"])[:2], slides[:2], atol=0.01)
