r"""The rope's stiffness matrix ``K = d^2 V / dx dx`` (the Hessian of its elastic energy) in closed form and
banded (seed: Cai et al. 2021, Aerospace 8:381, Eqs. (26), (37)-(39)).

A section couples its two nodes and a bend triple three consecutive points, so ``K`` is block pentadiagonal
in 3x3 node blocks (:class:`~diffspace.core.banded.Bands`). It is assembled from hand-derived element
Hessians (equal to ``jax.hessian`` of :func:`~diffspace.bodies.rope_elements.section_energy` and
:func:`~diffspace.bodies.rope_elements.triple_energy` to round-off, ``tests/test_rope.py``) by padded sums:
no autodiff, no scatter. Every Newton solve of the rope statics and the linearised stiffness use it.

**Section** (Eq. (26) without damping), ``V_a = k g(dl) dl^2 / 2``, ``dl = l - l_0``, ``l = |d|``,
``d = x_{i+1} - x_i``, ``n = d / l``, ``g`` the axial gain (piecewise constant):

.. math:: \partial^2 V_a / \partial d\,\partial d = k g\,\big(n n^T + (dl / l)(I - n n^T)\big),

and the node blocks ``[[H, -H], [-H, H]]``.

**Bend triple** (Eq. (39)), ``V_b = k_tor |phi - phi_0|^2 / 2`` with ``phi = g(q, c) w``, ``w = e x f``,
``q = |w|^2``, ``c = e . f`` of the unit sections ``e``, ``f`` (:func:`~diffspace.bodies.rope_elements.bend_vector`).
With the moment ``m = k_tor (phi - phi_0)`` the Hessian is ``k_tor J^T J + sum_k m_k d^2 phi_k``. In the
section directions ``delta = (de, df)``: ``dw = -[f]_x de + [e]_x df`` (``D_w``), ``dq = Q . delta``,
``Q = 2 (f x w, w x e)``, ``dc = C . delta``, ``C = (f, e)``, ``d(m . w) = M . delta``, ``M = (f x m, m x e)``,
``v = g_q Q + g_c C``, ``mu = m . w``, ``nu = g m + 2 g_q mu w``, ``J_ef = g D_w + w v^T`` and

.. math:: H_{ef} = k_{tor} J_{ef}^T J_{ef} + \mu\big(g_{qq} Q Q^T + g_{qc}(Q C^T + C Q^T) + g_{cc} C C^T
          + 2 g_q D_w^T D_w\big) + M v^T + v M^T + \begin{bmatrix} 0 & X \\ X^T & 0 \end{bmatrix},
          \quad X = \mu g_c I - [\nu]_\times,

from ``d^2 q = 2|dw|^2 + 4 w . (de x df)``, ``d^2 c = 2 de . df`` and ``d^2 w = 2 de x df``. The unit
sections ``e = d_1 / l_1`` add, for the gradient ``G_e = mu v_e + g M_e``, the curvature of the
normalisation, ``-(e p^T + p e^T + (G_e . e) P_e) / l_1^2`` with ``P_e = I - e e^T``, ``p = P_e G_e``
(likewise ``f``), and the chain rule ``de = P_e (dx_b - dx_a) / l_1``, ``df = P_f (dx_c - dx_b) / l_2``. The
derivatives of ``g = atan2(sqrt q, c) / sqrt q``: ``g_q = (c / r - g) / (2 q)``, ``g_c = -1 / r``
(``r = q + c^2``), ``g_qq = -(c / r^2 + 3 g_q) / (2 q)``, ``g_qc = 1 / r^2``, ``g_cc = 2 c / r^2``; near
``q = 0`` those of the series ``1 / c - q / (3 c^3)``.

Clamps are bend triples with a fitting offset point (:mod:`diffspace.bodies.rope`): the triples are
assembled on the chain of points of :meth:`~diffspace.bodies.rope.Rope.chain`, and the offset points'
rows and columns are added onto their end nodes.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from ..core.banded import Bands
from ..core.spatial import safe_norm, skew
from .rope_elements import axial_gain, bend_factors, elastic_gradient, triple_frame


def _outer(a, b):
    return a[..., :, None] * b[..., None, :]


def _projector(n):
    return jnp.eye(3) - _outer(n, n)


def section_hessian(d: Float[Array, "*M 3"], rest_length, stiffness, compression_ratio) -> Float[Array, "*M 3 3"]:
    """``d^2 V_a / dd dd`` of the sections ``d = x_{i+1} - x_i`` (module notes)."""
    length = safe_norm(d)[..., None, None]
    n = d / length[..., 0]
    stretch = length - rest_length[..., None, None]
    k = stiffness[..., None, None] * axial_gain(stretch, compression_ratio)
    return k * (_outer(n, n) + stretch / length * _projector(n))


def _normalisation_curvature(gradient, n, length):
    """Hessian of ``gradient . d / |d|`` in ``d`` at fixed ``gradient``: ``-(n p^T + p n^T + (G . n) P) / l^2``."""
    p = gradient - jnp.sum(gradient * n, -1, keepdims=True) * n
    along = jnp.sum(gradient * n, -1)[..., None, None]
    return -(_outer(n, p) + _outer(p, n) + along * _projector(n)) / length[..., None] ** 2


def _bend_second_factors(q, cos_b, h1):
    """``g_qq``, ``g_qc``, ``g_cc`` (module notes; ``h_1 = 2 g_q``)."""
    small = q < 1e-12
    r = q + cos_b**2
    g_qq = jnp.where(small, 0.0, -(cos_b / r**2 + 1.5 * h1) / (2.0 * jnp.where(small, 1.0, q)))
    g_qc = jnp.where(small, 1.0 / cos_b**4, 1.0 / r**2)
    g_cc = jnp.where(small, 2.0 / cos_b**3 - 4.0 * q / cos_b**5, 2.0 * cos_b / r**2)
    return g_qq, g_qc, g_cc


def _bend_hessian_ef(points, rest_bend, stiffness):
    """``(H_ef (M, 6, 6), G (M, 6))``: Hessian and gradient of ``V_b`` in the unit sections ``(e, f)`` (``stiffness``
    ``k_tor``, one or per triple, ``(M,)``)."""
    stiffness = jnp.asarray(stiffness)[..., None]
    (l1, l2), (e, f), w, cos_b, q = triple_frame(*points)
    g, h1, h2 = bend_factors(q, cos_b)
    g_qq, g_qc, g_cc = _bend_second_factors(q, cos_b, h1)
    m = stiffness * (g * w - rest_bend)
    mu = jnp.sum(m * w, -1, keepdims=True)
    d_w = jnp.concatenate([-skew(f), skew(e)], -1)  # (M, 3, 6)
    big_q = 2.0 * jnp.concatenate([jnp.cross(f, w), jnp.cross(w, e)], -1)
    big_c = jnp.concatenate([f, e], -1)
    big_m = jnp.concatenate([jnp.cross(f, m), jnp.cross(m, e)], -1)
    v = 0.5 * h1 * big_q + h2 * big_c
    jac = g[..., None] * d_w + _outer(w, v)
    x = (mu * h2)[..., None] * jnp.eye(3) - skew(g * m + h1 * mu * w)
    zero = jnp.zeros_like(x)
    mixed = jnp.concatenate([jnp.concatenate([zero, x], -1), jnp.concatenate([jnp.swapaxes(x, -1, -2), zero], -1)], -2)
    mu2 = mu[..., None]
    h = (stiffness[..., None] * jnp.swapaxes(jac, -1, -2) @ jac + mixed + _outer(big_m, v) + _outer(v, big_m)
         + mu2 * (g_qq[..., None] * _outer(big_q, big_q) + g_qc[..., None] * (_outer(big_q, big_c) + _outer(big_c, big_q))
                  + g_cc[..., None] * _outer(big_c, big_c) + h1[..., None] * jnp.swapaxes(d_w, -1, -2) @ d_w))
    return h, mu * v + g * big_m, (l1, l2), (e, f)


def triple_hessian(a, b, c, rest_bend, stiffness) -> tuple[Float[Array, "M 3 3"], ...]:
    """Node blocks ``(aa, ab, ac, bb, bc, cc)`` of ``d^2 V_b`` of the triples ``(a, b, c)`` (module notes)."""
    h, grad, (l1, l2), (e, f) = _bend_hessian_ef((a, b, c), rest_bend, stiffness)
    t_e, t_f = _projector(e) / l1[..., None], _projector(f) / l2[..., None]
    blk_a = t_e @ h[..., :3, :3] @ t_e + _normalisation_curvature(grad[..., :3], e, l1)
    blk_b = t_e @ h[..., :3, 3:] @ t_f
    blk_c = t_f @ h[..., 3:, 3:] @ t_f + _normalisation_curvature(grad[..., 3:], f, l2)
    blk_bt = jnp.swapaxes(blk_b, -1, -2)
    return blk_a, blk_b - blk_a, -blk_b, blk_a - blk_b - blk_bt + blk_c, blk_b - blk_c, blk_c


def _pad(a, before: int, after: int):
    return jnp.pad(a, [(before, after), (0, 0), (0, 0)])


def _fold_fittings(k: Bands) -> Bands:
    """The chain's bands with the clamp offset points (first and last) added onto the end nodes."""
    t = functools.partial(jnp.swapaxes, axis1=-1, axis2=-2)
    diag = k.diag[1:-1].at[0].add(k.diag[0] + k.upper1[0] + t(k.upper1[0]))
    diag = diag.at[-1].add(k.diag[-1] + k.upper1[-1] + t(k.upper1[-1]))
    upper1 = k.upper1[1:-1].at[0].add(k.upper2[0]).at[-1].add(k.upper2[-1])
    return Bands(diag, upper1, k.upper2[1:-1])


@jax.jit
def stiffness_bands(rope, x: Float[Array, "N1 3"], attach=None) -> Bands:
    """``K = d^2 V / dx dx`` [N/m] over all nodes (ends included), banded (module notes)."""
    attach = rope.fittings(attach)
    p = rope.chain(x, attach)
    aa, ab, ac, bb, bc, cc = triple_hessian(p[:-2], p[1:-1], p[2:], rope.chain_rest_bends(),
                                             rope.chain_springs(rope.bending_stiffness))
    bends = Bands(_pad(aa, 0, 2) + _pad(bb, 1, 1) + _pad(cc, 2, 0), _pad(ab, 0, 1) + _pad(bc, 1, 0), ac)
    if rope.clamped:
        bends = _fold_fittings(bends)
    n = rope.n_sections
    hs = section_hessian(x[1:] - x[:-1], rope.rest_lengths, jnp.broadcast_to(rope.axial_stiffness, (n,)),
                         rope.compression_ratio)
    return Bands(bends.diag + _pad(hs, 0, 1) + _pad(hs, 1, 0), bends.upper1 - hs, bends.upper2)


def _is_zero(tangent) -> bool:
    return all(isinstance(t, jax.custom_derivatives.SymbolicZero)
               for t in jax.tree.leaves(tangent, is_leaf=lambda t: isinstance(t, jax.custom_derivatives.SymbolicZero)))


def _instantiate(primal, tangent):
    zero = jax.custom_derivatives.SymbolicZero
    return jax.tree.map(lambda p, t: jnp.zeros_like(p) if isinstance(t, zero) else t, primal, tangent,
                        is_leaf=lambda t: isinstance(t, zero))


@jax.custom_jvp
def stiff_gradient(rope, x: Float[Array, "N1 3"], attach=None) -> Float[Array, "N1 3"]:
    """:func:`~diffspace.bodies.rope_elements.elastic_gradient` whose derivative in ``x`` is the banded
    stiffness times the tangent (derivatives in the rope's parameters and the fittings are ordinary autodiff)."""
    return elastic_gradient(rope, x, attach)


@functools.partial(stiff_gradient.defjvp, symbolic_zeros=True)
def _stiff_gradient_jvp(primals, tangents):
    rope, x, attach = primals
    d_rope, d_x, d_attach = tangents
    gradient = elastic_gradient(rope, x, attach)
    d_gradient = jnp.zeros_like(gradient)
    if not _is_zero(d_x):
        d_gradient = d_gradient + stiffness_bands(rope, x, attach).matvec(d_x)
    if not (_is_zero(d_rope) and _is_zero(d_attach)):
        _, d_params = jax.jvp(lambda r, a: elastic_gradient(r, x, a), (rope, attach),
                              (_instantiate(rope, d_rope), _instantiate(attach, d_attach)))
        d_gradient = d_gradient + d_params
    return gradient, d_gradient
