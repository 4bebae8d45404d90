"""Dynamics of random floating-base trees against Pinocchio (1e-9 relative)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import diffspace as ds

from .pinocchio_ref import PinocchioReference
from .random_robots import write_random_robot

FAST_JOINT_COUNTS = (1, 4, 8)  # each case compiles its own programs: the other sizes run with the slow studies
CASES = [
    pytest.param(seed, n, branched, marks=() if n in FAST_JOINT_COUNTS else pytest.mark.slow)
    for seed, (n, branched) in enumerate([(n, b) for n in range(1, 9) for b in (False, True)])
]


def _state(robot, rng):
    quat = rng.normal(size=4)
    q = np.concatenate([rng.normal(size=3), quat / np.linalg.norm(quat), rng.uniform(-2, 2, robot.n_joints)])
    return q, rng.normal(size=robot.nv), rng.normal(size=robot.nv)


def _rel(a, b):
    return np.abs(np.asarray(a) - np.asarray(b)).max() / max(np.abs(np.asarray(b)).max(), 1e-300)


@pytest.mark.parametrize("seed,n_joints,branched", CASES)
def test_matches_pinocchio(tmp_path, seed, n_joints, branched):
    path = write_random_robot(tmp_path, seed, n_joints, branched)
    robot = ds.load_robot(path)
    ref = PinocchioReference(path, robot)
    rng = np.random.default_rng(100 + seed)
    for _ in range(3):
        q, v, tau = _state(robot, rng)
        assert _rel(ds.mass_matrix(robot, q), ref.mass_matrix(q)) < 1e-9
        assert _rel(ds.bias_forces(robot, q, v), ref.bias(q, v)) < 1e-9
        assert _rel(ds.forward_dynamics(robot, q, v, tau), ref.aba(q, v, tau)) < 1e-9
        assert _rel(ds.center_of_mass(robot, q), ref.com(q)) < 1e-9
        for name in (robot.frame_names[-1], robot.body_names[-1]):
            rot, pos = ds.frame_pose(robot, q, name)
            rot_ref, pos_ref = ref.frame(q, name)
            assert _rel(rot, rot_ref) < 1e-9 and _rel(pos, pos_ref) < 1e-9
            assert _rel(ds.frame_jacobian(robot, q, name), ref.jacobian(q, name)) < 1e-9
        lin, ang, com = ref.momentum(q, v)
        our_lin, our_ang = ds.momentum(robot, q, v)
        assert _rel(our_lin, lin) < 1e-9
        # Pinocchio reports angular momentum about the CoM; shift ours from the world origin.
        assert _rel(our_ang - np.cross(com, our_lin), ang) < 1e-9


def test_jit_vmap_consistent(tmp_path):
    robot = ds.load_robot(write_random_robot(tmp_path, 3, 5, True))
    rng = np.random.default_rng(0)
    states = [_state(robot, rng) for _ in range(4)]
    q, v, tau = (jnp.stack([s[i] for s in states]) for i in range(3))
    batched = jax.jit(jax.vmap(lambda q, v, t: ds.forward_dynamics(robot, q, v, t)))(q, v, tau)
    for k in range(4):
        assert _rel(batched[k], ds.forward_dynamics(robot, q[k], v[k], tau[k])) < 1e-12


def test_inverse_dynamics_inverts_forward(tmp_path):
    robot = ds.load_robot(write_random_robot(tmp_path, 5, 6, True))
    q, v, tau = _state(robot, np.random.default_rng(2))
    accel = ds.forward_dynamics(robot, q, v, tau)
    assert _rel(ds.inverse_dynamics(robot, q, v, accel), tau) < 1e-9


def test_generalized_jacobian_predicts_momentum_conserving_twist(tmp_path):
    robot = ds.load_robot(write_random_robot(tmp_path, 7, 6, False))
    q, _, _ = _state(robot, np.random.default_rng(4))
    rates = np.random.default_rng(5).normal(size=robot.n_joints)
    h = ds.mass_matrix(robot, q)
    base = -np.linalg.solve(h[:6, :6], h[:6, 6:] @ rates)
    v = jnp.concatenate([base, rates])
    lin, ang = ds.momentum(robot, q, v)
    assert max(np.abs(lin).max(), np.abs(ang).max()) < 1e-10
    name = robot.frame_names[-1]
    twist = ds.frame_jacobian(robot, q, name) @ v
    assert _rel(ds.generalized_jacobian(robot, q, name) @ rates, twist) < 1e-9


def test_gravity_term_matches_pinocchio(tmp_path):
    path = write_random_robot(tmp_path, 11, 4, True)
    robot = ds.load_robot(path)
    ref = PinocchioReference(path, robot)
    ref.model.gravity.linear[:] = [0.0, 0.0, -9.81]
    q, v, _ = _state(robot, np.random.default_rng(6))
    assert _rel(ds.bias_forces(robot, q, v, gravity=jnp.array([0.0, 0.0, -9.81])), ref.bias(q, v)) < 1e-9
