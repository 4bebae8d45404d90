"""Quaternion and spatial-algebra identities, including finite gradients at zero rotation."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diffspace.core import spatial


def _rng_rotvec(seed):
    """Random rotation vector with angle in (0.1, 3) rad (log returns the shortest rotation, angle <= pi)."""
    rng = np.random.default_rng(seed)
    w = rng.normal(size=3)
    return w / np.linalg.norm(w) * rng.uniform(0.1, 3.0)


@pytest.mark.parametrize("seed", range(5))
def test_exp_log_roundtrip(seed):
    w = _rng_rotvec(seed)
    assert np.allclose(spatial.quat_log(spatial.quat_exp(w)), w, atol=1e-12)
    assert np.allclose(spatial.so3_log(spatial.so3_exp(w)), w, atol=1e-10)
    assert np.allclose(spatial.so3_exp(w), spatial.axis_angle_rotation(w / np.linalg.norm(w), np.linalg.norm(w)))


@pytest.mark.parametrize("seed", range(5))
def test_hamilton_product_composes_rotations(seed):
    a, b = spatial.quat_exp(_rng_rotvec(seed)), spatial.quat_exp(_rng_rotvec(seed + 10))
    lhs = spatial.quat_to_rotation(spatial.quat_multiply(a, b))
    assert np.allclose(lhs, spatial.quat_to_rotation(a) @ spatial.quat_to_rotation(b), atol=1e-12)
    r = spatial.quat_to_rotation(a)
    assert np.allclose(spatial.quat_to_rotation(spatial.rotation_to_quat(r)), r, atol=1e-12)


def test_quaternion_convention_xyzw():
    # 90 degrees about z: q = [0, 0, sin 45, cos 45] maps x to y.
    q = jnp.array([0.0, 0.0, np.sqrt(0.5), np.sqrt(0.5)])
    assert np.allclose(spatial.quat_to_rotation(q) @ jnp.array([1.0, 0, 0]), [0, 1, 0], atol=1e-15)


def test_rpy_matches_urdf_convention():
    roll, pitch, yaw = 0.3, -0.2, 1.1
    expected = (
        spatial.axis_angle_rotation(jnp.array([0, 0, 1.0]), yaw)
        @ spatial.axis_angle_rotation(jnp.array([0, 1.0, 0]), pitch)
        @ spatial.axis_angle_rotation(jnp.array([1.0, 0, 0]), roll)
    )
    assert np.allclose(spatial.rpy_to_rotation(jnp.array([roll, pitch, yaw])), expected, atol=1e-15)


@pytest.mark.parametrize("fn", [spatial.quat_exp, spatial.so3_exp, lambda w: spatial.quat_log(spatial.quat_exp(w))])
def test_gradients_finite_at_identity(fn):
    jac = jax.jacobian(lambda w: fn(w).ravel())(jnp.zeros(3))
    assert np.all(np.isfinite(jac))
    jac_small = jax.jacobian(lambda w: fn(w).ravel())(jnp.full(3, 1e-9))
    assert np.allclose(jac, jac_small, atol=1e-8)


def test_log_jacobian_is_identity_at_zero():
    jac = jax.jacobian(lambda w: spatial.quat_log(spatial.quat_exp(w)))(jnp.zeros(3))
    assert np.allclose(jac, np.eye(3), atol=1e-12)


def test_motion_and_force_transforms_are_dual():
    rng = np.random.default_rng(0)
    rot, pos = spatial.so3_exp(rng.normal(size=3)), rng.normal(size=3)
    motion, force = rng.normal(size=6), rng.normal(size=6)
    child = spatial.motion_to_child(rot, pos, motion)
    assert np.allclose(spatial.motion_transform(rot, pos) @ motion, child, atol=1e-12)
    assert np.allclose(spatial.motion_to_parent(rot, pos, child), motion, atol=1e-12)
    # power is frame independent: <f_A, m_A> = <f_B, m_B>
    assert np.isclose(spatial.force_to_parent(rot, pos, force) @ motion, force @ child, atol=1e-12)


def test_combine_inertia_parallel_axis():
    m, c, i = spatial.combine_inertia(1.0, jnp.array([1.0, 0, 0]), jnp.zeros((3, 3)), 1.0, jnp.array([-1.0, 0, 0]), jnp.zeros((3, 3)))
    assert m == 2.0 and np.allclose(c, 0) and np.allclose(i, np.diag([0.0, 2.0, 2.0]))


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(-3.0, 3.0), min_size=3, max_size=3), st.lists(st.floats(-3.0, 3.0), min_size=3, max_size=3))
def test_quaternion_product_is_rotation_composition(a, b):
    qa, qb = spatial.quat_exp(jnp.array(a)), spatial.quat_exp(jnp.array(b))
    composed = spatial.quat_to_rotation(spatial.quat_multiply(qa, qb))
    assert np.allclose(composed, spatial.quat_to_rotation(qa) @ spatial.quat_to_rotation(qb), atol=1e-12)
    assert np.allclose(spatial.rotation_to_quat(composed) @ spatial.rotation_to_quat(composed), 1.0, atol=1e-12)


def test_safe_norm_value_and_finite_gradient_at_zero():
    from diffspace.core.spatial import safe_norm

    v = jnp.array([[3.0, 4.0, 0.0], [0.0, 0.0, 0.0]])
    assert jnp.allclose(safe_norm(v), jnp.array([5.0, 0.0]), atol=1e-15)
    g = jax.grad(lambda x: safe_norm(x))(jnp.zeros(3))
    assert jnp.all(jnp.isfinite(g)) and jnp.allclose(g, 0.0)
    assert jnp.allclose(jax.grad(safe_norm)(jnp.array([3.0, 4.0, 0.0])), jnp.array([0.6, 0.8, 0.0]), atol=1e-15)


def test_safe_norm_keeps_nan_and_has_a_finite_gradient_at_zero():
    """An undefined vector (NaN) has an undefined norm, never 0: the ejection's tumbling rate of an arm that never
    settled was reported as 0 deg/s to optimisers and sweeps."""
    from diffspace.core.spatial import safe_norm

    assert np.isnan(float(safe_norm(jnp.full(3, jnp.nan))))
    assert float(safe_norm(jnp.array([3.0, 4.0, 0.0]))) == 5.0
    np.testing.assert_array_equal(jax.grad(safe_norm)(jnp.zeros(3)), np.zeros(3))


def test_solve3_matches_lapack_single_and_batched():
    """Cramer's rule against numpy's LU solve, for one system and a (4, 5) batch of random systems."""
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(4, 5, 3, 3)), rng.normal(size=(4, 5, 3))
    expected = np.linalg.solve(a, b[..., None])[..., 0]
    np.testing.assert_allclose(spatial.solve3(jnp.asarray(a), jnp.asarray(b)), expected, rtol=0, atol=1e-11)
    np.testing.assert_allclose(spatial.solve3(jnp.asarray(a[1, 2]), jnp.asarray(b[1, 2])), expected[1, 2], rtol=0, atol=1e-12)
