r"""The rope's elastic energy element by element (seed: Cai et al. 2021, Aerospace 8:381, Eqs. (26), (37)-(39)),
with its gradient assembled from per-element derivatives.

The energy :math:`V = \sum_\text{sections} V_a(x_i, x_{i+1}) + \sum_\text{triples} V_b(p_0, p_1, p_2)` is a sum
of local terms: an axial spring per section (two nodes) and a bending spring per *bend triple* (three
points). The triples are the interior nodes ``(x_{i-1}, x_i, x_{i+1})`` and, for clamped ends, the two clamps
``(x_1 - t_A, x_1, x_2)`` and ``(x_N, x_{N+1}, x_{N+1} + t_B)``: a clamp is a bend between the fitting axis
and the end section (:mod:`diffspace.bodies.rope`). Every triple point is a node plus a constant offset, so
the map from nodes to element points is a gather with static indices and

.. math:: \nabla V = \sum_e P_e^T \nabla V_e

with ``P_e`` the 0/1 selection of element ``e``'s nodes: per-element gradients by autodiff of one small
function (``vmap`` over the elements) and one scatter-add (the residual of every static solve). The Hessian,
the stiffness matrix, is in closed form and banded in :mod:`diffspace.bodies.rope_stiffness`. Inside a time
step the forces come instead from :func:`bend_linearisation`, the bend vectors' derivative in closed form (half
the cost of the autodiff gradient and dashpot forces, and no gather or scatter).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from ..core.spatial import safe_norm


def bend_vector(a: Float[Array, "*M 3"], b: Float[Array, "*M 3"], c: Float[Array, "*M 3"]) -> Float[Array, "*M 3"]:
    r"""Rotation vector ``phi = beta n`` turning section ``b - a`` into section ``c - b`` (Eq. (37) angle,
    with direction; broadcasts over leading axes).

    With ``e``, ``f`` the unit sections: ``sin beta n = e x f``, ``cos beta = e . f`` and
    ``phi = (e x f) beta / sin beta``. The factor ``beta / sin beta`` uses its Taylor series near 0, so the
    bending energy has finite first and second derivatives for a straight rope.
    """
    e = (b - a) / safe_norm(b - a)[..., None]
    f = (c - b) / safe_norm(c - b)[..., None]
    u = jnp.cross(e, f)  # sin(beta) n
    cos_b = jnp.sum(e * f, axis=-1)
    s2 = jnp.sum(u * u, axis=-1)
    small = s2 < 1e-12
    s = jnp.sqrt(jnp.where(small, 1.0, s2))
    exact = jnp.arctan2(s, cos_b) / s
    series = 1.0 / cos_b - s2 / (3.0 * cos_b**3)  # atan(s/c)/s for s -> 0 (c > 0)
    return u * jnp.where(small, series, exact)[..., None]


def bend_linearisation(a: Float[Array, "*M 3"], b: Float[Array, "*M 3"], c: Float[Array, "*M 3"],
                       va: Float[Array, "*M 3"], vb: Float[Array, "*M 3"], vc: Float[Array, "*M 3"]):
    r""":func:`bend_vector` ``phi`` of the triples ``(a, b, c)``, its rate ``phi_dot`` for point velocities ``va``,
    ``vb``, ``vc``, and the transpose ``mu -> (dphi/da^T mu, dphi/db^T mu, dphi/dc^T mu)``, in closed form (one
    elementwise pass, no autodiff).

    With ``w = e x f``, ``q = |w|^2``, ``cos = e . f`` and ``phi = g(q, cos) w``, ``g = atan2(sqrt q, cos) / sqrt q``:

    .. math:: d\phi = g\,dw + w\,(h_1\, w\cdot dw + h_2\, d\cos),\qquad
              h_1 = 2\,\partial g/\partial q = (\cos / r - g) / q,\quad h_2 = \partial g/\partial\cos = -1/r,

    ``r = q + cos^2``, ``dw = de x f + e x df``, ``dcos = de . f + e . df``, ``de = (I - e e^T) d(b - a) / |b - a|``
    (likewise ``df``); near ``q = 0`` the derivatives of :func:`bend_vector`'s series. The transpose of a moment
    ``mu``: ``nu = g mu + h_1 (mu . w) w`` gives ``de^T: f x nu + h_2 (mu . w) f`` and ``df^T: nu x e + h_2 (mu . w) e``.
    Equal to autodiff of :func:`bend_vector` to round-off (``tests/test_rope.py``) at half the cost inside a time
    step (measured: the three closing ropes' forces 12.6 against 22.7 us)."""
    (l1, l2), (e, f), w, cos_b, q = triple_frame(a, b, c)
    g, h1, h2 = bend_factors(q, cos_b)

    def tangent_plane(vec, unit, length):  # (I - u u^T) vec / l
        return (vec - _dot(unit, vec) * unit) / length

    de, df = tangent_plane(vb - va, e, l1), tangent_plane(vc - vb, f, l2)
    dw = jnp.cross(de, f) + jnp.cross(e, df)
    phi_dot = g * dw + w * (h1 * _dot(w, dw) + h2 * (_dot(de, f) + _dot(e, df)))

    def transpose(mu):
        mw = _dot(mu, w)
        nu = g * mu + h1 * mw * w
        g1 = tangent_plane(jnp.cross(f, nu) + h2 * mw * f, e, l1)
        g2 = tangent_plane(jnp.cross(nu, e) + h2 * mw * e, f, l2)
        return -g1, g1 - g2, g2

    return g * w, phi_dot, transpose


def triple_frame(a, b, c):
    """Section lengths ``(l_1, l_2)`` and unit sections ``(e, f)`` of the triples ``(a, b, c)``, ``w = e x f``,
    ``cos = e . f`` and ``q = |w|^2`` (lengths, ``cos`` and ``q`` keep a trailing axis of 1)."""
    d1, d2 = b - a, c - b
    l1, l2 = safe_norm(d1)[..., None], safe_norm(d2)[..., None]
    e, f = d1 / l1, d2 / l2
    w = jnp.cross(e, f)
    return (l1, l2), (e, f), w, _dot(e, f), _dot(w, w)


def bend_factors(q, cos_b):
    """``g = atan2(sqrt q, cos) / sqrt q`` of :func:`bend_vector`, ``h_1 = 2 dg/dq`` and ``h_2 = dg/dcos`` (the
    series branch's derivatives near ``q = 0``)."""
    small = q < 1e-12
    q_safe = jnp.where(small, 1.0, q)
    s = jnp.sqrt(q_safe)
    r = q + cos_b**2
    g = jnp.where(small, 1.0 / cos_b - q / (3.0 * cos_b**3), jnp.arctan2(s, cos_b) / s)
    h1 = jnp.where(small, -2.0 / (3.0 * cos_b**3), (cos_b / r - g) / q_safe)
    h2 = jnp.where(small, q / cos_b**4 - 1.0 / cos_b**2, -1.0 / r)
    return g, h1, h2


def _dot(a, b):
    return jnp.sum(a * b, axis=-1, keepdims=True)


@functools.lru_cache(maxsize=None)
def bend_triples(n_nodes: int, clamped: bool) -> np.ndarray:
    """Node indices ``(M, 3)`` of the bend triples: the interior nodes, then (clamped) clamp A and clamp B."""
    inner = [(i - 1, i, i + 1) for i in range(1, n_nodes - 1)]
    clamps = [(0, 0, 1), (n_nodes - 2, n_nodes - 1, n_nodes - 1)] if clamped else []
    return np.asarray(inner + clamps, dtype=np.int32).reshape(-1, 3)


@functools.lru_cache(maxsize=None)
def section_pairs(n_nodes: int) -> np.ndarray:
    """Node indices ``(N, 2)`` of the sections."""
    return np.stack([np.arange(n_nodes - 1), np.arange(1, n_nodes)], axis=1).astype(np.int32)


def triple_points(x: Float[Array, "N1 3"], attach, clamped: bool) -> Float[Array, "M 3 3"]:
    """The three points of every bend triple; the clamps' outer points are the nodes offset by the fitting
    axes ``attach = [t_A, t_B]`` (node order)."""
    points = x[bend_triples(x.shape[0], clamped)]
    if not clamped:
        return points
    return points.at[-2, 0].add(-attach[0]).at[-1, 2].add(attach[1])


def axial_gain(stretch, compression_ratio):
    """1 in tension, ``compression_ratio`` in compression (axial stiffness and damping alike)."""
    return jnp.where(stretch > 0.0, 1.0, compression_ratio)


def section_energy(pair: Float[Array, "2 3"], rest_length, stiffness, compression_ratio) -> Float[Array, ""]:
    """``k g(dl) dl^2 / 2`` with ``dl = |b - a| - l_0`` and ``g`` the :func:`axial_gain`."""
    stretch = safe_norm(pair[1] - pair[0]) - rest_length
    return 0.5 * stiffness * axial_gain(stretch, compression_ratio) * stretch**2


def triple_energy(points: Float[Array, "3 3"], rest_bend: Float[Array, "3"], stiffness) -> Float[Array, ""]:
    """``k_tor |phi - phi_0|^2 / 2`` (Eq. (39)) of one bend triple."""
    return 0.5 * stiffness * jnp.sum((bend_vector(points[0], points[1], points[2]) - rest_bend) ** 2)


def _section_args(rope, x):
    n = x.shape[0] - 1
    return (x[section_pairs(x.shape[0])], rope.rest_lengths, jnp.broadcast_to(rope.axial_stiffness, (n,)),
            rope.compression_ratio)


_SECTION_AXES = (0, 0, 0, None)
_TRIPLE_AXES = (0, 0, 0)


def _triple_args(rope, x, attach):
    return triple_points(x, attach, rope.clamped), rope.rest_bends(), rope.triple_springs(rope.bending_stiffness)


def section_energies(rope, x: Float[Array, "N1 3"]) -> Float[Array, " N"]:
    """:func:`section_energy` of every section [J]."""
    return jax.vmap(section_energy, _SECTION_AXES)(*_section_args(rope, x))


def triple_energies(rope, x: Float[Array, "N1 3"], attach=None) -> Float[Array, " M"]:
    """:func:`triple_energy` of every bend triple [J]."""
    return jax.vmap(triple_energy, _TRIPLE_AXES)(*_triple_args(rope, x, attach))


@jax.jit
def elastic_gradient(rope, x: Float[Array, "N1 3"], attach=None) -> Float[Array, "N1 3"]:
    """``dV/dx`` [N] of every node: per-element gradients scattered onto their nodes."""
    n1 = x.shape[0]
    g_sections = jax.vmap(jax.grad(section_energy), _SECTION_AXES)(*_section_args(rope, x))
    g_triples = jax.vmap(jax.grad(triple_energy), _TRIPLE_AXES)(*_triple_args(rope, x, attach))
    g = jnp.zeros((n1, 3), g_sections.dtype).at[section_pairs(n1)].add(g_sections)
    return g.at[bend_triples(n1, rope.clamped)].add(g_triples)
