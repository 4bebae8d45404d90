"""Locking joints and restricting the base: exact equivalence with the constrained full model."""

import jax.numpy as jnp
import numpy as np
import pytest

import diffspace as ds
from diffspace.core.restricted import BaseMotion, restricted_dynamics
from diffspace.integrate import SolverSettings, simulate

TIGHT = SolverSettings(rtol=1e-10, atol=1e-12, n_save=21)

from .random_robots import write_random_robot


@pytest.mark.parametrize("seed,branched", [(0, False), (1, True), (2, True)])
def test_lock_equals_constrained_full_model(tmp_path, seed, branched):
    robot = ds.load_robot(write_random_robot(tmp_path, seed, 6, branched))
    rng = np.random.default_rng(seed)
    angles = rng.uniform(-1.5, 1.5, robot.n_joints)
    locked = [1, 3, 4]
    free = [j for j in range(robot.n_joints) if j not in locked]
    quat = rng.normal(size=4)
    q = jnp.concatenate([jnp.array(rng.normal(size=3)), quat / np.linalg.norm(quat), angles])
    v = jnp.array(rng.normal(size=robot.nv)).at[6 + np.array(locked)].set(0.0)
    tau = jnp.array(rng.normal(size=robot.nv))
    mask = jnp.ones(robot.n_joints).at[jnp.array(locked)].set(0.0)
    accel_full, holding = restricted_dynamics(robot, q, v, tau, BaseMotion.free(), mask)
    reduced = robot.lock(locked, angles[locked])
    keep = np.r_[0:6, 6 + np.array(free)]
    q_red = jnp.concatenate([q[:7], q[7 + np.array(free)]])
    accel_red = ds.forward_dynamics(reduced, q_red, v[keep], tau[keep])
    assert np.abs(accel_red - accel_full[keep]).max() < 1e-9 * np.abs(accel_red).max()
    assert np.allclose(accel_full[6 + np.array(locked)], 0.0, atol=1e-12)
    assert np.isclose(reduced.total_mass, robot.total_mass, rtol=1e-14)
    # locked links keep their names as frames at the same pose
    name = robot.body_names[1 + locked[-1]]
    for a, b in zip(ds.frame_pose(reduced, q_red, name), ds.frame_pose(robot, q, name)):
        assert np.allclose(a, b, atol=1e-12)
    # the holding torques are what the joints must transmit: H a + b - tau on the locked rows
    residual = ds.mass_matrix(robot, q) @ accel_full + ds.bias_forces(robot, q, v) - tau
    assert np.allclose(residual, holding, atol=1e-9)


def test_planar_base_equals_in_plane_3d_motion(tmp_path):
    robot = ds.load_robot(write_random_robot(tmp_path, 4, 4, True, planar=True))
    q0 = robot.neutral().at[7:].set(jnp.array([0.4, -0.7, 0.2, 0.9]))
    v0 = jnp.array([0.3, 0.0, -0.2, 0.0, 0.5, 0.0, 1.0, -0.5, 0.3, 0.8])

    def torque(t, q, v):
        return 0.5 * jnp.sin(2 * t) * jnp.arange(1.0, 5.0)

    free = simulate(robot, q0, v0, 2.0, torque, BaseMotion.free(), settings=TIGHT)
    planar = simulate(robot, q0, v0, 2.0, torque, BaseMotion.planar((0.0, 1.0, 0.0)), settings=TIGHT)
    assert np.abs(free.q[:, 1]).max() < 1e-12  # the 3D motion stays in the x-z plane
    assert np.abs(free.q - planar.q).max() < 1e-8
    _, reaction = restricted_dynamics(robot, planar.q[-1], planar.v[-1], jnp.zeros(robot.nv), BaseMotion.planar())
    assert np.abs(reaction).max() < 1e-9  # no reaction needed when the motion is planar anyway


def test_rail_reaction_balances_joint_forces(tmp_path):
    robot = ds.load_robot(write_random_robot(tmp_path, 8, 5, False))
    q = robot.neutral().at[7:].set(jnp.array([0.5, -0.3, 1.0, 0.2, -0.8]))
    v = jnp.zeros(robot.nv).at[2].set(0.4).at[6:].set(jnp.array([0.3, -0.2, 0.1, 0.5, -0.4]))
    rail = BaseMotion.rail((0.0, 0.0, 1.0))
    accel, reaction = restricted_dynamics(robot, q, v, jnp.zeros(robot.nv), rail)
    assert np.allclose(accel[np.array([0, 1, 3, 4, 5])], 0.0, atol=1e-12)
    assert abs(reaction[2]) < 1e-12  # no reaction along the rail
    h, b = ds.mass_matrix(robot, q), ds.bias_forces(robot, q, v)
    assert np.allclose(h @ accel + b, reaction, atol=1e-9)
