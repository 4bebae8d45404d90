"""The paper's semi-analytic ejection recursion (``ejection.paper.paper_ejection``, a fast baseline).

Fast: closed forms (locked arm: v = l sqrt(k/M), t_r = pi/2 sqrt(M/k)), the equivalent mass as the Schur
complement. Slow (``-m slow``): the recursion against the full hybrid simulation for the five esd_arm7
attitudes in plane mode, and its gradient against finite differences.
"""

from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import diffspace as ds
from diffspace.actuation.friction import JointFriction
from diffspace.scenarios.ejection import EjectionModel, paper_ejection, simulate_ejection

ROBOT = Path(__file__).resolve().parents[1] / "configs" / "robots" / "esd_arm7.toml"
LOCKED, FREE = np.array([0, 2, 4, 6]), np.array([1, 3, 5])  # plane mode: joints 1, 3, 5, 7 locked
K, L = 812.7, 0.086
STATIC, COULOMB, VISCOUS = 4.0, 2.0, 5.4


@pytest.fixture(scope="module")
def arm():
    return ds.load_robot(ROBOT)


@pytest.fixture(scope="module")
def attitudes(arm):
    names = [name for name, _ in arm.attitudes]
    return names, jnp.stack([arm.attitude(name) for name in names])


def plane_model(arm, angles, friction="hybrid", static=STATIC, coulomb=COULOMB, viscous=VISCOUS):
    robot = arm.lock(list(LOCKED), angles[LOCKED])
    fr = JointFriction.uniform(robot.n_joints, static, coulomb, viscous, friction)
    return EjectionModel.build(robot, fr, K, L, [0.0, 0.0, 1.0], "plane"), angles[FREE]


def rel(a, b):
    return np.abs(np.asarray(a) - np.asarray(b)) / np.abs(np.asarray(b))


@pytest.mark.parametrize("friction, static", [("locked", STATIC), ("hybrid", 1e6)])
def test_rigid_arm_matches_closed_form(arm, attitudes, friction, static):
    """All joints held (locked model, or hybrid joints that never break loose): one mass M on a spring."""
    _, angles = attitudes
    run = jax.jit(jax.vmap(lambda a: paper_ejection(*plane_model(arm, a, friction, static))))
    out = run(angles)
    mass = float(arm.total_mass)
    assert np.all(np.asarray(out.separated)) and np.all(np.asarray(out.stable))
    np.testing.assert_allclose(out.equivalent_mass, mass, rtol=1e-12)
    assert np.all(rel(out.separation_velocity, L * np.sqrt(K / mass)) < 1e-9)
    assert np.all(rel(out.separation_time, 0.5 * np.pi * np.sqrt(mass / K)) < 1e-9)
    np.testing.assert_allclose(out.stable_time, out.separation_time, rtol=1e-12)
    assert np.all(rel(out.stable_velocity, L * np.sqrt(K / mass)) < 1e-9)
    np.testing.assert_allclose(np.rad2deg(out.tumbling_rate), 0.0, atol=1e-9)
    np.testing.assert_allclose(np.rad2deg(out.joint_change_final), 0.0, atol=1e-12)


def test_frictionless_equivalent_mass_is_schur_complement(arm, attitudes):
    """Frictionless free joints: m_eq = M - h^T H_r^{-1} h over [rail z, joints 2, 4, 6] (eqs. 15, 19)."""
    _, angles = attitudes

    def both(a):
        model, free = plane_model(arm, a, "none")
        h = ds.mass_matrix(model.robot, model.robot.neutral().at[7:].set(free))
        idx = jnp.array([2, 6, 7, 8])  # base z (the rail axis) and the three free joints
        hs = h[idx][:, idx]
        schur = hs[0, 0] - hs[0, 1:] @ jnp.linalg.solve(hs[1:, 1:], hs[1:, 0])
        return paper_ejection(model, free, max_segments=4).equivalent_mass, schur

    m_eq, schur = jax.jit(jax.vmap(both))(angles)
    np.testing.assert_allclose(m_eq, schur, rtol=1e-10)
    assert np.all(np.asarray(schur) < float(arm.total_mass))  # a free joint always lightens the arm


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_paper_recursion_vs_full_simulation(arm, attitudes):
    """Five attitudes, plane mode, hybrid friction (4 / 2 / 5.4): the paper's method against the full model.

    1. ``coriolis=True, backaction=True`` (the two terms the paper drops restored): both models then solve
       the same equations and differ only by the recursion's frozen inertia per segment, an O(dt) error.
       Measured (dt = 0.01 s): t_r, v_r <= 0.04 %, joint changes <= 0.01 deg, t_s <= 0.05 %, |w_s| <=
       0.16 %; halving dt halves them. Bounds: about 3x the measured values, and first-order convergence.
    2. The paper's method as published (defaults): same m_eq (same stick/slip decision, same Schur
       complement); the closed form where no joint slips (attitudes 3, 5; the full model agrees to its
       ODE tolerance). Where joints slip it neglects the push
       of the joint friction on the base in the oscillator (eq. 20), so the base looks lighter than it
       is and t_r and v(t_r) come out LOW (sign asserted). Magnitude: measured 1.1-5.2 % (t_r) and
       1.4-4.1 % (v_r), largest for attitude 2 (largest joint motion); the paper itself reports 2.6 % /
       3.2 % against ADAMS for its arm. Asserted caps: 6 % (t_r), 5 % (v_r), i.e. "a few %".
    """
    from diffspace.scenarios.ejection import ejection_outcome

    names, angles = attitudes

    def full(a):
        model, free = plane_model(arm, a)
        nan = jnp.asarray(jnp.nan)
        return ejection_outcome(model, simulate_ejection(model, free, 3.0), free, (nan, nan), {})

    ref = jax.jit(jax.vmap(full))(angles)
    assert np.all(np.asarray(ref.status) == 0) and np.all(np.asarray(ref.stable))
    f_tr, f_vr = np.asarray(ref.separation_time), np.asarray(ref.separation_velocity)
    f_dr, f_df = np.rad2deg(np.asarray(ref.joint_change_at_separation)), np.rad2deg(np.asarray(ref.joint_change_final))
    f_ts, f_vs = np.asarray(ref.stable_time), np.asarray(ref.stable_velocity)
    f_ws = np.rad2deg(np.linalg.norm(np.asarray(ref.stable_angular_velocity), axis=1))

    # 1. consistency: the recursion with the dropped terms restored converges to the full model
    consistent = jax.jit(jax.vmap(
        lambda a, dt: paper_ejection(*plane_model(arm, a), dt=dt, spring="oscillator", coriolis=True, backaction=True,
                                     max_segments=320),
        in_axes=(0, None)))
    fine, coarse = consistent(angles, 0.01), consistent(angles, 0.02)
    assert np.all(np.asarray(fine.stable))
    assert np.all(rel(fine.separation_time, f_tr) < 1.5e-3)
    assert np.all(rel(fine.separation_velocity, f_vr) < 1.5e-3)
    assert np.all(np.abs(np.asarray(np.rad2deg(fine.joint_change_at_separation)) - f_dr) < 0.03)
    assert np.all(np.abs(np.asarray(np.rad2deg(fine.joint_change_final)) - f_df) < 0.03)
    assert np.all(rel(fine.stable_time, f_ts) < 2e-3)
    assert np.all(rel(fine.stable_velocity, f_vs) < 1e-3)
    assert np.all(np.abs(np.asarray(np.rad2deg(fine.tumbling_rate)) - f_ws) < 5e-3 * f_ws + 1e-6)
    slipping = np.any(np.abs(f_dr) > 1e-6, axis=1)
    for key, target in (("separation_time", f_tr), ("separation_velocity", f_vr)):
        err_fine, err_coarse = rel(getattr(fine, key), target)[slipping], rel(getattr(coarse, key), target)[slipping]
        assert np.all(err_fine < 0.65 * err_coarse), (key, err_fine, err_coarse)  # first order in dt

    # 2. the paper's method as published
    paper = jax.jit(jax.vmap(lambda a: paper_ejection(*plane_model(arm, a))))(angles)
    p = jax.tree_util.tree_map(np.asarray, paper)
    np.testing.assert_allclose(p.equivalent_mass, np.asarray(ref.equivalent_mass), rtol=1e-10)
    assert slipping.tolist() == [True, True, False, True, False]
    d_tr = (p.separation_time - f_tr) / f_tr
    d_vr = (p.separation_velocity - f_vr) / f_vr
    print("\npaper method vs full model (plane, hybrid 4/2/5.4):")
    print(f"{'attitude':11s} {'t_r %':>7s} {'v_r %':>7s} {'t_s %':>7s} {'v_s %':>7s} {'|w_s| p/f':>13s}  "
          "joint change at t_r / final, paper - full [deg]")
    for i, name in enumerate(names):
        d_ts = p.stable_time[i] / f_ts[i] - 1
        print(f"{name:11s} {100 * d_tr[i]:7.2f} {100 * d_vr[i]:7.2f} {100 * d_ts:7.2f} "
              f"{100 * (p.stable_velocity[i] / f_vs[i] - 1):7.2f} {float(np.rad2deg(p.tumbling_rate[i])):6.2f}/"
              f"{f_ws[i]:6.2f}  {np.round(np.rad2deg(p.joint_change_at_separation[i]) - f_dr[i], 3)} "
              f"{np.round(np.rad2deg(p.joint_change_final[i]) - f_df[i], 3)}")
    # no joint slips: the recursion is the closed form; the full model agrees to its ODE tolerance (rtol 1e-8)
    mass = float(arm.total_mass)
    assert np.all(rel(p.separation_time[~slipping], 0.5 * np.pi * np.sqrt(mass / K)) < 1e-12)
    assert np.all(rel(p.separation_velocity[~slipping], L * np.sqrt(K / mass)) < 1e-12)
    assert np.all(np.abs(d_tr[~slipping]) < 1e-7) and np.all(np.abs(d_vr[~slipping]) < 1e-7)
    assert np.all(d_tr[slipping] < 0) and np.all(d_vr[slipping] < 0)
    assert np.all(np.abs(d_tr) < 0.06) and np.all(np.abs(d_vr) < 0.05)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_paper_recursion_gradient_matches_finite_differences(arm):
    """d v(t_r) / dB through the recursion (joint-stop and separation times by the implicit function theorem)."""
    angles = arm.attitude("attitude_2")

    def v_sep(viscous):
        return paper_ejection(*plane_model(arm, angles, viscous=viscous)).separation_velocity

    value, grad = jax.jit(jax.value_and_grad(v_sep))(VISCOUS)
    f = jax.jit(v_sep)
    step = 1e-4
    fd = (f(VISCOUS + step) - f(VISCOUS - step)) / (2 * step)
    assert np.isfinite(float(grad)) and float(grad) < 0  # more damping, slower ejection
    np.testing.assert_allclose(float(grad), float(fd), rtol=1e-6)
