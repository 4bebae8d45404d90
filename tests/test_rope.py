"""Lumped-mass wire rope (diffspace.bodies.rope): masses, series springs, energy, bend angles, contact."""

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from diffspace.contact import ContactLaw
from diffspace.bodies.rope import (
    Rope,
    Shaft,
    assemble,
    bend_vectors,
    clamp_bend_vectors,
    equilibrium,
    node_masses,
    rope_accelerations,
    total_energy,
)


def test_node_masses_follow_eqs_17_and_18():
    """Eq. (18): equal sections give m_tot/(2N) at the ends and m_tot/N inside; Eq. (17) in general."""
    m = np.asarray(node_masses(0.0365, jnp.full(30, 0.01)))
    m_tot = 0.0365 * 0.30
    assert m.shape == (31,)
    np.testing.assert_allclose(m[[0, -1]], m_tot / 60, rtol=1e-14)
    np.testing.assert_allclose(m[1:-1], m_tot / 30, rtol=1e-14)
    lengths = np.array([0.01, 0.03, 0.02])
    np.testing.assert_allclose(node_masses(2.0, lengths), [0.01, 0.04, 0.05, 0.02], rtol=1e-14)
    assert m.sum() == pytest.approx(m_tot, rel=1e-14)


def test_straight_rope_under_end_load_matches_series_springs():
    """Tension-only sections with different rest lengths and stiffnesses, no bending, pulled to length D:
    every section carries F = (D - L) / sum(1/k_i), stretches F/k_i, and the end reaction equals F (1e-9)."""
    rng = np.random.default_rng(3)
    n = 6
    rest = rng.uniform(0.02, 0.05, n)
    k = rng.uniform(2e3, 9e3, n)
    length = rest.sum()
    rope = Rope(jnp.asarray(rest), node_masses(0.03, rest), jnp.asarray(k), jnp.zeros(()), jnp.zeros(()),
                jnp.zeros(()), jnp.zeros(()), jnp.zeros((n - 1, 3)), jnp.asarray(0.0015))
    stretch_total = 0.004
    first, last = jnp.zeros(3), jnp.array([length + stretch_total, 0.0, 0.0])
    along = np.cumsum(rest)[:-1] * (1.0 + stretch_total / length)  # every section stretched (taut guess)
    guess = jnp.stack([along, 1e-4 * rng.standard_normal(n - 1), 1e-4 * rng.standard_normal(n - 1)], axis=1)
    xi, ok = jax.jit(equilibrium)(rope, guess, first, last)
    assert bool(ok)
    x = assemble(xi, first, last)
    force = stretch_total / np.sum(1.0 / k)
    tension = np.asarray(rope.tensions(x, jnp.zeros_like(x)))
    sections = np.linalg.norm(np.diff(np.asarray(x), axis=0), axis=1)
    np.testing.assert_allclose(tension, force, rtol=1e-9)
    np.testing.assert_allclose(sections - rest, force / k, rtol=1e-9)
    reaction = -jax.grad(rope.elastic_energy)(x)[-1]  # force of the rope on the loaded end
    np.testing.assert_allclose(reaction, [-force, 0.0, 0.0], rtol=1e-9, atol=1e-9 * force)
    np.testing.assert_allclose(np.asarray(x)[:, 1:], 0.0, atol=1e-12)


def test_tension_only_chain_has_zero_energy_collapse_mode():
    """The physics trap behind ``compression_ratio``: with ends closer than the rope length, the rest shape
    shrunk to the end distance costs no energy with tension-only sections, but does with compression."""
    n, length = 10, 0.30
    soft = Rope.uniform(length, n, 0.0365, 5e5, 2.0, rest_bend_total=-np.deg2rad(26.0), compression_ratio=0.0)
    stiff = Rope.uniform(length, n, 0.0365, 5e5, 2.0, rest_bend_total=-np.deg2rad(26.0), compression_ratio=1.0)
    theta = np.deg2rad(13.0) - np.arange(n) * np.deg2rad(26.0) / (n - 1)  # tangent angles of the rest shape
    x = np.concatenate([[[0.0, 0.0, 0.0]], np.cumsum(0.03 * np.stack([np.cos(theta), np.sin(theta), 0 * theta], 1), 0)])
    shrunk = jnp.asarray(x * 0.26 / np.linalg.norm(x[-1]))
    assert float(soft.elastic_energy(shrunk)) == pytest.approx(0.0, abs=1e-14)
    assert float(stiff.elastic_energy(shrunk)) > 1.0  # J: compressing 4 cm of steel rope


def test_bend_vectors_are_signed_planar_angles_and_smooth_when_straight():
    """In the plane, phi_i = beta_i z with the signed turning angle; the bending energy has finite
    gradients and Hessians at a straight rope (Taylor branch of beta / sin beta)."""
    turns = np.array([0.3, -0.2, 0.5, 0.0])
    theta = np.concatenate([[0.1], 0.1 + np.cumsum(turns)])
    seg = np.stack([np.cos(theta), np.sin(theta), 0 * theta], 1) * np.array([[0.02], [0.03], [0.01], [0.02], [0.04]])
    x = jnp.asarray(np.concatenate([[[0.0, 0.0, 0.0]], np.cumsum(seg, 0)]))
    np.testing.assert_allclose(bend_vectors(x), np.stack([0 * turns, 0 * turns, turns], 1), atol=1e-14)
    rope = Rope.uniform(0.1, 5, 0.03, 1e3, 1.5)
    straight = jnp.stack([jnp.linspace(0, 0.1, 6), jnp.zeros(6), jnp.zeros(6)], 1)
    grad = jax.jit(jax.grad(rope.bending_energy))
    g = grad(straight)
    h = jax.jit(jax.hessian(rope.bending_energy))(straight)
    assert np.all(np.isfinite(g)) and np.all(np.isfinite(h))
    # second derivative against finite differences of the gradient (lateral push of node 2)
    e = jnp.zeros_like(straight).at[2, 1].set(1.0)
    fd = (grad(straight + 1e-6 * e) - grad(straight - 1e-6 * e)) / 2e-6
    np.testing.assert_allclose(h[:, :, 2, 1], fd, rtol=1e-5, atol=1e-3)
    assert float(h[2, 1, 2, 1]) == pytest.approx(1.5 * (1 + 4 + 1) / 0.02**2, rel=1e-9)


@pytest.mark.parametrize("end_condition, clamp_ratio", [("pinned", 1.0), ("clamped", 1.0), ("clamped", 0.4)])
def test_element_gradient_and_hessian_match_autodiff_of_the_whole_energy(end_condition, clamp_ratio):
    """The element gradient (per-section and per-bend-triple derivatives scattered onto their nodes, clamps as
    triples with offset points) and the closed-form banded stiffness against autodiff of the whole-rope energy
    written with the global ``bend_vectors``/``clamp_bend_vectors`` (1e-12 relative), on a random 3D shape; and
    the custom JVP of ``stiff_gradient`` (stiffness times the node tangent, autodiff in the parameters and
    fittings) against plain forward mode through ``elastic_gradient``."""
    from diffspace.bodies.rope_elements import elastic_gradient
    from diffspace.bodies.rope_stiffness import stiff_gradient, stiffness_bands

    rope = eqx.tree_at(lambda r: r.clamp_ratio, Rope.uniform(0.3, 7, 0.0365, 2e3, 0.5, rest_bend_total=-0.4,
                                                              compression_ratio=0.3, end_condition=end_condition),
                       jnp.asarray(clamp_ratio))
    rng = np.random.default_rng(7)
    x = jnp.asarray(np.stack([np.linspace(0.0, 0.26, 8), 0.05 * rng.standard_normal(8), 0.02 * rng.standard_normal(8)], 1))
    attach = _ATTACH if end_condition == "clamped" else None

    def energy(y, fittings):  # the rope's energy from the global bend-vector functions
        stretch = jnp.linalg.norm(y[1:] - y[:-1], axis=1) - rope.rest_lengths
        gain = jnp.where(stretch > 0.0, 1.0, rope.compression_ratio)
        axial = 0.5 * jnp.sum(rope.axial_stiffness * gain * stretch**2)
        bends = 0.5 * rope.bending_stiffness * jnp.sum((bend_vectors(y) - rope.rest_bend) ** 2)
        clamps = 0.0 if fittings is None else 0.5 * clamp_ratio * rope.bending_stiffness * jnp.sum(
            clamp_bend_vectors(y, fittings) ** 2)
        return axial + bends + clamps

    assert float(rope.elastic_energy(x, attach)) == pytest.approx(float(energy(x, attach)), rel=1e-13)
    g_ref, h_ref = jax.grad(energy)(x, attach), jax.hessian(energy)(x, attach)
    np.testing.assert_allclose(elastic_gradient(rope, x, attach), g_ref, rtol=1e-12, atol=1e-12 * float(jnp.max(jnp.abs(g_ref))))
    bands = stiffness_bands(rope, x, attach)
    hessian = jax.vmap(bands.matvec)(jnp.eye(x.size).reshape(-1, *x.shape)).reshape(x.shape + x.shape)  # K e_j
    np.testing.assert_allclose(hessian, h_ref, rtol=1e-12, atol=1e-12 * float(jnp.max(jnp.abs(h_ref))))

    def gradient_of(fn, k_tor, y, fittings):
        return fn(eqx.tree_at(lambda r: r.bending_stiffness, rope, k_tor), y, fittings)

    dx = jnp.asarray(rng.standard_normal(x.shape))
    primals, tangents = (rope.bending_stiffness, x, attach), (jnp.asarray(0.3), dx, None if attach is None else 0.1 * attach)
    custom = jax.jvp(lambda *a: gradient_of(stiff_gradient, *a), primals, tangents)[1]
    plain = jax.jvp(lambda *a: gradient_of(elastic_gradient, *a), primals, tangents)[1]
    np.testing.assert_allclose(custom, plain, rtol=1e-10, atol=1e-10 * float(jnp.max(jnp.abs(plain))))
    only_x = jax.jvp(lambda y: stiff_gradient(rope, y, attach), (x,), (dx,))[1]
    np.testing.assert_allclose(only_x, jnp.einsum("iajb,jb->ia", h_ref, dx), rtol=1e-10, atol=1e-10 * float(jnp.max(jnp.abs(only_x))))


@pytest.mark.parametrize("end_condition, clamp_ratio", [("pinned", 1.0), ("clamped", 1.0), ("clamped", 0.4)])
def test_closed_form_forces_match_autodiff(end_condition, clamp_ratio):
    """:meth:`Rope.forces` (closed-form tensions and bend transposes) against autodiff: the elastic forces against
    ``-grad`` of the whole-rope energy written with the global bend-vector functions, the damping forces against
    the axial dashpots plus ``-c_tor (dphi/dx)^T dphi/dt`` by ``jax.jvp``/``jax.vjp`` of the bend vectors (fittings
    turning), 1e-12 relative on a random 3D state; over a batch of two ropes; and ``bend_linearisation`` on a
    straight triple (the series branch) against autodiff of ``bend_vector``."""
    from diffspace.bodies.rope_elements import bend_linearisation, bend_vector

    rope = eqx.tree_at(lambda r: r.clamp_ratio, Rope.uniform(
        0.3, 7, 0.0365, 2e3, 0.5, rest_bend_total=-0.4, compression_ratio=0.3, axial_damping=0.2, bending_damping=0.01,
        end_condition=end_condition), jnp.asarray(clamp_ratio))
    rng = np.random.default_rng(3)
    x = jnp.asarray(np.stack([np.linspace(0.0, 0.26, 8), 0.05 * rng.standard_normal(8), 0.02 * rng.standard_normal(8)], 1))
    v = jnp.asarray(rng.standard_normal(x.shape))
    clamped = end_condition == "clamped"
    attach, rate = (_ATTACH, jnp.asarray(rng.standard_normal((2, 3)))) if clamped else (None, None)

    def bends(y, fittings):  # scaled by sqrt(clamp_ratio) at the clamps: their springs and dashpots carry the ratio
        phi = bend_vectors(y)
        return jnp.concatenate([phi, clamp_ratio**0.5 * clamp_bend_vectors(y, fittings)]) if clamped else phi

    def energy(y):
        stretch = jnp.linalg.norm(y[1:] - y[:-1], axis=1) - rope.rest_lengths
        gain = jnp.where(stretch > 0.0, 1.0, rope.compression_ratio)
        return 0.5 * jnp.sum(rope.axial_stiffness * gain * stretch**2) + 0.5 * rope.bending_stiffness * jnp.sum(
            (bends(y, attach) - rope.rest_bends()) ** 2)

    d = x[1:] - x[:-1]
    length = jnp.linalg.norm(d, axis=1)
    u = d / length[:, None]
    gain = jnp.where(length > rope.rest_lengths, 1.0, rope.compression_ratio)
    t = (gain * rope.axial_damping * jnp.sum(u * (v[1:] - v[:-1]), axis=1))[:, None] * u
    _, phi_dot = jax.jvp(bends, (x, attach), (v, rate))
    _, pullback = jax.vjp(lambda y: bends(y, attach), x)
    ref_damping = jnp.pad(t, ((0, 1), (0, 0))) - jnp.pad(t, ((1, 0), (0, 0))) - rope.bending_damping * pullback(phi_dot)[0]
    ref_elastic = -jax.grad(energy)(x)
    elastic, damping = rope.forces(x, v, attach, rate)
    for got, ref in ((elastic, ref_elastic), (damping, ref_damping)):
        np.testing.assert_allclose(got, ref, rtol=0.0, atol=1e-12 * float(jnp.max(jnp.abs(ref))))
    stack = lambda a: None if a is None else jnp.stack([a, 2.0 * a])  # noqa: E731
    batch = rope.forces(stack(x), stack(v), stack(attach), stack(rate))
    second = rope.forces(2.0 * x, 2.0 * v, None if attach is None else 2.0 * attach, stack(rate)[1] if clamped else None)
    for got, ref in zip(batch, second):
        np.testing.assert_allclose(got[1], ref, rtol=0.0, atol=1e-12 * float(jnp.max(jnp.abs(ref))))

    a, b, c = jnp.zeros(3), jnp.array([0.01, 0.0, 0.0]), jnp.array([0.02, 1e-9, 0.0])  # bend 1e-7 rad: the series
    va, vb, vc, mu = (jnp.asarray(rng.standard_normal(3)) for _ in range(4))
    phi, phi_dot, transpose = bend_linearisation(a, b, c, va, vb, vc)
    ref_phi, ref_dot = jax.jvp(bend_vector, (a, b, c), (va, vb, vc))
    _, pullback = jax.vjp(bend_vector, a, b, c)
    np.testing.assert_allclose(phi, ref_phi, rtol=1e-14, atol=0.0)
    np.testing.assert_allclose(phi_dot, ref_dot, rtol=1e-12, atol=1e-12 * float(jnp.max(jnp.abs(ref_dot))))
    for got, ref in zip(transpose(mu), pullback(mu)):
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12 * float(jnp.max(jnp.abs(ref))))


def test_a_clamped_rope_whose_fittings_hold_nothing_is_the_pinned_rope():
    """``clamp_ratio = 0``: energy, forces (elastic and damping, fittings turning), the banded stiffness and the
    static equilibrium of the clamped rope equal the pinned rope's (the installation solve of the snare)."""
    from diffspace.bodies.rope_stiffness import stiffness_bands

    make = lambda end: Rope.uniform(0.3, 7, 0.0365, 2e3, 0.5, rest_bend_total=-0.4, axial_damping=0.2,  # noqa: E731
                                    bending_damping=0.01, end_condition=end)
    pinned, loose = make("pinned"), eqx.tree_at(lambda r: r.clamp_ratio, make("clamped"), jnp.zeros(()))
    rng = np.random.default_rng(11)
    x = jnp.asarray(np.stack([np.linspace(0.0, 0.26, 8), 0.05 * rng.standard_normal(8), 0.02 * rng.standard_normal(8)], 1))
    v, rate = jnp.asarray(rng.standard_normal(x.shape)), jnp.asarray(rng.standard_normal((2, 3)))
    assert float(loose.elastic_energy(x, _ATTACH)) == pytest.approx(float(pinned.elastic_energy(x)), rel=1e-14)
    for got, ref in zip(loose.forces(x, v, _ATTACH, rate), pinned.forces(x, v)):
        np.testing.assert_allclose(got, ref, rtol=0.0, atol=1e-13 * float(jnp.max(jnp.abs(ref))))
    np.testing.assert_array_equal(loose.end_moments(x, _ATTACH), 0.0)
    for got, ref in zip(jax.tree.leaves(stiffness_bands(loose, x, _ATTACH)), jax.tree.leaves(stiffness_bands(pinned, x))):
        np.testing.assert_allclose(got, ref, rtol=0.0, atol=1e-12 * float(jnp.max(jnp.abs(ref))))
    first, last = jnp.array([-0.13, 0.0, 0.0]), jnp.array([0.13, 0.0, 0.0])
    s = np.linspace(-1.0, 1.0, 8)
    guess = jnp.stack([0.13 * s, 0.07 * (1 - s**2), 0 * s], 1)[1:-1]
    solve = jax.jit(equilibrium)
    (x_loose, ok_loose), (x_pinned, ok_pinned) = solve(loose, guess, first, last, attach=_ATTACH), solve(pinned, guess, first, last)
    assert bool(ok_loose) and bool(ok_pinned)
    np.testing.assert_allclose(x_loose, x_pinned, rtol=0.0, atol=1e-13)


@jax.jit
def _excess_energy(rope, xi, v0, first, last, attach=None):
    """Vibration energy above the prestressed equilibrium ``xi`` along a free motion (ends fixed)."""
    zero = jnp.zeros(3)

    def field(t, y, args):
        return y[1], rope_accelerations(rope, assemble(y[0], first, last), assemble(y[1], zero, zero), attach=attach)

    sol = diffrax.diffeqsolve(diffrax.ODETerm(field), diffrax.Tsit5(), 0.0, 0.02, None, (xi, v0),
                              saveat=diffrax.SaveAt(ts=jnp.linspace(0.0, 0.02, 81)),
                              stepsize_controller=diffrax.PIDController(rtol=1e-10, atol=1e-12), max_steps=100_000)
    energy = jax.vmap(lambda a, b: total_energy(rope, assemble(a, first, last), assemble(b, zero, zero), attach))(
        *sol.ys)
    return energy - rope.elastic_energy(assemble(xi, first, last), attach)


# fittings of the clamped test rope: 35 deg above the chord at A, 20 deg below it at B (stressed clamps)
_ATTACH = jnp.array([[np.cos(0.6), np.sin(0.6), 0.0], [np.cos(0.35), -np.sin(0.35), 0.0]])


def _small_rope(n=6, damping_ratio=0.0, end_condition="pinned"):
    """A 0.3 m rope of ``n`` sections between (-0.13, 0) and (0.13, 0), bowed towards +y, in equilibrium."""
    m, k = 0.0365 * 0.3 / n, 2e3 * n / 0.3
    rope = Rope.uniform(0.3, n, 0.0365, 2e3, 0.5, rest_bend_total=-0.4, compression_ratio=1.0,
                        axial_damping=2 * damping_ratio * np.sqrt(k * m),
                        bending_damping=2 * damping_ratio * np.sqrt(0.5 * m * (0.3 / n) ** 2),
                        end_condition=end_condition)
    first, last = jnp.array([-0.13, 0.0, 0.0]), jnp.array([0.13, 0.0, 0.0])
    attach = _ATTACH if end_condition == "clamped" else None
    s = np.linspace(-1.0, 1.0, n + 1)
    guess = jnp.stack([0.13 * s, 0.07 * (1 - s**2), 0 * s], 1)
    xi, ok = jax.jit(equilibrium)(rope, guess[1:-1], first, last, attach=attach)
    assert bool(ok)
    return rope, xi, first, last, attach


def _free_vibration(damping_ratio: float, end_condition: str = "pinned"):
    n = 6
    rope, xi, first, last, attach = _small_rope(n, damping_ratio, end_condition)
    alternating = (-1.0) ** np.arange(n - 1)  # excites the short modes the node-scale dashpots act on
    v0 = jnp.stack([0.05 * alternating, 0.3 * alternating, 0.1 * np.ones(n - 1)], 1)
    return np.asarray(_excess_energy(rope, xi, v0, first, last, attach))


@pytest.mark.parametrize("end_condition", ["pinned", pytest.param("clamped", marks=pytest.mark.slow)])
def test_energy_balance_without_and_with_damping(end_condition):
    """Kinetic + axial + bending (+ clamp) energy is constant without damping (to solver tolerance: 1e-6 of
    the vibration energy above the prestressed equilibrium) and decreases monotonically with the dashpots."""
    e = _free_vibration(0.0, end_condition)
    assert np.max(np.abs(e / e[0] - 1.0)) < 1e-6
    e_d = _free_vibration(0.3, end_condition)
    assert np.all(np.diff(e_d) <= 1e-9 * e_d[0])
    assert e_d[-1] < 0.5 * e_d[0]


def test_clamped_rope_equilibrium_and_end_moments():
    """Clamped ends with fittings off the pinned tangents: the Newton equilibrium has residual ~0 (1e-9 of
    the section forces); the moment on each fitting, -dV/d(fitting rotation) by autodiff, equals k_tor times
    the end bend angle measured geometrically (1e-9); and the whole rope is in moment balance only with these
    clamp moments: x_A x F_A + x_B x F_B + M_A + M_B = 0 (pinned would leave the clamp moments out)."""
    rope, xi, first, last, attach = _small_rope(8, 0.0, "clamped")
    x = assemble(xi, first, last)
    scale = float(jnp.max(jnp.abs(rope.tensions(x, jnp.zeros_like(x)))))
    grad = jax.grad(rope.elastic_energy)(x, attach)
    assert float(jnp.max(jnp.abs(grad[1:-1]))) < 1e-9 * scale

    def turned(theta):  # both fittings rotated about +z by theta[0], theta[1]
        c, s = jnp.cos(theta), jnp.sin(theta)
        return jnp.stack([c * attach[:, 0] - s * attach[:, 1], s * attach[:, 0] + c * attach[:, 1], attach[:, 2]], 1)

    m_autodiff = -jax.grad(lambda th: rope.elastic_energy(x, turned(th)))(jnp.zeros(2))
    xn = np.asarray(x)
    heading = lambda v: np.arctan2(v[1], v[0])  # noqa: E731
    beta_a = heading(xn[1] - xn[0]) - heading(np.asarray(attach[0]))  # fitting -> first section
    beta_b = heading(np.asarray(attach[1])) - heading(xn[-1] - xn[-2])  # last section -> fitting
    expected = 0.5 * np.array([beta_a, -beta_b])  # k_tor = 0.5; sign: moment on the fitting
    moments = np.asarray(rope.end_moments(x, attach))
    assert min(abs(beta_a), abs(beta_b)) > 0.05  # the clamps are loaded
    np.testing.assert_allclose(moments[:, 2], expected, rtol=1e-9)
    np.testing.assert_allclose(np.asarray(m_autodiff), expected, rtol=1e-9)
    np.testing.assert_allclose(moments[:, :2], 0.0, atol=1e-15)
    np.testing.assert_allclose(np.asarray(clamp_bend_vectors(x, attach))[:, 2], [beta_a, beta_b], rtol=1e-9)
    f_a, f_b = -np.asarray(grad[0]), -np.asarray(grad[-1])  # forces of the rope on the fittings
    balance = np.cross(xn[0], f_a) + np.cross(xn[-1], f_b) + moments.sum(0)
    assert np.max(np.abs(balance)) < 1e-9 * scale * 0.13
    assert abs(float(np.cross(xn[0], f_a)[2] + np.cross(xn[-1], f_b)[2])) > 1e3 * 1e-9 * scale * 0.13


def test_clamp_damping_follows_turning_fittings():
    """The bending dashpots act on bend rates relative to the fittings: a rigid rotation of rope and fittings
    together (nodes at omega x x, fittings at omega x t) is not damped; the same motion against fixed fittings
    is (the clamps' dashpots resist it)."""
    rope, xi, first, last, attach = _small_rope(6, 0.3, "clamped")
    x = assemble(xi, first, last)
    omega = jnp.array([0.0, 0.0, 2.0])
    v, rate = jnp.cross(omega, x), jnp.cross(omega, attach)
    axial_only = eqx.tree_at(lambda r: r.bending_damping, rope, jnp.zeros(()))
    f_fixed = rope.damping_forces(x, v, attach) - axial_only.damping_forces(x, v, attach)
    f_turning = rope.damping_forces(x, v, attach, rate)
    assert float(jnp.max(jnp.abs(f_fixed))) > 1e-4
    assert float(jnp.max(jnp.abs(f_turning))) < 1e-12 * float(jnp.max(jnp.abs(f_fixed)))


def test_clamped_rope_needs_fittings_and_pinned_ignores_them():
    """A clamped rope without fitting axes is an error; a pinned rope's energy does not depend on them."""
    rope, xi, first, last, _ = _small_rope(4)
    x = assemble(xi, first, last)
    assert float(rope.elastic_energy(x, _ATTACH)) == float(rope.elastic_energy(x))
    clamped = Rope.uniform(0.3, 4, 0.0365, 2e3, 0.5, end_condition="clamped")
    with pytest.raises(ValueError, match="attach"):
        clamped.elastic_energy(x)
    with pytest.raises(ValueError, match="end_condition"):
        Rope.uniform(0.3, 4, 0.0365, 2e3, 0.5, end_condition="welded")


def test_shaft_contact_geometry_and_action_reaction():
    """Indentation r_s + r_rope - distance to the axis, normal from the axis to the node, and the shaft
    feels minus the sum of the node forces (only touching nodes are loaded)."""
    rope = Rope.uniform(0.04, 4, 0.03, 1e3, 1.0, radius=0.0015)
    shaft = Shaft(0.01, axis=(0.0, 0.0, 2.0))
    x = jnp.array([[0.0115, 0.0, 0.3], [0.0, 0.0110, -0.2], [-0.008, -0.006, 0.0], [0.03, 0.0, 0.0], [0.0, 0.05, 0.0]])
    delta, normal = eqx.filter_jit(Shaft.indentation)(shaft, rope, x, jnp.zeros(3))
    np.testing.assert_allclose(delta, [0.0, 0.0005, 0.0015, -0.0185, -0.0385], atol=1e-15)
    np.testing.assert_allclose(normal[2], [-0.8, -0.6, 0.0], atol=1e-15)
    law = ContactLaw(1e7, 1.5, 0.55, law="hunt_crossley")
    forces, mags = eqx.filter_jit(Shaft.forces)(shaft, law, rope, x, jnp.zeros_like(x), jnp.zeros(3), jnp.array([0.0, 0.01, 0.0]), 0.01)
    np.testing.assert_allclose(np.asarray(mags)[[0, 3, 4]], 0.0, atol=0.0)
    assert float(mags[2]) > float(mags[1]) > 0.0
    np.testing.assert_allclose(forces[2] / mags[2], normal[2], atol=1e-15)
    expected = law.force(0.0015, -normal[2] @ jnp.array([0.0, -0.01, 0.0]), 0.01)
    assert float(mags[2]) == pytest.approx(float(expected), rel=1e-14)
    np.testing.assert_allclose(jnp.sum(forces, axis=0), forces[1] + forces[2], atol=1e-12)
