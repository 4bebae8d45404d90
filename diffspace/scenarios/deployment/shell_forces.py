r"""The internal forces of the mast's shell interfaces in closed form, at all Gauss points of all elements of
all interfaces at once: the forces of :meth:`diffspace.bodies.shell.Shell.forces` (equal to round-off), in a
form that compiles to a few large kernels.

:meth:`~diffspace.bodies.shell.Shell.forces` transposes ``jax.linearize`` of one element's strains, ``vmap``-ed
over the elements: on a CPU that is some fifty small kernels (batched 2 x 2 and 3 x 3 products, pads and
transposes) per evaluation, and a deployment evaluates the forces 16 000 times. Here the variations of the
strains are written out (notation of :mod:`diffspace.bodies.shell`: ``g_x = r_x``, ``g_y = r_y``,
``c = g_x x g_y``, ``n = c / |c|``; ``A``, ``B`` the curvilinear membrane strain ``1/2 (G - G^0)`` and change
of curvature ``l - l^0``, so that ``eps = T^T A T`` and ``kappa = T^T B T``).

**Stress tensors.** ``U`` per Gauss point is ``w (h/2 eps^T D eps + h^3/24 kappa^T D kappa)`` (``w`` the
quadrature factor). Its derivatives with respect to the curvilinear components are the tensors ``P = T S T^T``
and ``Q = T M T^T`` of the Cartesian resultants ``S = h w D eps``, ``M = h^3/12 w D kappa``: linear in ``A`` and
``B`` with a 3 x 3 matrix per Gauss point (``(P_xx, P_xy, P_yy) = C_m (A_xx, A_xy, A_yy)``, ``C_b`` likewise),
formed once from ``T``, ``D``, ``h`` and ``w``. Kelvin-Voigt damping adds ``beta`` times the strain rates.

**Membrane** (``G_ij = g_i . g_j``):

.. math:: P : \tfrac12\delta G = \sum_{ij} P_{ij}\, g_j\cdot\delta g_i,

so ``g_x`` and ``g_y`` carry the forces ``f_i = sum_j P_ij g_j``.

**Bending** (``l_ij = r_,ij . n``):

.. math:: Q : \delta l = \sum_{ij} Q_{ij}\,(n\cdot\delta r_{,ij} + r_{,ij}\cdot\delta n),\qquad
          \delta n = \frac{(I - n n^T)\,\delta c}{|c|},\quad \delta c = \delta g_x\times g_y + g_x\times\delta g_y,

so ``r_,xx``, ``r_,xy``, ``r_,yy`` carry ``Q_xx n``, ``2 Q_xy n``, ``Q_yy n`` and, with ``m = sum_ij Q_ij r_,ij``
and ``mu = (I - n n^T) m / |c|``, ``g_x`` carries ``g_y x mu`` and ``g_y`` carries ``mu x g_x``.

**Rates** the same way: ``A_dot_ij = 1/2 (g_dot_i . g_j + g_i . g_dot_j)``, ``B_dot_ij = r_dot_,ij . n +
r_,ij . n_dot`` with ``n_dot = (I - n n^T) c_dot / |c|``. The element force is ``sum_g S_g^T f_g`` over the
Gauss points with the shape-function rows ``S_x, S_y, S_xx, S_xy, S_yy`` of
:func:`~diffspace.bodies.shell.shape_table`.

Every quantity is an array over ``(Gauss point, element)``; the elements of
:func:`~diffspace.bodies.shell.cylinder_mesh` share one size and therefore one set of shape functions, so the
interpolation and the final sum are two plain matrix products over all elements.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from ...bodies.shell import Shell


def _dot(a, b):
    """Scalar product of arrays of 3-vectors ``(G, 3, n)``."""
    return a[:, 0] * b[:, 0] + a[:, 1] * b[:, 1] + a[:, 2] * b[:, 2]


def _cross(a, b):
    return jnp.stack([a[:, 1] * b[:, 2] - a[:, 2] * b[:, 1], a[:, 2] * b[:, 0] - a[:, 0] * b[:, 2],
                      a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]], axis=1)


def _congruence(t, a_xx, a_xy, a_yy):
    """``(x_xx, x_xy, x_yy)`` of ``t^T A t`` for symmetric ``A``; ``t`` is ``(2, 2, ...)``."""
    t00, t01, t10, t11 = t[0, 0], t[0, 1], t[1, 0], t[1, 1]
    return (t00 * t00 * a_xx + 2.0 * t00 * t10 * a_xy + t10 * t10 * a_yy,
            t00 * t01 * a_xx + (t00 * t11 + t10 * t01) * a_xy + t10 * t11 * a_yy,
            t01 * t01 * a_xx + 2.0 * t01 * t11 * a_xy + t11 * t11 * a_yy)


def _curvilinear(t, dmat, w):
    """``C`` with ``(P_xx, P_xy, P_yy) = C (A_xx, A_xy, A_yy)`` (module docstring): the tensor ``P = T S T^T``
    of the Cartesian resultant ``S = w D voigt(T^T A T)`` for each unit curvilinear strain (mapped over the
    three, traced once); ``(3, 3, ...)``."""

    def column(a):
        x = _congruence(t, *a)
        s = w * jnp.einsum("ij,j...->i...", dmat, jnp.stack([x[0], x[2], 2.0 * x[1]]))  # Voigt [xx, yy, 2 xy]
        return jnp.stack(_congruence(jnp.swapaxes(t, 0, 1), s[0], s[2], s[1]))

    return jax.vmap(column, out_axes=1)(jnp.eye(3))


class ShellPoints(eqx.Module):
    """The interfaces' shells at their Gauss points (module docstring), over ``n`` = interfaces x elements
    (interface-major): the derivatives ``S_x, S_y, S_xx, S_xy, S_yy`` of the common element's shape functions
    ``(5 G, 12)`` and their transpose, the reference metric ``G^0`` and second fundamental form ``l^0``
    (``(3, G, n)``: ``xx, xy, yy``), the membrane and bending matrices ``C_m``, ``C_b`` ``(2, 3, 3, G, n)``, the
    Kelvin-Voigt ``beta`` and the elements' corner nodes (as in :class:`~diffspace.bodies.shell.ShellMesh`)."""

    shapes: Float[Array, "5G 12"]
    assembly: Float[Array, "12 5G"]
    metric: Float[Array, "3 G n"]
    second: Float[Array, "3 G n"]
    stiffness: Float[Array, "2 3 3 G n"]
    damping: Float[Array, ""]
    elements: tuple[tuple[int, int, int, int], ...] = eqx.field(static=True)

    @classmethod
    def of(cls, shell: Shell, n_interfaces: int) -> "ShellPoints":
        """From :class:`~diffspace.bodies.shell.Shell` (its element references) for ``n_interfaces`` copies."""
        ref, tile = shell.references, lambda x: jnp.tile(x, n_interfaces)  # noqa: E731  (..., E) -> (..., n)
        symmetric = lambda m: jnp.stack([m[..., 0, 0], m[..., 0, 1], m[..., 1, 1]]).swapaxes(1, 2)  # noqa: E731
        shapes = jnp.moveaxis(ref.shapes[0][:, 1:], 1, 0).reshape(-1, 12)  # rows (derivative, Gauss point)
        t, factor, mat = jnp.transpose(ref.transform, (2, 3, 1, 0)), ref.factor.T, shell.material
        stiffness = jax.vmap(lambda w: _curvilinear(t, mat.plane_stress(), w * factor))(
            jnp.stack([mat.thickness, mat.thickness**3 / 12.0]))
        return cls(shapes, shapes.T, tile(symmetric(ref.metric)), tile(symmetric(ref.second)), tile(stiffness),
                   mat.damping, shell.mesh.elements)

    def gather(self, shells: Float[Array, "i N 3 3"]) -> Float[Array, "12 3 n"]:
        """Element coordinates ``e[k, xyz, element]`` (``k = 3 corner + slot``) of every interface's shell."""
        corners = shells[:, np.asarray(self.elements)]  # (i, E, 4, 3, 3)
        return jnp.transpose(corners, (2, 3, 4, 0, 1)).reshape(12, 3, -1)

    def forces(self, e: Float[Array, "12 3 n"], e_dot: Float[Array, "12 3 n"]) -> Float[Array, "12 3 n"]:
        """Internal (elastic + Kelvin-Voigt) force of every element, ``dU/de + dD/de_dot`` (module docstring)."""
        n_points = self.metric.shape[1]
        both = (self.shapes @ jnp.concatenate([e, e_dot], axis=1).reshape(12, -1)).reshape(5, n_points, 2, 3, -1)
        d, d_dot = both[:, :, 0], both[:, :, 1]  # r_x, r_y, r_xx, r_xy, r_yy, each (G, 3, n)
        normal, norm, strains = self._strains(d, d_dot)
        c = self.stiffness  # (P_xx, P_xy, P_yy) = C_m A, (Q_xx, Q_xy, Q_yy) = C_b B
        p_xx, p_xy, p_yy, q_xx, q_xy, q_yy = (c[i, k, 0] * strains[i, 0] + c[i, k, 1] * strains[i, 1]
                                              + c[i, k, 2] * strains[i, 2] for i in (0, 1) for k in range(3))
        gx, gy = d[0], d[1]
        m = q_xx[:, None] * d[2] + 2.0 * q_xy[:, None] * d[3] + q_yy[:, None] * d[4]
        mu = (m - _dot(m, normal)[:, None] * normal) / norm[:, None]
        rows = jnp.stack([p_xx[:, None] * gx + p_xy[:, None] * gy + _cross(gy, mu),
                          p_xy[:, None] * gx + p_yy[:, None] * gy + _cross(mu, gx),
                          q_xx[:, None] * normal, 2.0 * q_xy[:, None] * normal, q_yy[:, None] * normal])
        return (self.assembly @ rows.reshape(self.assembly.shape[1], -1)).reshape(e.shape)

    def tangent(self, e, e_dot) -> tuple[Float[Array, "n 36 36"], Float[Array, "n 36 36"]]:
        """Element blocks of ``K = dF/de`` and ``C = dF/de_dot`` (rows and columns ``3 k + xyz``, the order of
        :meth:`~diffspace.bodies.shell.ShellMesh.element_dofs`): the forces linearised once, then one product
        per element coordinate, all elements at once (an element's forces depend on its own coordinates only)."""
        basis = jnp.eye(36).reshape(36, 12, 3, 1)
        _, linear = jax.linearize(self.forces, e, e_dot)
        zero = jnp.zeros_like(e)

        def blocks(direction):
            columns = jax.vmap(lambda u: direction(jnp.broadcast_to(u, e.shape)))(basis)
            return jnp.transpose(columns.reshape(36, 36, -1), (2, 1, 0))

        return blocks(lambda u: linear(u, zero)), blocks(lambda u: linear(zero, u))

    def _strains(self, d, d_dot):
        """Unit normal ``(G, 3, n)``, ``|c|`` and the curvilinear strains with their Kelvin-Voigt rates,
        ``A + beta A_dot`` and ``B + beta B_dot`` (``xx, xy, yy``), ``(2, 3, G, n)``."""
        beta, ref, second = self.damping, self.metric, self.second
        gx, gy, gx_dot, gy_dot = d[0], d[1], d_dot[0], d_dot[1]
        c = _cross(gx, gy)
        norm = jnp.sqrt(_dot(c, c))
        normal = c / norm[:, None]
        c_dot = _cross(gx_dot, gy) + _cross(gx, gy_dot)
        normal_dot = (c_dot - _dot(c_dot, normal)[:, None] * normal) / norm[:, None]
        membrane = (0.5 * (_dot(gx, gx) - ref[0]) + beta * _dot(gx_dot, gx),
                    0.5 * (_dot(gx, gy) - ref[1] + beta * (_dot(gx_dot, gy) + _dot(gx, gy_dot))),
                    0.5 * (_dot(gy, gy) - ref[2]) + beta * _dot(gy_dot, gy))
        bending = tuple(_dot(d[k], normal) - second[j] + beta * (_dot(d_dot[k], normal) + _dot(d[k], normal_dot))
                        for j, k in enumerate((2, 3, 4)))
        return normal, norm, jnp.stack([jnp.stack(membrane), jnp.stack(bending)])


__all__ = ["ShellPoints"]
