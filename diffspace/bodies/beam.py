r"""Beam-equivalent of a short tube between two rigid end faces: a Timoshenko beam element in the co-rotating
frame of its root face (the fast alternative to the ANCF shell of :mod:`.shell` for the mast's interfaces).

**Section** (:class:`TubeSection`, circular tube of inner diameter ``d_i`` and wall ``t``): ``A = pi (r_o^2 -
r_i^2)``, ``I = pi (r_o^4 - r_i^4) / 4``, ``J = 2 I``, ``G = E / (2 (1 + nu))`` and Cowper's shear coefficient
of a thin-walled tube ``kappa = 2 (1 + nu) / (4 + 3 nu)``.

**Element.** Root frame ``(R_a, o_a)`` and tip frame ``(R_b, o_b)``; in the reference configuration the tip
frame is the root frame moved by ``L`` along the root's local axis ``e`` (``R_b = R_a``). The deformation is
the tip's displacement and rotation relative to the root, in root axes,

.. math:: d = R_a^T (o_b - o_a) - L e, \qquad \phi = \log(R_a^T R_b),

(``phi`` by :func:`rotation_vector`), and the strain energy is ``U = 1/2 [d; phi]^T K [d; phi]`` with ``K = C^{-1}`` the tip stiffness of the
clamped-free Timoshenko beam, whose compliance for the axis ``e = z`` is (bending in the ``x-z`` and ``y-z``
planes; a positive ``phi_y`` tilts the axis towards ``+x``)

.. math:: \frac{L}{EA}\ (d_z),\quad \frac{L}{GJ}\ (\phi_z),\quad
          \begin{bmatrix} d_x\\ \phi_y\end{bmatrix}:\ \begin{bmatrix} \frac{L^3}{3EI} + \frac{L}{\kappa G A} &
          \frac{L^2}{2EI}\\ \frac{L^2}{2EI} & \frac{L}{EI}\end{bmatrix},\quad
          \begin{bmatrix} d_y\\ \phi_x\end{bmatrix}:\ \begin{bmatrix} \frac{L^3}{3EI} + \frac{L}{\kappa G A} &
          -\frac{L^2}{2EI}\\ -\frac{L^2}{2EI} & \frac{L}{EI}\end{bmatrix}.

This is exact for a linear Timoshenko beam loaded at its ends (the interface between two rigid modules
carries only end loads), and frame-invariant for large rigid motions. **Damping**: Kelvin-Voigt like the
shell, dissipation ``D = beta / 2 [d; phi]_dot^T K [d; phi]_dot``. The tube's mass is not in the element:
the scenario adds it to the end bodies as two thin rings (half each).
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float



def rotation_vector(rotation: Float[Array, "3 3"]) -> Float[Array, "3"]:
    """Rotation vector ``phi`` of a rotation by less than 90 degrees: the skew part of ``R`` is ``sin|phi|
    phi / |phi|``, so ``phi = asin(s) / s vee(skew R)`` with ``s = |vee(skew R)|`` (series below ``s = 1e-3``;
    finite derivatives at the identity)."""
    vee = 0.5 * jnp.stack([rotation[2, 1] - rotation[1, 2], rotation[0, 2] - rotation[2, 0],
                           rotation[1, 0] - rotation[0, 1]])
    s_sq = vee @ vee
    small = s_sq < 1e-6
    s = jnp.sqrt(jnp.where(small, 1.0, s_sq))
    factor = jnp.where(small, 1.0 + s_sq / 6.0 + 3.0 * s_sq**2 / 40.0, jnp.arcsin(jnp.minimum(s, 1.0)) / s)
    return factor * vee


class TubeSection(eqx.Module):
    """Circular tube: Young's modulus [Pa], Poisson's ratio, density [kg/m^3], inner diameter and wall
    thickness [m]."""

    young: Float[Array, ""]
    poisson: Float[Array, ""]
    density: Float[Array, ""]
    inner_diameter: Float[Array, ""]
    thickness: Float[Array, ""]

    def __init__(self, young, poisson, density, inner_diameter, thickness):
        self.young = jnp.asarray(young, float)
        self.poisson = jnp.asarray(poisson, float)
        self.density = jnp.asarray(density, float)
        self.inner_diameter = jnp.asarray(inner_diameter, float)
        self.thickness = jnp.asarray(thickness, float)

    @property
    def radii(self) -> tuple[Float[Array, ""], Float[Array, ""]]:
        inner = 0.5 * self.inner_diameter
        return inner, inner + self.thickness

    @property
    def mid_radius(self) -> Float[Array, ""]:
        return 0.5 * (self.inner_diameter + self.thickness)

    @property
    def area(self) -> Float[Array, ""]:
        inner, outer = self.radii
        return jnp.pi * (outer**2 - inner**2)

    @property
    def second_moment(self) -> Float[Array, ""]:
        inner, outer = self.radii
        return 0.25 * jnp.pi * (outer**4 - inner**4)

    @property
    def shear_modulus(self) -> Float[Array, ""]:
        return self.young / (2.0 * (1.0 + self.poisson))

    @property
    def shear_coefficient(self) -> Float[Array, ""]:
        """Cowper's ``kappa`` of a thin-walled circular tube."""
        return 2.0 * (1.0 + self.poisson) / (4.0 + 3.0 * self.poisson)


def tip_compliance(section: TubeSection, length) -> Float[Array, "6 6"]:
    """Compliance of the clamped-free Timoshenko beam along local ``z`` for the tip ``[d; phi]`` (module
    docstring)."""
    e, g, a, i = section.young, section.shear_modulus, section.area, section.second_moment
    length = jnp.asarray(length, float)
    bend = length**3 / (3.0 * e * i) + length / (section.shear_coefficient * g * a)
    couple, tilt = length**2 / (2.0 * e * i), length / (e * i)
    c = jnp.zeros((6, 6))
    c = c.at[0, 0].set(bend).at[1, 1].set(bend).at[2, 2].set(length / (e * a))
    c = c.at[3, 3].set(tilt).at[4, 4].set(tilt).at[5, 5].set(length / (g * 2.0 * i))
    c = c.at[0, 4].set(couple).at[4, 0].set(couple).at[1, 3].set(-couple).at[3, 1].set(-couple)
    return c


class BeamInterface(eqx.Module):
    """Timoshenko tube of ``length`` between a root and a tip frame (module docstring); ``damping`` is the
    Kelvin-Voigt coefficient ``beta`` [s]."""

    section: TubeSection
    length: Float[Array, ""]
    damping: Float[Array, ""]

    def __init__(self, section: TubeSection, length, damping=0.0):
        self.section = section
        self.length = jnp.asarray(length, float)
        self.damping = jnp.asarray(damping, float)

    def stiffness(self) -> Float[Array, "6 6"]:
        """Tip stiffness ``K = C^{-1}`` (root axes, beam axis local ``z``)."""
        return jnp.linalg.inv(tip_compliance(self.section, self.length))

    def deformation(self, root_axes, root_origin, tip_axes, tip_origin) -> Float[Array, "6"]:
        """``[d; phi]`` of the tip relative to the root (module docstring); the frames' third axis is the
        beam axis."""
        d = root_axes.T @ (tip_origin - root_origin) - self.length * jnp.array([0.0, 0.0, 1.0])
        return jnp.concatenate([d, rotation_vector(root_axes.T @ tip_axes)])

    def energy(self, root_axes, root_origin, tip_axes, tip_origin) -> Float[Array, ""]:
        """Strain energy ``1/2 [d; phi]^T K [d; phi]`` [J]."""
        x = self.deformation(root_axes, root_origin, tip_axes, tip_origin)
        return 0.5 * x @ self.stiffness() @ x

    def dissipation(self, frames, frame_rates) -> Float[Array, ""]:
        """``D = beta / 2 x_dot^T K x_dot`` for ``frames = (R_a, o_a, R_b, o_b)`` and their time derivatives
        (tuples)."""
        _, rate = jax.jvp(lambda *f: self.deformation(*f), tuple(frames), tuple(frame_rates))
        return 0.5 * self.damping * rate @ self.stiffness() @ rate


__all__ = ["BeamInterface", "TubeSection", "rotation_vector", "tip_compliance"]
