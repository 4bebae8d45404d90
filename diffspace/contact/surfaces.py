"""Rigid contact surfaces in a body's frame: a plane patch and a grapple-shaft cylinder."""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Float

from ..core.spatial import safe_norm


class Surface(eqx.Module):
    """Contact surface in the target frame (the kind is data, so plane and shaft share one compiled program).

    ``is_plane = 1``: the plane ``direction . (x - point) = 0`` with outward normal ``direction``, a circular
    patch of radius ``extent`` about ``point``. ``is_plane = 0`` (grapple shaft): a cylinder of radius
    ``radius`` whose axis runs from ``point`` along ``direction`` over the length ``extent``; the outward
    normal is radial.
    """

    point: Float[Array, "3"]
    direction: Float[Array, "3"]
    radius: Float[Array, ""]
    extent: Float[Array, ""]
    is_plane: Float[Array, ""]

    def distance(self, s: Float[Array, "3"]):
        """Signed distance of ``s`` from the surface and the unit outward normal there (target frame)."""
        w = s - self.point
        axial = w @ self.direction
        radial = w - axial * self.direction
        rho = safe_norm(radial)
        plane = self.is_plane > 0.5
        normal = jnp.where(plane, self.direction, radial / jnp.where(rho > 0, rho, 1.0))
        return jnp.where(plane, axial, rho - self.radius), normal

    def margin(self, s: Float[Array, "3"]) -> Float[Array, ""]:
        """Positive while the foot of ``s`` lies on the patch / on the shaft's length [m]."""
        w = s - self.point
        axial = w @ self.direction
        patch = self.extent - safe_norm(w - axial * self.direction)
        return jnp.where(self.is_plane > 0.5, patch, jnp.minimum(axial, self.extent - axial))
