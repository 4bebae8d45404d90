"""The rope's closed-form banded stiffness (diffspace.bodies.rope_stiffness), the block-pentadiagonal solve
(diffspace.core.banded) and the Newton statics built on them (diffspace.bodies.rope)."""

import jax
import jax.numpy as jnp
import numpy as np
import optimistix as optx
import pytest

from diffspace.bodies.rope import Rope, equilibrium, pressed_equilibrium, static_residual
from diffspace.bodies.rope_elements import section_energy, triple_energy
from diffspace.bodies.rope_stiffness import section_hessian, stiffness_bands, triple_hessian
from diffspace.core.banded import Bands


def _dense(bands: Bands) -> np.ndarray:
    """``(3n, 3n)`` matrix of ``bands``, column by column from the product with unit vectors (exact)."""
    n = bands.diag.shape[0]
    return np.asarray(jax.vmap(bands.matvec)(jnp.eye(3 * n).reshape(-1, n, 3))).reshape(3 * n, 3 * n).T


def test_element_hessians_match_autodiff():
    """Hand-derived Hessians of the section energy (Eq. (26), tension and compression) and of a bend triple's
    energy (Eq. (39), random 3D triples and rest bends, a straight and a nearly straight one on the series branch
    of ``beta / sin beta``) equal ``jax.hessian`` to 1e-12 of their largest entry."""
    rng = np.random.default_rng(11)
    m = 24
    a = rng.standard_normal((m, 3)) * 0.02
    b = a + rng.standard_normal((m, 3)) * 0.02
    c = b + rng.standard_normal((m, 3)) * 0.02
    c[0] = b[0] + 1.3 * (b[0] - a[0])  # straight: q = 0
    c[1] = b[1] + 0.7 * (b[1] - a[1]) + 1e-9 * np.cross(b[1] - a[1], [0.0, 0.0, 1.0])  # q ~ 1e-14 < 1e-12
    points = jnp.asarray(np.stack([a, b, c], 1))
    rest_bend = jnp.asarray(0.3 * rng.standard_normal((m, 3)))
    reference = jax.vmap(jax.hessian(triple_energy), (0, 0, None))(points, rest_bend, 1.7)  # (M, 3, 3, 3, 3)
    blocks = triple_hessian(points[:, 0], points[:, 1], points[:, 2], rest_bend, 1.7)
    for block, (i, j) in zip(blocks, [(0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)]):
        ref = reference[:, i, :, j, :]
        error = np.max(np.abs(block - ref), axis=(1, 2)) / np.max(np.abs(ref), axis=(1, 2))
        assert np.max(error) < 1e-12, (i, j, error)

    rest = jnp.asarray(0.01 * (1.0 + 0.2 * rng.standard_normal(m)))  # about half the sections compressed
    k = jnp.asarray(5e6 * (1.0 + rng.random(m)))
    pairs = points[:, :2]
    reference = jax.vmap(jax.hessian(section_energy), (0, 0, 0, None))(pairs, rest, k, 0.3)[:, 1, :, 1, :]
    np.testing.assert_allclose(section_hessian(pairs[:, 1] - pairs[:, 0], rest, k, 0.3), reference, rtol=1e-13,
                               atol=1e-13 * float(jnp.max(jnp.abs(reference))))


@pytest.mark.parametrize("end_condition", ["pinned", "clamped"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_banded_stiffness_matches_autodiff_of_the_rope_energy(end_condition, seed):
    """``stiffness_bands`` on random 3D rope shapes (random rest bends, tension and compression, clamps with
    random fittings) equals ``jax.hessian`` of ``Rope.elastic_energy`` (1e-12 of the largest entry)."""
    rng = np.random.default_rng(seed)
    n = 5 + seed
    rope = Rope.uniform(0.3, n, 0.0365, 2e3, 0.5, rest_bend_total=rng.uniform(-1.0, 1.0), compression_ratio=0.4,
                        plane_normal=rng.standard_normal(3), end_condition=end_condition)
    x = jnp.asarray(np.cumsum(0.3 / n * (np.array([1.0, 0.0, 0.0]) + 0.4 * rng.standard_normal((n + 1, 3))), 0))
    attach = jnp.asarray(rng.standard_normal((2, 3)))
    attach = attach / jnp.linalg.norm(attach, axis=1, keepdims=True) if end_condition == "clamped" else None
    reference = jax.hessian(rope.elastic_energy)(x, attach).reshape(3 * (n + 1), 3 * (n + 1))
    np.testing.assert_allclose(_dense(stiffness_bands(rope, x, attach)), reference, rtol=0,
                               atol=1e-12 * float(jnp.max(jnp.abs(reference))))


@pytest.mark.parametrize("n", [1, 2, 5, 6, 29])
def test_banded_solve_matches_dense_solve(n):
    """``Bands.solve`` (nodes paired into a block-tridiagonal elimination, odd ``n`` padded) against a dense
    solve, for a positive definite and an indefinite matrix, one and three right-hand sides (1e-12)."""
    rng = np.random.default_rng(n)
    blocks = [rng.standard_normal((max(n - k, 0), 3, 3)) for k in range(3)]
    diag = blocks[0] + np.swapaxes(blocks[0], 1, 2) + 12.0 * np.eye(3)
    for shift in (0.0, -12.5):  # diagonally dominant, then with negative eigenvalues
        bands = Bands(jnp.asarray(diag + shift * np.eye(3)), jnp.asarray(blocks[1]), jnp.asarray(blocks[2]))
        dense = _dense(bands)
        np.testing.assert_allclose(dense, dense.T, atol=0)
        assert shift == 0.0 or np.min(np.linalg.eigvalsh(dense)) < 0.0
        for rhs in (rng.standard_normal((n, 3)), rng.standard_normal((n, 3, 3))):
            expected = np.linalg.solve(dense, rhs.reshape(3 * n, -1)).reshape(rhs.shape)
            np.testing.assert_allclose(bands.solve(jnp.asarray(rhs)), expected, rtol=0,
                                       atol=1e-12 * np.max(np.abs(expected)))


def _bowed_rope(end_condition):
    rope = Rope.uniform(0.3, 9, 0.0365, 2e3, 0.5, rest_bend_total=-0.4, end_condition=end_condition)
    first, last = jnp.array([-0.13, 0.0, 0.0]), jnp.array([0.13, 0.0, 0.0])
    s = np.linspace(-1.0, 1.0, 10)
    guess = jnp.stack([0.13 * s, 0.07 * (1 - s**2), 0 * s], 1)[1:-1]
    attach = jnp.array([[np.cos(0.6), np.sin(0.6), 0.0], [np.cos(0.35), -np.sin(0.35), 0.0]])
    return rope, guess, first, last, attach if end_condition == "clamped" else None


@pytest.mark.parametrize("end_condition", ["pinned", "clamped"])
def test_banded_newton_matches_optimistix_and_its_derivatives_finite_differences(end_condition):
    """The banded Newton equilibrium equals ``optimistix.Newton`` with the dense Jacobian (1e-14 m), and the
    implicit derivatives of the equilibrium and of a pressing force (forward and reverse mode) in the bending
    stiffness and the pressing depth match central differences (1e-6)."""
    rope, guess, first, last, attach = _bowed_rope(end_condition)
    x, ok = jax.jit(equilibrium)(rope, guess, first, last, attach=attach)
    fn = lambda y, _: static_residual(rope, y, first, last, attach=attach) / jnp.mean(rope.axial_stiffness)  # noqa: E731
    reference = optx.root_find(fn, optx.Newton(rtol=1e-12, atol=1e-14), guess, max_steps=64)
    assert bool(ok)
    np.testing.assert_allclose(x, reference.value, rtol=0, atol=1e-14)

    def pressed(k_tor, depth):
        r = Rope.uniform(0.3, 9, 0.0365, 2e3, k_tor, rest_bend_total=-0.4, end_condition=end_condition)
        xe, _ = equilibrium(r, guess, first, last, attach=attach)
        _, force, _ = pressed_equilibrium(r, xe, first, last, 5, jnp.array([0.0, -1.0, 0.0]), depth, attach=attach)
        return jnp.stack([force, xe[2, 1]])

    args, h = (0.5, 0.004), 1e-6
    forward = jax.jit(jax.jacfwd(pressed, argnums=(0, 1)))(*args)
    reverse = jax.jit(jax.jacrev(pressed, argnums=(0, 1)))(*args)
    value = jax.jit(pressed)
    for i in range(2):
        step = [0.0, 0.0]
        step[i] = h
        fd = (value(*(a + s for a, s in zip(args, step))) - value(*(a - s for a, s in zip(args, step)))) / (2 * h)
        np.testing.assert_allclose(forward[i], fd, rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(reverse[i], forward[i], rtol=1e-12, atol=1e-15)
