"""Dynamics kernels (ABA, recursive CRBA/RNEA, LTDL) against Pinocchio, the dense path and theory.

``test_dynamics.py`` already checks the default kernels (ABA for forward dynamics, CRBA for the mass
matrix) on 16 random trees against Pinocchio; here: the other kernels, gravity, the sparse factorisation,
gradients (custom JVPs) against the dense path and finite differences, ``vmap`` and the eager cache.
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import diffspace as ds
from diffspace.core import dynamics, eager, linalg, restricted
from diffspace.core.aba import articulated_body_algorithm, solve_spd6
from diffspace.core.crba import ancestor_pairs, dof_parents, ltdl_factor, ltdl_solve, rnea_bias
from diffspace.core.tree_pass import tree_motion

from .pinocchio_ref import PinocchioReference
from .random_robots import write_random_robot

GRAVITY = np.array([0.3, -1.2, -9.81])


def _state(robot, rng):
    quat = rng.normal(size=4)
    q = np.concatenate([rng.normal(size=3), quat / np.linalg.norm(quat), rng.uniform(-2, 2, robot.n_joints)])
    return q, rng.normal(size=robot.nv), rng.normal(size=robot.nv)


def _rel(a, b):
    return np.abs(np.asarray(a) - np.asarray(b)).max() / max(np.abs(np.asarray(b)).max(), 1e-300)


@pytest.fixture(scope="module")
def branched(tmp_path_factory):
    """A 6-joint branched tree with revolute, continuous and prismatic joints and a merged fixed link."""
    path = write_random_robot(tmp_path_factory.mktemp("kernels"), 21, 6, True)
    return ds.load_robot(path), path


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """A 4-joint branched tree (small, so that the gradient programs compile fast)."""
    path = write_random_robot(tmp_path_factory.mktemp("kernels_small"), 22, 4, True)
    return ds.load_robot(path), path


def test_every_kernel_matches_pinocchio(branched):
    robot, path = branched
    ref = PinocchioReference(path, robot)
    q, v, tau = _state(robot, np.random.default_rng(3))
    # the defaults (ABA, CRBA) are checked on 16 trees by test_dynamics; here the CRBA + LTDL solve
    assert _rel(ds.forward_dynamics(robot, q, v, tau, kernel="crba"), ref.aba(q, v, tau)) < 1e-9
    with pytest.raises(ValueError, match="unknown kernel"):
        ds.mass_matrix(robot, q, kernel="aba")


def test_gravity_in_rnea_and_aba(branched):
    """World gravity rotated into base axes: RNEA vs Pinocchio, ABA vs ``H^-1 (tau - b)``."""
    robot, path = branched
    ref = PinocchioReference(path, robot)
    ref.model.gravity.linear[:] = GRAVITY
    q, v, tau = _state(robot, np.random.default_rng(4))
    g_base = ds.core.spatial.quat_to_rotation(jnp.asarray(q[3:7])).T @ GRAVITY
    bias = jax.jit(lambda *x: rnea_bias(robot, tree_motion(robot, *x[:2]), x[2]))(q, v, g_base)
    assert _rel(bias, ref.bias(q, v)) < 1e-9
    accel = jax.jit(lambda *x: articulated_body_algorithm(robot, *x, gravity=GRAVITY))(q, v, tau)
    assert _rel(accel, np.linalg.solve(ref.mass_matrix(q), tau - ref.bias(q, v))) < 1e-9


def test_ltdl_has_no_fill_in_and_solves():
    """Featherstone's LTDL on a matrix with the sparsity of a branched tree: exact factor, exact solve."""
    parents = (-1, 0, 1, 1, 0, 4)  # bodies: two branches below the base and a fork at body 1
    dof_parent = dof_parents(parents)
    nv = len(dof_parent)
    rng = np.random.default_rng(5)
    lower = np.eye(nv)
    for k in range(nv):
        j = dof_parent[k]
        while j >= 0:
            lower[k, j] = rng.normal()
            j = dof_parent[j]
    h = lower.T @ np.diag(rng.uniform(0.5, 2.0, nv)) @ lower  # H = L^T D L, zero between branches
    factor = np.asarray(ltdl_factor(jnp.asarray(h), dof_parent))
    assert np.allclose(np.tril(factor, -1), np.tril(lower, -1), atol=1e-12, rtol=0)
    rhs = rng.normal(size=nv)
    assert _rel(ltdl_solve(jnp.asarray(factor), dof_parent, jnp.asarray(rhs)), np.linalg.solve(h, rhs)) < 1e-12


def test_ancestor_pair_tables_of_a_branched_tree():
    """Joint pairs on one branch map to (ancestor, descendant) symmetrically; pairs across branches to 0."""
    parents = (-1, 0, 1, 1, 0, 4)  # joints 0-4 are bodies 1-5: joint 0 forks into 1 and 2; 3 -> 4 a second branch
    ancestor, descendant, on_one_branch = ancestor_pairs(parents)
    expected_branch = np.array([[1, 1, 1, 0, 0], [1, 1, 0, 0, 0], [1, 0, 1, 0, 0], [0, 0, 0, 1, 1], [0, 0, 0, 1, 1]])
    np.testing.assert_array_equal(on_one_branch, expected_branch)
    np.testing.assert_array_equal(ancestor, ancestor.T)
    np.testing.assert_array_equal(descendant, descendant.T)
    assert ancestor[0, 2] == 0 and descendant[0, 2] == 2 and ancestor[4, 3] == 3 and descendant[4, 3] == 4


def test_spd_solve_value_and_derivatives_match_a_general_solve():
    """``spd_solve`` (Cholesky, implicit derivatives through the same factor): value, JVP, gradient and vmap
    against ``jnp.linalg.solve`` differentiated by JAX's own rules."""
    rng = np.random.default_rng(7)
    m = rng.normal(size=(5, 5))
    a, b = jnp.asarray(m @ m.T + 5.0 * np.eye(5)), jnp.asarray(rng.normal(size=5))
    da = rng.normal(size=(5, 5))
    da, db = jnp.asarray(da + da.T), jnp.asarray(rng.normal(size=5))
    for ours, ref in zip(jax.jvp(linalg.spd_solve, (a, b), (da, db)), jax.jvp(jnp.linalg.solve, (a, b), (da, db))):
        assert _rel(ours, ref) < 1e-13
    loss = lambda solve: lambda a_, b_: jnp.sum(jnp.sin(solve(a_, b_)))  # noqa: E731
    for ours, ref in zip(jax.grad(loss(linalg.spd_solve), (0, 1))(a, b), jax.grad(loss(jnp.linalg.solve), (0, 1))(a, b)):
        assert _rel(ours, ref) < 1e-13
    batched = jax.vmap(linalg.spd_solve)(jnp.stack([a, 2.0 * a]), jnp.stack([b, b]))
    assert _rel(batched[1], 0.5 * np.linalg.solve(np.asarray(a), np.asarray(b))) < 1e-13


def test_solve_spd6():
    a = np.random.default_rng(6).normal(size=(6, 6))
    spd, rhs = a @ a.T + 0.5 * np.eye(6), np.arange(6.0)
    assert _rel(solve_spd6(jnp.asarray(spd), jnp.asarray(rhs)), np.linalg.solve(spd, rhs)) < 1e-12


def _loss(kernel, robot, q, v, tau):
    weights = jnp.linspace(0.5, 1.5, robot.nv)
    return weights @ ds.forward_dynamics(robot, q, v, tau, kernel=kernel)


def test_aba_gradient_matches_dense_and_finite_differences(small):
    """``jax.grad`` through ABA (implicit-function JVP) vs the dense path and central differences, with
    respect to the state, the torques and the robot's geometry and mass properties."""
    robot, _ = small
    q, v, tau = (jnp.asarray(x) for x in _state(robot, np.random.default_rng(7)))
    grad_aba = eqx.filter_jit(eqx.filter_grad(lambda x: _loss("aba", *x)))((robot, q, v, tau))
    grad_dense = eqx.filter_jit(eqx.filter_grad(lambda x: _loss("dense", *x)))((robot, q, v, tau))
    for a, d in zip(grad_aba[1:], grad_dense[1:]):
        assert _rel(a, d) < 1e-9
    for field in ("mass", "com", "placement_pos", "placement_rot", "axis"):
        assert _rel(getattr(grad_aba[0], field), getattr(grad_dense[0], field)) < 1e-9, field
    # Cholesky differentiates only one triangle of H: compare inertia gradients on symmetric directions
    sym = lambda g: g + jnp.swapaxes(g, -1, -2)  # noqa: E731
    assert _rel(sym(grad_aba[0].inertia), sym(grad_dense[0].inertia)) < 1e-9
    direction, step = jnp.zeros(robot.nq).at[7:].set(1.0), 1e-5
    central = (_loss("aba", robot, q + step * direction, v, tau) - _loss("aba", robot, q - step * direction, v, tau))
    central = central / (2 * step)
    assert abs(central - grad_aba[1] @ direction) < 1e-7 * max(1.0, abs(central))


def test_mass_matrix_derivative(branched):
    """Forward-mode derivative of the CRBA mass matrix (custom JVP) equals the dense path's."""
    robot, _ = branched
    q, _, _ = _state(robot, np.random.default_rng(8))
    dq = jnp.asarray(np.random.default_rng(9).normal(size=robot.nq))
    def tangent(kernel):
        return jax.jit(lambda x, dx: jax.jvp(lambda y: ds.mass_matrix(robot, y, kernel=kernel), (x,), (dx,))[1])

    assert _rel(tangent("crba")(jnp.asarray(q), dq), tangent("dense")(jnp.asarray(q), dq)) < 1e-10



def test_vmap_of_aba_and_its_gradient(small):
    robot, _ = small
    rng = np.random.default_rng(10)
    q, v, tau = (jnp.asarray(np.stack(x)) for x in zip(*[_state(robot, rng) for _ in range(3)]))

    def batched(kernel):
        accel = jax.vmap(lambda *x: ds.forward_dynamics(robot, *x, kernel=kernel))
        grad = jax.vmap(jax.grad(lambda *x: _loss(kernel, robot, *x)))
        return jax.jit(lambda *x: (accel(*x), grad(*x)))(q, v, tau)

    (accel, grad), (accel_dense, grad_dense) = batched("aba"), batched("dense")
    assert _rel(accel, accel_dense) < 1e-10 and _rel(grad, grad_dense) < 1e-9
    assert _rel(accel[1], ds.forward_dynamics(robot, q[1], v[1], tau[1])) < 1e-12


def test_eager_calls_share_one_program_per_topology(branched):
    """Robots differing only in array values reuse the compiled program; traced calls run inline."""
    robot, _ = branched
    heavier = eqx.tree_at(lambda r: r.mass, robot, robot.mass * 2.0)
    q, v, tau = _state(robot, np.random.default_rng(11))
    a1 = ds.forward_dynamics(robot, q, v, tau)
    a2 = ds.forward_dynamics(heavier, q, v, tau)
    assert _rel(a2, dynamics.forward_dynamics(heavier, q, v, tau, kernel="dense")) < 1e-10
    assert not np.allclose(a1, a2)
    topology = jax.tree_util.tree_structure(robot)
    assert len([key for key in ds.forward_dynamics.programs if key[0] == topology and not key[2]]) == 1
    assert eager.robot_leaves(robot)[1] == topology
    traced = jax.jit(lambda x: ds.forward_dynamics(robot, x, v, tau))(jnp.asarray(q))
    assert _rel(traced, a1) < 1e-12


def test_compile_robot_matches_the_plain_functions(branched):
    """``compile_robot`` binds one robot (its arrays constants): same results as the plain functions, static
    keywords select programs, pytree arguments (a base restriction) work, traced calls run inline."""
    robot, _ = branched
    fast = ds.compile_robot(robot)
    q, v, tau = _state(robot, np.random.default_rng(12))
    assert _rel(fast.forward_dynamics(q, v, tau), ds.forward_dynamics(robot, q, v, tau)) < 1e-12
    assert _rel(fast.forward_dynamics(q, v, tau, kernel="crba"), ds.forward_dynamics(robot, q, v, tau)) < 1e-10
    assert _rel(fast.mass_matrix(q), ds.mass_matrix(robot, q)) < 1e-12
    planar = restricted.BaseMotion.planar()
    accel, _ = fast.restricted_dynamics(q, v, tau, planar)
    assert _rel(accel, restricted.restricted_dynamics(robot, q, v, tau, planar)[0]) < 1e-12
    traced = jax.jit(lambda x: fast.forward_dynamics(x, v, tau))(jnp.asarray(q))
    assert _rel(traced, ds.forward_dynamics(robot, q, v, tau)) < 1e-12
    with pytest.raises(AttributeError, match="not a robot function"):
        fast.frame_pose
