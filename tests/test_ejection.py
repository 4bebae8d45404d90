"""Ejection physics: analytic limits, conservation, equivalent mass, friction models, gradients (issue 3)."""

from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import diffspace as ds
from diffspace.design import simulate_default
from diffspace.core.restricted import restricted_dynamics
from diffspace.scenarios import load_scenario
from diffspace.scenarios.ejection import equivalent_mass

CONFIGS = Path(__file__).resolve().parent.parent / "configs"
K, L = 812.7, 0.086


def _case(*overrides, config="ejection_plane.toml"):
    return load_scenario(CONFIGS / config, list(overrides))


@pytest.mark.parametrize("attitude", ["attitude_1", "attitude_4"])
def test_locked_joints_match_rigid_oscillator(attitude):
    case = _case("friction.model=\"locked\"", f"ejection.attitude=\"{attitude}\"")
    result = simulate_default(case)
    mass = float(case.robot.total_mass)
    assert int(result.status) == 0
    assert abs(result.separation_velocity - L * np.sqrt(K / mass)) < 1e-6 * L * np.sqrt(K / mass)
    assert abs(result.separation_time - np.pi / 2 * np.sqrt(mass / K)) < 1e-6 * np.pi / 2 * np.sqrt(mass / K)
    assert abs(result.equivalent_mass - mass) < 1e-9 * mass


@pytest.mark.parametrize("config", ["ejection_plane.toml", "ejection_space.toml"])
def test_frictionless_energy_and_momentum(config):
    case = _case("friction.model=\"none\"", "simulation.rtol=1e-10", "simulation.atol=1e-12", config=config)
    result = simulate_default(case)
    model, _ = case.model_of(case.params)
    sol = result.solution
    index = int(np.argmax(np.asarray(sol.segment_event)))
    q_sep, v_sep = sol.segment_y.q[index], sol.segment_y.v[index]
    energy_sep = ds.kinetic_energy(model.robot, q_sep, v_sep)
    assert abs(energy_sep - result.spring_energy) < 1e-8 * result.spring_energy
    q_end, v_end = sol.final_y.q, sol.final_y.v
    for before, after in zip(ds.momentum(model.robot, q_sep, v_sep), ds.momentum(model.robot, q_end, v_end)):
        assert np.abs(after - before).max() < 1e-9 * max(np.abs(before).max(), 1e-3)
    assert float(sol.ts[-1]) > float(result.separation_time) + 1.0  # well into free flight


def test_equivalent_mass_is_schur_complement_and_sets_initial_acceleration():
    case = _case("friction.model=\"none\"", "ejection.attitude=\"attitude_2\"")
    model, free_angles = case.model_of(case.params)
    q0 = model.robot.neutral().at[7:].set(free_angles)
    h = np.asarray(ds.mass_matrix(model.robot, q0))
    rows = np.r_[2, 6:model.robot.nv]  # rail = base z, then the free joints
    hr = h[np.ix_(rows, rows)]
    schur = hr[0, 0] - hr[0, 1:] @ np.linalg.solve(hr[1:, 1:], hr[1:, 0])
    m_eq = equivalent_mass(model.robot, model.rail_axis, q0, jnp.ones(model.robot.n_joints))
    assert abs(m_eq - schur) < 1e-9 * schur
    assert schur < 0.9 * float(model.robot.total_mass)  # free joints really lower the mass
    tau = jnp.zeros(model.robot.nv).at[2].set(K * L)
    accel, _ = restricted_dynamics(model.robot, q0, jnp.zeros(model.robot.nv), tau, model.rail)
    assert abs(accel[2] - K * L / schur) < 1e-9 * K * L / schur


def test_simulate_builds_one_model(monkeypatch):
    """``simulate`` builds its model once: the frictionless equivalent masses (space and plane) lock the arm as
    their modes do and share the run's rail; they build no model of their own."""
    case = _case()
    built, model_of = [], type(case).model_of
    monkeypatch.setattr(type(case), "model_of", lambda self, *args: built.append(args) or model_of(self, *args))
    outcome = jax.eval_shape(case.simulate, case.params)  # traced, not compiled
    assert len(built) == 1 and outcome.equivalent_mass_space_frictionless.shape == ()


def test_energy_budget_closes_with_stick_slip():
    case = _case("simulation.rtol=1e-10", "simulation.atol=1e-12")
    result = simulate_default(case)
    assert bool(result.stable)
    events = int(np.sum(np.asarray(result.solution.segment_event)))
    assert events >= 3  # separation plus stick/slip transitions inside the horizon
    budget = result.spring_energy - result.kinetic_energy_final - result.friction_loss
    assert abs(budget) < 1e-8 * result.spring_energy
    assert result.friction_loss > 0.01 * result.spring_energy


@pytest.mark.slow  # a convergence study (three smoothing widths, 40 s); the hybrid law has fast energy tests
@pytest.mark.timeout(1200)
def test_smooth_friction_converges_to_hybrid():
    hybrid_case = _case("ejection.attitude=\"attitude_2\"")
    hybrid = simulate_default(hybrid_case)
    errors = []
    for eps in (1e-2, 1e-3, 1e-4):
        case = _case("friction.model=\"smooth\"", f"friction.smooth_velocity_rad_s={eps}", "ejection.attitude=\"attitude_2\"",
                     "simulation.max_steps=200000")
        smooth = simulate_default(case)
        errors.append(
            max(
                abs(smooth.separation_velocity - hybrid.separation_velocity) / hybrid.separation_velocity,
                float(np.abs(smooth.joint_change_final - hybrid.joint_change_final).max()),
            )
        )
    assert errors[2] < errors[1] < errors[0]
    assert errors[2] < 2e-3


@pytest.mark.slow  # ~2 min of compile; the stop-event gradient (test_joint_stops) and the bench cover it too
@pytest.mark.timeout(1500)
def test_gradient_of_stable_velocity_matches_finite_differences():
    """``jax.grad`` of the stable velocity w.r.t. the free joints' angles [deg] and the viscous coefficient,
    through stick/slip events, against central differences."""
    case = _case()
    keys = [f"ejection.attitude[{j}]" for j in case.free] + ["friction.viscous_N_m_s_rad"]

    def stable_velocity(values):
        params = case.with_design(case.params, dict(zip(keys, values)))
        return case.metrics(params)["stable_velocity_m_s"]

    x0 = jnp.concatenate([jnp.rad2deg(case.params.attitude[jnp.asarray(case.free)]), case.params.viscous[None]])
    result = simulate_default(case)
    assert int(np.sum(np.asarray(result.solution.segment_event))) >= 3  # stick/slip events inside the horizon
    grad = jax.jit(jax.grad(stable_velocity))(x0)
    value = jax.jit(stable_velocity)
    steps = [1e-3] * len(case.free) + [1e-5]
    for k, h in enumerate(steps):
        e = jnp.zeros_like(x0).at[k].set(h)
        fd = (value(x0 + e) - value(x0 - e)) / (2 * h)
        scale = np.deg2rad(1e-3) if k < len(case.free) else 1e-4
        assert abs(grad[k] - fd) < 1e-4 * max(abs(fd), scale), (keys[k], grad[k], fd)
