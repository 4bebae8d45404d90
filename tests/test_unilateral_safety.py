"""The unilateral-contact scenario's guards: the reach check on the commanded path, the singularity-robust
controller and its warning, acceleration-level impacts (penetration, Newton's law on the arm) and the
penetration warning.

Independent references: plane geometry for the reach, NumPy's SVD for the damped least-squares projector,
the velocity-level formulation (impulses by construction) for the landing speed, Newton's impact law
evaluated with the arm's mass matrix, and the momentum balance.
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from diffspace.app.cli import main
from diffspace.io.packaged import DATA_DIR
from diffspace.scenarios import load_scenario
from diffspace.scenarios.unilateral.control import SINGULAR_DAMPING_M2, SINGULAR_MANIPULABILITY_M2
from diffspace.core.status import ConfigError, failed

CONFIG = DATA_DIR / "unilateral_contact.toml"
LINKS = (1.0, 0.7, 0.5)
RAISED = "unilateral.initial_base_m=[0.0,2.55]"  # joint 1 at y = 1.55 m, the tip starts 50 mm above the plane
SIMULATE = jax.jit(lambda scenario, params: scenario.simulate(params))


def _reach_limit(joint1_height):
    """Largest slide along +x on y = 0 from the paper's tip x0 = sin 60 deg + 0.5 * 4/5 (plane geometry)."""
    tip_x0 = np.sin(np.pi / 3) + 0.5 * 0.8
    return np.sqrt(sum(LINKS) ** 2 - joint1_height**2) - tip_x0


@pytest.mark.parametrize("base, height", [([], 1.5), ([RAISED], 1.55)])
def test_a_slide_beyond_the_reach_on_the_plane_is_a_config_error(base, height, tmp_path, capsys):
    limit = _reach_limit(height)  # 0.3433 m (README) and 0.2952 m with the base raised 5 cm
    load_scenario(CONFIG, base + [f"controller.slide_m={limit - 1e-4}"])
    with pytest.raises(ConfigError, match=r"^controller\.slide_m: [^\n]*reach[^\n]*$"):
        load_scenario(CONFIG, base + [f"controller.slide_m={limit + 1e-4}"])
    left = limit - 2 * np.sqrt(sum(LINKS) ** 2 - height**2)  # the far end of the chord, sliding along -x
    load_scenario(CONFIG, base + [f"controller.slide_m={left + 1e-4}"])
    with pytest.raises(ConfigError, match=r"controller\.slide_m"):
        load_scenario(CONFIG, base + [f"controller.slide_m={left - 1e-4}"])
    load_scenario(CONFIG, base + ["controller.enabled=false", "controller.slide_m=1.0"])  # no commanded path
    if base:  # the command line: one line naming the key, exit 2 (the 0.3 m slide of the raised base)
        assert main(["run", str(CONFIG), "--out", str(tmp_path / "out"), "--set", RAISED]) == 2
        err = capsys.readouterr().err
        assert "controller.slide_m" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_restitution_is_refused_at_the_velocity_level():
    with pytest.raises(ConfigError, match=r"contact\.restitution"):
        load_scenario(CONFIG, ['unilateral.formulation="velocity"', "contact.restitution=0.5"])


@pytest.mark.parametrize("angles_deg", [[60.0, -60.0, 53.13], [60.0, 4.0, -3.0], [60.0, 0.0, 0.0]])
def test_the_null_space_projector_is_the_singularity_robust_inverse(angles_deg):
    """Joint torques of the posture term at rest, tip force zero: ``N (-k_p (theta - theta_ref))`` with
    ``N = I - V diag(s^2 / (s^2 + k)) V^T`` from NumPy's SVD of the arm Jacobian, ``k = k0 (1 - w / w0)^2``
    for ``w = s1 s2 < w0``; the exact projector ``I - pinv(J) J`` away from singular poses, and finite at the
    straight (rank-one) arm, where the undamped projector is undefined."""
    scenario = load_scenario(CONFIG)
    controller, arm = scenario.params.controller, scenario.arm
    q = jnp.asarray(np.concatenate([[0.0, 2.5, 0.0], np.deg2rad(angles_deg)]))
    state = arm.evaluate(q, jnp.zeros(6))
    reference = q.at[3:].add(0.1)  # posture error -0.1 rad on every joint
    inputs, w = controller(0.0, q, jnp.zeros(6), state.tip.position, state.tip.jacobian,
                           (reference, state.tip.position[0]))
    jac = np.asarray(state.tip.jacobian)[:, 3:]
    _, sigma, vt = np.linalg.svd(jac)
    assert float(w) == pytest.approx(sigma.prod(), rel=1e-9, abs=1e-7)  # abs: sqrt of a rounding-level det
    k = SINGULAR_DAMPING_M2 * max(1.0 - float(w) / SINGULAR_MANIPULABILITY_M2, 0.0) ** 2
    projector = np.eye(3) - vt[:2].T @ np.diag(sigma**2 / (sigma**2 + k)) @ vt[:2]
    posture = float(controller.posture_stiffness) * 0.1 * np.ones(3)
    np.testing.assert_allclose(inputs[3:], projector @ posture, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(inputs[:3], 0.0, atol=1e-12)
    if k == 0.0:
        np.testing.assert_allclose(projector, np.eye(3) - np.linalg.pinv(jac) @ jac, atol=1e-12)
    else:
        assert sigma[1] < 0.05  # near or at the singular pose


def test_a_slide_into_the_singular_pose_is_damped_and_flagged():
    """A 0.34 m slide (within the 0.343 m reach) stretches the arm: the damped controller keeps the tip within
    a few mm of the plane and the run is flagged ``singular_pose`` (a warning: the design layer keeps it).
    With the damping switched off (w0 = 0) the same run throws the tip 0.24 m off the plane, unflagged."""
    scenario = load_scenario(CONFIG, ["controller.slide_m=0.34"])
    outcome = SIMULATE(scenario, scenario.params)
    summary = scenario.summary(outcome)
    assert summary["status"] == "singular_pose" and not bool(failed(outcome.status))
    assert summary["singular_s"] > 0.0 and summary["min_manipulability_m2"] < SINGULAR_MANIPULABILITY_M2
    assert summary["max_separation_m"] < 0.01 and summary["lcp_failures"] == 0
    # w0 is a parameter, not a static option: the same compiled program runs without the damping
    undamped = eqx.tree_at(lambda p: p.controller.singular_manipulability, scenario.params, jnp.asarray(0.0))
    bare = scenario.summary(SIMULATE(scenario, undamped))
    assert bare["status"] == "ok" and bare["singular_s"] == 0.0 and bare["max_separation_m"] > 0.1


def _landing(overrides):
    """The raised base (tip 50 mm above the plane) with a 0.2 m slide: the pressing force lands the tip at
    ~77 mm/s at t = 1.18 s."""
    scenario = load_scenario(CONFIG, [RAISED, "controller.slide_m=0.2", "unilateral.t_final_s=1.5"] + overrides)
    outcome = SIMULATE(scenario, scenario.params)
    return scenario, outcome, scenario.summary(outcome)


def _tip_normal_velocity_after_impact(scenario, traj, k):
    state = scenario.arm.evaluate(traj.q[k], traj.u[k])
    jac = np.asarray(state.tip.jacobian)
    after = np.asarray(traj.u[k]) + np.linalg.solve(np.asarray(state.mass), jac.T @ np.asarray(traj.impact_impulse[k]))
    return float(jac[1] @ after)


def test_the_arm_lands_with_an_impact(tmp_path):
    """Acceleration level: one impact at the landing (plastic; with e = 0.5 the tip bounces and lands again);
    the tip's normal velocity after the first is -e times the closing speed (Newton's law through the arm's
    mass matrix); the penetration is at most closing speed x step (0.08 mm at 10 ms, where the Baumgarte
    force alone let it reach 0.67 mm); the closing speed agrees with the velocity level's (impulses by
    construction) to the O(dt) difference of the two schemes; the momentum balance includes the impulse.
    A tolerance below the penetration (first run) flags ``penetration``, a warning."""
    velocity_level = _landing(['unilateral.formulation="velocity"'])[2]
    runs = ((["contact.penetration_tolerance_m=5e-5"], 0.0, "penetration"),
            (["unilateral.dt_s=0.005", "contact.restitution=0.5"], 0.5, "ok"))
    for overrides, restitution, status in runs:
        scenario, outcome, summary = _landing(overrides)
        traj, dt = outcome.trajectory, scenario.options.dt
        assert summary["status"] == status and (summary["impacts"] == 1) == (restitution == 0.0)
        k = int(np.flatnonzero(np.asarray(traj.closing_speed))[0])
        speed = float(traj.closing_speed[k])
        assert speed == pytest.approx(summary["max_closing_speed_m_s"], rel=1e-12) and 0.07 < speed < 0.085
        assert speed == pytest.approx(velocity_level["max_closing_speed_m_s"], rel=0.02)
        assert _tip_normal_velocity_after_impact(scenario, traj, k) == pytest.approx(restitution * speed, abs=1e-12)
        landing_depth = -float(np.min(traj.tip[k : k + 5, 1]))
        assert 0.0 < landing_depth <= speed * dt
        assert summary["penetration_exceeded"] == (summary["max_penetration_m"] > summary["penetration_tolerance_m"])
        assert summary["penetration_exceeded"] == (status == "penetration") and not bool(failed(outcome.status))
        assert summary["momentum_balance_error_N_s"] < 0.01 * summary["impact_impulse_N_s"][1]
    assert velocity_level["impacts"] == 0 and velocity_level["max_penetration_m"] == 0.0
    scenario.write(outcome, tmp_path)
    header = (tmp_path / "steps.csv").read_text().splitlines()[0]
    assert "closing_speed_m_s" in header and "impact_normal_impulse_N_s" in header
    assert "penetration_m" in (tmp_path / "states.csv").read_text().splitlines()[0]


@pytest.mark.slow
def test_gradients_through_the_landing_impact_match_central_differences():
    """d(tip travel, closing speed)/d(stiffness, mu, press force) through the impact LCP (restitution 0.3)
    and 200 force LCPs vs central differences (measured agreement 7e-9)."""
    settings = [RAISED, "controller.slide_m=0.2", "unilateral.t_final_s=2.0", "contact.restitution=0.3"]
    scenario = load_scenario(CONFIG, settings)
    keys = ("controller.stiffness_N_m", "contact.mu", "controller.press_force_N")

    def outputs(values):
        metrics = scenario.metrics(scenario.with_design(scenario.params, dict(zip(keys, values))))
        return jnp.stack([metrics["tip_travel_m"], metrics["max_closing_speed_m_s"]])

    x = jnp.array([200.0, 0.1, 5.0])
    jacobian = np.asarray(jax.jit(jax.jacrev(outputs))(x))
    value = jax.jit(outputs)
    fd = np.stack([(value(x + e) - value(x - e)) / (2 * e.sum()) for e in np.diag(1e-5 * np.asarray(x))], axis=1)
    assert np.abs(jacobian[0]).min() > 1e-6 and abs(jacobian[1, 2]) > 1e-3  # the press force drives the landing
    np.testing.assert_allclose(jacobian, fd, rtol=1e-6, atol=1e-12)
