r"""Rigid bodies in natural coordinates (the mast paper's Section 2, Eqs. (1)-(7) and (39); Garcia de Jalon's
natural coordinates, here with a point and three unit vectors).

A body's 12 coordinates are a body point ``p`` (the origin of its body frame) and its three body axes
``u, v, w`` (world components), stacked ``y = [p, u, v, w]``. A point with body-frame coordinates
``X = (X_1, X_2, X_3)`` is at

.. math:: r = p + X_1 u + X_2 v + X_3 w = A(X)\,y,

linear in ``y`` (Eq. (1): the shape function ``A``), so the kinetic energy ``T = 1/2 int rho |r_dot|^2 dV``
has the **constant** mass matrix (Eqs. (1)-(2))

.. math:: M = \bar M \otimes I_3,\qquad
          \bar M = \begin{bmatrix} m & s^T \\ s & J \end{bmatrix},\quad s = \int\rho X\,dV,\quad
          J = \int \rho X X^T dV,

(first and second moments about ``p``, body axes). The six intrinsic constraints (Eq. (39)) keep the axes
orthonormal, ``u.u = v.v = w.w = 1`` and ``u.v = v.w = w.u = 0``; with ``R = [u v w]`` the angular velocity
and acceleration are the axial vectors of the skew parts of ``R_dot R^T`` and ``R_ddot R^T`` (on the
constraint manifold ``R_dot R^T = [omega]_x`` and ``R_ddot R^T = [alpha]_x + [omega]_x^2``, whose second
term is symmetric).
"""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Float


def axes(y: Float[Array, "12"]) -> Float[Array, "3 3"]:
    """``R = [u v w]`` (columns: the body axes in world components)."""
    return y[3:].reshape(3, 3).T


def point(y: Float[Array, "12"], local: Float[ArrayLike, "3"]) -> Float[Array, "3"]:
    """World position ``p + R X`` of the body point ``X`` (body frame)."""
    return y[:3] + axes(y) @ jnp.asarray(local, float)


def direction(y: Float[Array, "12"], local: Float[ArrayLike, "3"]) -> Float[Array, "3"]:
    """World components ``R d`` of a body-fixed vector ``d``."""
    return axes(y) @ jnp.asarray(local, float)


def orthonormality(y: Float[Array, "12"]) -> Float[Array, "6"]:
    """The six intrinsic constraints ``[u.u - 1, v.v - 1, w.w - 1, u.v, v.w, w.u]`` (Eq. (39))."""
    u, v, w = y[3:6], y[6:9], y[9:12]
    return jnp.stack([u @ u - 1.0, v @ v - 1.0, w @ w - 1.0, u @ v, v @ w, w @ u])


def _axial(m: Float[Array, "3 3"]) -> Float[Array, "3"]:
    """Axial vector of the skew part of ``m``."""
    return 0.5 * jnp.stack([m[2, 1] - m[1, 2], m[0, 2] - m[2, 0], m[1, 0] - m[0, 1]])


def angular_velocity(y, y_dot) -> Float[Array, "3"]:
    """World angular velocity ``omega`` from ``R_dot R^T`` (module docstring)."""
    return _axial(axes(y_dot) @ axes(y).T)


def angular_acceleration(y, y_ddot) -> Float[Array, "3"]:
    """World angular acceleration ``alpha`` from ``R_ddot R^T`` (module docstring)."""
    return _axial(axes(y_ddot) @ axes(y).T)


def coordinates(rotation: Float[ArrayLike, "3 3"], origin: Float[ArrayLike, "3"]) -> Float[Array, "12"]:
    """``y`` of a body with axes ``rotation`` (columns) and origin ``origin``."""
    return jnp.concatenate([jnp.asarray(origin, float), jnp.asarray(rotation, float).T.reshape(-1)])


class MassProperties(eqx.Module):
    """Mass [kg], first moment ``s`` [kg m] and second moment ``J = int rho X X^T dV`` [kg m^2] about the
    body-frame origin (body axes). Add parts with ``+``."""

    mass: Float[Array, ""]
    first: Float[Array, "3"]
    second: Float[Array, "3 3"]

    def __add__(self, other: "MassProperties") -> "MassProperties":
        return MassProperties(self.mass + other.mass, self.first + other.first, self.second + other.second)

    @classmethod
    def cube(cls, edge, density) -> "MassProperties":
        """Solid cube of edge ``a`` centred on the origin: ``m = rho a^3``, ``J = m a^2 / 12 I``."""
        mass = jnp.asarray(density, float) * jnp.asarray(edge, float) ** 3
        return cls(mass, jnp.zeros(3), mass * jnp.asarray(edge, float) ** 2 / 12.0 * jnp.eye(3))

    @classmethod
    def ring(cls, mass, radius, centre, axis) -> "MassProperties":
        """Thin ring of ``mass`` and ``radius`` centred at ``centre`` with unit normal ``axis``:
        ``J = m (c c^T + R^2 / 2 (I - a a^T))``, ``s = m c``."""
        mass, radius = jnp.asarray(mass, float), jnp.asarray(radius, float)
        centre, axis = jnp.asarray(centre, float), jnp.asarray(axis, float)
        second = mass * (jnp.outer(centre, centre) + 0.5 * radius**2 * (jnp.eye(3) - jnp.outer(axis, axis)))
        return cls(mass, mass * centre, second)

    def bar_matrix(self) -> Float[Array, "4 4"]:
        """``M_bar = [[m, s^T], [s, J]]`` (module docstring)."""
        top = jnp.concatenate([self.mass[None], self.first])
        return jnp.concatenate([top[None], jnp.concatenate([self.first[:, None], self.second], 1)], 0)

    def mass_matrix(self) -> Float[Array, "12 12"]:
        """Constant mass matrix ``M_bar (x) I_3`` of the natural coordinates (Eqs. (1)-(2))."""
        return jnp.kron(self.bar_matrix(), jnp.eye(3))


__all__ = [
    "MassProperties",
    "angular_acceleration",
    "angular_velocity",
    "axes",
    "coordinates",
    "direction",
    "orthonormality",
    "point",
]
