r"""Lumped-mass flexible wire rope (seed: Cai et al. 2021, Aerospace 8:381, Section 3.1) and its contact
with a rigid cylindrical grapple shaft.

Discretisation (paper Fig. 2). ``N`` sections join ``N + 1`` nodes (the paper's ``B_1 .. B_{N+1}``; with
30 sections node 16 is the middle). Node masses follow the lumped-mass rule, Eq. (17),

.. math:: m_1 = \tfrac12\rho\hat l_1,\quad m_i = \tfrac12\rho(\hat l_{i-1} + \hat l_i),\quad m_{N+1} = \tfrac12\rho\hat l_N,

which for equal sections is Eq. (18): ``m_tot / (2N)`` at the ends and ``m_tot / N`` inside. The state is
the nodes' Cartesian positions and velocities (the paper writes the same equations in deflection/pitch/
length coordinates, Eqs. (19)-(34); Cartesian coordinates give the identical Newton equations (24) without
the coordinate singularities). The end nodes are prescribed (fixed-ring and rotating-ring points).

End conditions (``Rope.end_condition``). The paper's model has bending springs at the interior nodes
only: the ends are **pinned** (``"pinned"``, the default), free to turn about their attachment points.
With ``"clamped"`` the rope's ends are held in fittings whose axes are prescribed unit directions
``t_A`` (at node 1, pointing into the rope) and ``t_B`` (at node N+1, pointing out of the rope, i.e. in node
order), passed with the end positions as ``attach = [t_A, t_B]`` (shape (2, 3); they may move, e.g. with a
rotating ring, with rate ``attach_rate``). Each clamp is one more bending spring of the same ``k_tor`` and
``c_tor``, unstressed when the end section lies along the fitting axis:

.. math:: V_\mathrm{clamp} = \tfrac12 k_{tor}\,(|\phi_A|^2 + |\phi_B|^2),\qquad
          \phi_A = \angle(t_A \to e_1),\quad \phi_B = \angle(e_N \to t_B),

with ``e_1``, ``e_N`` the unit first and last sections and ``angle(a -> b)`` the rotation vector of
:func:`bend_vectors`. The rope exerts the moment ``M_A = k_tor phi_A`` on fitting A and ``M_B = -k_tor phi_B``
on fitting B (:meth:`Rope.end_moments`; these are ``-dV/dtheta`` for a rotation ``theta`` of the fitting).
(A continuum-consistent clamp of a chain whose interior springs are ``k_tor = EI / l`` would be ``2 k_tor``,
the bend being concentrated in a half cell; we keep the same ``k_tor``: the clamp is a node like the others.)

Elastic elements (potential ``V = V_axial + V_bend``; conservative forces are ``-dV/dx``: in the dynamics in
closed form (:meth:`Rope.forces`), in the statics assembled from per-element autodiff in
:mod:`diffspace.bodies.rope_elements`; their Hessian, the stiffness matrix, in closed form and banded in
:mod:`diffspace.bodies.rope_stiffness`):

* **axial spring with damping**, Eq. (26): ``T_i = k_tes dl_i + c_tes dl_i/dt`` along section ``i``.
  The paper's spring acts only in tension. **Compression.** A chain of tension-only springs whose ends are
  closer than its length (0.26 m vs 0.30 m in the paper's snare) has a zero-energy collapse mode: every
  section shortens at constant bend angles (the rest shape shrunk to fit the end distance), so it carries
  no bending preload and no stiffness against the shaft. A real 1 cm piece of 3 mm wire rope is far shorter
  than its Euler length and resists axial compression with roughly its tensile rigidity. We therefore use
  ``k_tes`` (and ``c_tes``) scaled by ``compression_ratio`` for shortening (default 1: symmetric; 0 gives
  the paper's pure tension-only spring, used for the straight-rope test).
* **bending (torsional) spring** at every interior node, Eqs. (37)-(39): ``M_i = k_tor (beta_i - beta_i0)``.
  In 3D the bend at node ``i`` is the rotation vector ``phi_i = beta_i b_i`` that turns section ``i - 1``
  into section ``i`` (``b_i`` the unit binormal); the rest bend ``phi_i0 = beta_i0 n`` lies along the
  snare-plane normal ``n``, so for planar shapes ``V_bend = sum k_tor (beta_i - beta_i0)^2 / 2`` with signed
  angles, exactly the paper's law. (There is no twist state: out-of-plane bending of a naturally curved
  rope is approximated by this fixed-axis rest curvature.) Optional bending damping ``c_tor dphi/dt``.

Contact with the grapple shaft: a cylinder of radius ``r_s`` with axis through ``p`` along ``a``;
node ``i`` is indented by ``delta_i = r_s + r_rope - |(I - a a^T)(x_i - p)|`` and feels the
:class:`~diffspace.contact.ContactLaw` force along the outward axis-to-node normal; the shaft feels the
opposite sum. Any node can touch.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Float

from ..contact.forces import ContactLaw
from ..core.newton import newton_root
from ..core.spatial import safe_norm
from .rope_elements import axial_gain, bend_linearisation, bend_vector, section_energies, triple_energies, triple_points
from .rope_stiffness import stiff_gradient, stiffness_bands

END_CONDITIONS = ("pinned", "clamped")


def node_masses(linear_density: ArrayLike, rest_lengths: Float[ArrayLike, " N"]) -> Float[Array, " N1"]:
    """Lumped node masses of Eq. (17) (``rho_lin`` in kg/m, section rest lengths in m) -> ``(N + 1,)``."""
    half = 0.5 * jnp.asarray(linear_density, float) * jnp.asarray(rest_lengths, float)
    return jnp.concatenate([half, jnp.zeros(1)]) + jnp.concatenate([jnp.zeros(1), half])


def bend_vectors(x: Float[Array, "N1 3"]) -> Float[Array, "Nm1 3"]:
    """Rotation vectors ``phi_i = beta_i b_i`` at the interior nodes (Eq. (37) angles, with direction;
    :func:`~diffspace.bodies.rope_elements.bend_vector`)."""
    return bend_vector(x[:-2], x[1:-1], x[2:])


def clamp_bend_vectors(x: Float[Array, "N1 3"], attach: Float[Array, "2 3"]) -> Float[Array, "2 3"]:
    """Rotation vectors ``phi_A`` (fitting axis ``t_A`` -> first section) and ``phi_B`` (last section ->
    fitting axis ``t_B``) of the two clamps; ``attach = [t_A, t_B]`` in node order (see the module notes)."""
    return bend_vector(jnp.stack([x[0] - attach[0], x[-2]]), jnp.stack([x[0], x[-1]]), jnp.stack([x[1], x[-1] + attach[1]]))


class Rope(eqx.Module):
    """Rope parameters (arrays, differentiable). Shapes: ``N`` sections, ``N + 1`` nodes.

    ``rest_lengths`` (N,) [m]; ``masses`` (N+1,) [kg], Eq. (17); ``axial_stiffness`` k_tes [N/m] (scalar or per
    section) and ``axial_damping`` c_tes [N s/m], Eq. (26); ``compression_ratio`` (0 = tension-only, 1 =
    symmetric); ``bending_stiffness`` k_tor [N m/rad] and ``bending_damping`` c_tor [N m s/rad] per interior
    node, Eq. (39); ``rest_bend`` (N-1, 3) rest rotation vectors ``beta_i0 n`` [rad]; ``radius`` [m];
    ``clamp_ratio``: the clamps' bending spring and dashpot over ``k_tor``, ``c_tor`` (1: a clamp is a node like the
    others; 0: a clamped rope whose fittings hold nothing, the pinned rope on the clamped rope's arrays);
    ``end_condition`` (static) ``"pinned"`` or ``"clamped"`` (then energies and forces need ``attach``).
    """

    rest_lengths: Float[Array, " N"]
    masses: Float[Array, " N1"]
    axial_stiffness: Float[Array, "*N"]
    axial_damping: Float[Array, ""]
    compression_ratio: Float[Array, ""]
    bending_stiffness: Float[Array, ""]
    bending_damping: Float[Array, ""]
    rest_bend: Float[Array, "Nm1 3"]
    radius: Float[Array, ""]
    clamp_ratio: Float[Array, ""] = eqx.field(default=1.0, converter=jnp.asarray)
    end_condition: str = eqx.field(static=True, default="pinned")

    def __check_init__(self):
        if self.end_condition not in END_CONDITIONS:
            raise ValueError(f"end_condition must be one of {END_CONDITIONS}, got {self.end_condition!r}")

    @classmethod
    def uniform(cls, length, n_sections: int, linear_density, axial_rigidity, bending_stiffness,
                rest_bend_total=0.0, plane_normal=(0.0, 0.0, 1.0), axial_damping=0.0, bending_damping=0.0,
                compression_ratio=1.0, radius=0.0015, end_condition="pinned") -> "Rope":
        """Equal sections: ``k_tes = EA / l0`` (per section) from the axial rigidity ``EA`` [N]; the rest bend
        ``rest_bend_total`` [rad] is shared equally by the ``N - 1`` interior nodes about ``plane_normal``."""
        n = int(n_sections)
        l0 = jnp.asarray(length, float) / n
        rest = jnp.full((n,), 1.0) * l0
        normal = jnp.asarray(plane_normal, float)
        normal = normal / jnp.linalg.norm(normal)
        beta0 = jnp.asarray(rest_bend_total, float) / (n - 1)
        f = lambda v: jnp.asarray(v, float)  # noqa: E731
        return cls(rest, node_masses(linear_density, rest), f(axial_rigidity) / rest, f(axial_damping),
                   f(compression_ratio), f(bending_stiffness), f(bending_damping),
                   jnp.broadcast_to(beta0 * normal, (n - 1, 3)), f(radius), end_condition=end_condition)

    @property
    def n_sections(self) -> int:
        return self.rest_lengths.shape[0]

    # ------------------------------------------------------------------ energies
    def _axial_gain(self, stretch):
        return axial_gain(stretch, self.compression_ratio)

    @property
    def clamped(self) -> bool:
        return self.end_condition == "clamped"

    def fittings(self, attach) -> Float[Array, "2 3"] | None:
        """The fitting axes as an array (``None`` for a pinned rope); a clamped rope needs them."""
        if not self.clamped:
            return None
        if attach is None:
            raise ValueError("a clamped rope needs its fitting axes: pass attach = [t_A, t_B] (shape (2, 3))")
        return jnp.asarray(attach, float)

    def _bends(self, x, attach) -> Float[Array, "M 3"]:
        """Bend rotation vectors of every bend triple: interior nodes, then (clamped) the two clamps."""
        points = triple_points(x, self.fittings(attach), self.clamped)
        return bend_vector(points[:, 0], points[:, 1], points[:, 2])

    def rest_bends(self) -> Float[Array, "M 3"]:
        """Rest rotation vectors of the bend triples (the clamps' are zero)."""
        return jnp.concatenate([self.rest_bend, jnp.zeros((2, 3))]) if self.clamped else self.rest_bend

    def triple_springs(self, rate) -> Float[Array, " M"]:
        """A bending spring or dashpot ``rate`` (``k_tor`` or ``c_tor``) of every bend triple: the interior nodes',
        then (clamped) the two clamps' (times ``clamp_ratio``)."""
        inner = jnp.broadcast_to(rate, (self.n_sections - 1,))
        return jnp.concatenate([inner, jnp.broadcast_to(rate * self.clamp_ratio, (2,))]) if self.clamped else inner

    def chain_springs(self, rate) -> Float[Array, " M"]:
        """:meth:`triple_springs` in the order of the :meth:`chain`'s triples (clamp A, interior nodes, clamp B)."""
        springs = self.triple_springs(rate)
        return jnp.concatenate([springs[-2:-1], springs[:-2], springs[-1:]]) if self.clamped else springs

    def axial_energy(self, x: Float[Array, "N1 3"]) -> Float[Array, ""]:
        """``sum k(dl) dl^2 / 2``, ``dl = |x_{i+1} - x_i| - l_i`` (Eq. (26) without damping)."""
        return jnp.sum(section_energies(self, x))

    def bending_energy(self, x: Float[Array, "N1 3"], attach=None) -> Float[Array, ""]:
        """``sum k_tor |phi_i - phi_i0|^2 / 2`` (Eq. (39)), plus the clamps' ``k_tor |phi|^2 / 2`` if clamped."""
        return jnp.sum(triple_energies(self, x, self.fittings(attach)))

    def elastic_energy(self, x: Float[Array, "N1 3"], attach=None) -> Float[Array, ""]:
        return self.axial_energy(x) + self.bending_energy(x, attach)

    def end_moments(self, x: Float[Array, "N1 3"], attach=None) -> Float[Array, "2 3"]:
        """Moments [N m] the rope exerts on fittings A and B: ``k_tor phi_A``, ``-k_tor phi_B`` (zero if pinned)."""
        if not self.clamped:
            return jnp.zeros((2, 3))
        phi = self._bends(x, attach)[-2:]
        return self.triple_springs(self.bending_stiffness)[-2:, None] * phi * jnp.array([[1.0], [-1.0]])

    def kinetic_energy(self, v: Float[Array, "N1 3"]) -> Float[Array, ""]:
        return 0.5 * jnp.sum(self.masses[:, None] * v * v)

    # ------------------------------------------------------------------ forces
    def tensions(self, x, v) -> Float[Array, " N"]:
        """Section forces ``T_i = g (k_tes dl_i + c_tes dl_i/dt)`` [N] (Eq. (26); > 0 pulls the ends together)."""
        d, dv = x[1:] - x[:-1], v[1:] - v[:-1]
        length = safe_norm(d)
        stretch = length - self.rest_lengths
        rate = jnp.sum(d * dv, axis=-1) / length
        return self._axial_gain(stretch) * (self.axial_stiffness * stretch + self.axial_damping * rate)

    def chain(self, x, attach):
        """The points whose consecutive triples are the bend triples: the nodes, and for a clamped rope the
        fitting offsets ``x_1 - t_A`` before and ``x_{N+1} + t_B`` after them (clamp A, interior nodes, clamp B)."""
        if not self.clamped:
            return x
        return jnp.concatenate([x[..., :1, :] - attach[..., :1, :], x, x[..., -1:, :] + attach[..., 1:, :]], axis=-2)

    def chain_rest_bends(self) -> Float[Array, "M 3"]:
        """Rest rotation vectors of the :meth:`chain`'s consecutive triples (the clamps' are zero)."""
        return jnp.pad(self.rest_bend, ((1, 1), (0, 0))) if self.clamped else self.rest_bend

    def forces(self, x: Float[Array, "*R N1 3"], v: Float[Array, "*R N1 3"], attach=None,
               attach_rate=None) -> tuple[Float[Array, "*R N1 3"], Float[Array, "*R N1 3"]]:
        """Elastic (``-dV/dx``) and damping forces on every node (leading axes broadcast, e.g. over ropes), in
        closed form: each section's tension ``T`` (Eq. (26)) along it, and the bending moments
        ``k_tor (phi - phi_0)`` and ``c_tor dphi/dt`` (Eqs. (37)-(39); the clamps' ``dphi/dt`` relative to fittings
        turning at ``attach_rate``) through the transpose of ``dphi/dx``
        (:func:`~diffspace.bodies.rope_elements.bend_linearisation`). Equal to the energy gradient and the
        autodiff dashpot forces to round-off (``tests/test_rope.py``)."""
        attach = self.fittings(attach)
        d, dv = x[..., 1:, :] - x[..., :-1, :], v[..., 1:, :] - v[..., :-1, :]
        length = safe_norm(d)[..., None]
        u = d / length
        stretch = length - self.rest_lengths[:, None]
        gain = self._axial_gain(stretch)
        stiffness = jnp.broadcast_to(self.axial_stiffness, self.rest_lengths.shape)[:, None]

        def on_nodes(tension):  # a tension pulls a section's two nodes together
            return pad_nodes(tension * u, 0, 1) - pad_nodes(tension * u, 1, 0)

        rate_ends = None if attach is None else jnp.zeros_like(attach) if attach_rate is None else attach_rate
        p, p_dot = self.chain(x, attach), self.chain(v, rate_ends)
        phi, phi_dot, transpose = bend_linearisation(p[..., :-2, :], p[..., 1:-1, :], p[..., 2:, :],
                                                     p_dot[..., :-2, :], p_dot[..., 1:-1, :], p_dot[..., 2:, :])
        rest = self.chain_rest_bends()

        def bending(moment):  # -(dphi/dx)^T moment on the chain's points, folded onto the nodes
            ga, gb, gc = transpose(moment)
            f = -(pad_nodes(ga, 0, 2) + pad_nodes(gb, 1, 1) + pad_nodes(gc, 2, 0))
            if not self.clamped:
                return f
            n1 = x.shape[-2]
            return pad_nodes(f[..., :1, :], 0, n1 - 1) + f[..., 1:-1, :] + pad_nodes(f[..., -1:, :], n1 - 1, 0)

        k_tor, c_tor = (self.chain_springs(rate)[:, None] for rate in (self.bending_stiffness, self.bending_damping))
        elastic = on_nodes(gain * stiffness * stretch) + bending(k_tor * (phi - rest))
        damping = on_nodes(gain * self.axial_damping * jnp.sum(u * dv, axis=-1, keepdims=True))
        return elastic, damping + bending(c_tor * phi_dot)

    def damping_forces(self, x, v, attach=None, attach_rate=None) -> Float[Array, "N1 3"]:
        """Nodal forces of the axial dashpots ``c_tes dl/dt`` and the bending dashpots ``c_tor dphi/dt`` (the
        clamps' ``dphi/dt`` relative to fittings turning at ``attach_rate``; :meth:`forces`)."""
        return self.forces(x, v, attach, attach_rate)[1]

    def internal_forces(self, x, v, attach=None, attach_rate=None) -> Float[Array, "N1 3"]:
        """Elastic (``-dV/dx``) plus damping forces on every node (:meth:`forces`)."""
        elastic, damping = self.forces(x, v, attach, attach_rate)
        return elastic + damping


def pad_nodes(f: Float[Array, "*R M 3"], before: int, after: int) -> Float[Array, "*R K 3"]:
    """``f`` with ``before`` and ``after`` zero rows on its node axis (the second to last)."""
    return jnp.pad(f, [(0, 0)] * (f.ndim - 2) + [(before, after), (0, 0)])


def assemble(x_inner: Float[Array, "Nm1 3"], first: Float[Array, "3"], last: Float[Array, "3"]) -> Float[Array, "N1 3"]:
    """All node positions (or velocities) from the interior ones and the two prescribed ends."""
    return jnp.concatenate([first[None], x_inner, last[None]])


def rope_accelerations(rope: Rope, x, v, external: Float[Array, "N1 3"] | None = None, attach=None,
                       attach_rate=None) -> Float[Array, "Nm1 3"]:
    """Newton's law (Eq. (24)) for the interior nodes, given all node positions/velocities and external forces
    (and, for a clamped rope, the fitting axes ``attach`` (2, 3) and their rates)."""
    f = rope.internal_forces(x, v, attach, attach_rate)
    if external is not None:
        f = f + external
    return f[1:-1] / rope.masses[1:-1, None]


def total_energy(rope: Rope, x, v, attach=None) -> Float[Array, ""]:
    """Kinetic + axial + bending (+ clamp) energy [J]."""
    return rope.kinetic_energy(v) + rope.elastic_energy(x, attach)


# ---------------------------------------------------------------------------------------------- statics
def static_residual(rope: Rope, x_inner, first, last, external=None, attach=None) -> Float[Array, "Nm1 3"]:
    """Static force balance of the interior nodes, Eqs. (35)/(40): ``-dV/dx_i + F_i`` (zero at equilibrium)."""
    g = -stiff_gradient(rope, assemble(x_inner, first, last), rope.fittings(attach))[1:-1]
    return g if external is None else g + external


def _equilibrium_residual(x_inner, args):
    rope, first, last, external, attach = args
    return static_residual(rope, x_inner, first, last, external, attach) / jnp.mean(rope.axial_stiffness)


def _inner_stiffness(rope: Rope, x_inner, first, last, attach):
    """Banded stiffness of the interior nodes (the ends are prescribed)."""
    return stiffness_bands(rope, assemble(x_inner, first, last), rope.fittings(attach)).inner()


def _equilibrium_step(x_inner, args, b):
    """``J^{-1} b`` for the Jacobian ``J = -K / k`` of :func:`_equilibrium_residual`."""
    rope, first, last, _, attach = args
    return -jnp.mean(rope.axial_stiffness) * _inner_stiffness(rope, x_inner, first, last, attach).solve(b)


def _newton_tolerances(rope: Rope, tol: float) -> dict:
    return {"rtol": tol, "atol": tol * jnp.mean(rope.rest_lengths)}


def equilibrium(rope: Rope, x_guess, first, last, external=None, *, attach=None, tol: float = 1e-12,
                max_steps: int = 64):
    """Interior node positions in static equilibrium (Eqs. (35)-(36)): Newton on :func:`static_residual`
    (scaled by the mean axial stiffness ``k``) with the banded stiffness solve (:mod:`diffspace.core.newton`,
    :mod:`diffspace.bodies.rope_stiffness`; differentiable in ``rope``/ends/loads by the implicit function
    theorem). Returns ``(x_inner, ok)``; start from a nearby shape (e.g. a circular arc of the rope's length).
    ``attach``: the fitting axes of a clamped rope."""
    return newton_root(_equilibrium_residual, _equilibrium_step, x_guess, (rope, first, last, external, attach),
                       max_steps=max_steps, **_newton_tolerances(rope, tol))


def _pressed_residual(z, args):
    rope, first, last, attach, node, u, target, control = args
    x_inner, force = z
    external = jnp.zeros_like(x_inner).at[node - 1].set(control * force * u)
    scale = jnp.mean(rope.axial_stiffness)
    row = control * (x_inner[node - 1] @ u - target) + (1.0 - control) * force
    return static_residual(rope, x_inner, first, last, external, attach) / scale, row / scale


def _pressed_step(z, args, b):
    """``J^{-1} b`` for the symmetric bordered Jacobian ``[[-K, alpha c], [alpha c^T, 1 - alpha]] / k`` of
    :func:`_pressed_residual` (``c = u e_n``, ``alpha`` the control): with ``a = -k K^{-1} b_1`` and
    ``s = K^{-1} c``, ``dF = (k b_2 - alpha c . a) / (alpha^2 c . s + 1 - alpha)`` and ``dx = a + alpha dF s``."""
    rope, first, last, attach, node, u, _, control = args
    c = jnp.zeros_like(z[0]).at[node - 1].set(u)
    a, s = jnp.moveaxis(_inner_stiffness(rope, z[0], first, last, attach).solve(
        jnp.stack([-jnp.mean(rope.axial_stiffness) * b[0], c], axis=-1)), -1, 0)
    d_force = ((jnp.mean(rope.axial_stiffness) * b[1] - control * jnp.sum(c * a))
               / (control**2 * jnp.sum(c * s) + (1.0 - control)))
    return a + control * d_force * s, d_force


def pressed_equilibrium(rope: Rope, x_start, first, last, node: int, direction, depth, *, attach=None,
                        control=1.0, tol: float = 1e-12, max_steps: int = 64):
    r"""Equilibrium with node ``node`` (0-based, interior) displaced by ``depth`` along ``direction`` from its
    position in ``x_start`` (displacement control, paper Eq. (40) solved for ``F_c``).

    Unknowns ``(x_inner, F_c)``; equations ``-dV/dx + alpha F_c u e_n = 0`` and
    ``alpha ((x_n - x_n^0) . u - depth) + (1 - alpha) F_c = 0`` (both over the mean axial stiffness, which makes the
    Jacobian symmetric; the second holds after the first step) with the ``control`` ``alpha = 1``; ``alpha = 0``
    gives the free equilibrium (``F_c = 0``, the iterates of :func:`equilibrium`), so that one compiled Newton step
    serves a loop that solves both. Unlike force control this also follows a softening branch past its limit load.
    Newton as in :func:`equilibrium`, the bordered Jacobian solved by two banded solves. Returns
    ``(x_inner, F_c, ok)``.
    """
    u = jnp.asarray(direction, float)
    target = x_start[node - 1] @ u + depth
    z0 = (x_start, jnp.zeros(()))
    args = (rope, first, last, attach, node, u, target, jnp.asarray(control, float))
    (x_inner, force), ok = newton_root(_pressed_residual, _pressed_step, z0, args, max_steps=max_steps,
                                       **_newton_tolerances(rope, tol))
    return x_inner, force, ok


# ---------------------------------------------------------------------------------------------- contact
class Shaft(eqx.Module):
    """Rigid cylindrical grapple shaft: ``radius`` [m] and unit ``axis`` direction (world)."""

    radius: Float[Array, ""]
    axis: Float[Array, "3"]

    def __init__(self, radius, axis=(0.0, 0.0, 1.0)):
        self.radius = jnp.asarray(radius, float)
        a = jnp.asarray(axis, float)
        self.axis = a / jnp.linalg.norm(a)

    def indentation(self, rope: Rope, x, point) -> tuple[Float[Array, " N1"], Float[Array, "N1 3"]]:
        """``delta_i = r_s + r_rope - dist(x_i, axis)`` and the unit outward normals (axis -> node)."""
        r = x - point
        radial = r - (r @ self.axis)[:, None] * self.axis
        dist = safe_norm(radial)
        normal = radial / jnp.where(dist > 0.0, dist, 1.0)[:, None]
        return self.radius + rope.radius - dist, normal

    def forces(self, law: ContactLaw, rope: Rope, x, v, point, velocity, impact_speed):
        """Contact forces on the nodes ``(N+1, 3)`` (the shaft feels minus their sum) and their magnitudes."""
        delta, normal, delta_dot = self._approach(rope, x, v, point, velocity)
        magnitudes = law.force(delta, delta_dot, impact_speed)
        return magnitudes[:, None] * normal, magnitudes

    def contact(self, law: ContactLaw, rope: Rope, x, v, point, velocity, impact_speed) -> "NormalContact":
        """:meth:`forces` with the outward normals and the force's derivatives in the indentation and its rate
        (forward mode, one pass with the force): :class:`NormalContact`."""
        delta, normal, delta_dot = self._approach(rope, x, v, point, velocity)
        force = lambda d, r: law.force(d, r, impact_speed)  # noqa: E731
        mag, rate = jax.jvp(force, (delta, delta_dot), (jnp.zeros_like(delta), jnp.ones_like(delta_dot)))
        _, spring = jax.jvp(force, (delta, delta_dot), (jnp.ones_like(delta), jnp.zeros_like(delta_dot)))
        return NormalContact(mag[:, None] * normal, mag, normal, rate, spring)

    def _approach(self, rope: Rope, x, v, point, velocity):
        """Indentations, outward normals and indentation rates of the nodes ``x`` (velocities ``v``) against the
        shaft at ``point`` moving with ``velocity``."""
        delta, normal = self.indentation(rope, x, point)
        return delta, normal, -jnp.sum(normal * (v - velocity), axis=-1)


class NormalContact(eqx.Module):
    """Shaft contact at points ``x`` (:meth:`Shaft.contact`): ``forces`` ``F n`` [N] on the points, ``magnitudes``
    ``F``, outward unit ``normals`` ``n``, and ``damping`` ``dF/d delta_dot`` [N s/m] and ``stiffness``
    ``dF/d delta`` [N/m]. Each point's normal blocks ``(dF/d delta_dot) n n^T`` and ``(dF/d delta) n n^T`` are the
    Jacobians ``-df/dv`` and, without the tangential (geometric) stiffness ``-F (I - n n^T - a a^T) / dist``,
    ``-df/dx`` of its force in its own velocity and position."""

    forces: Float[Array, "P 3"]
    magnitudes: Float[Array, " P"]
    normals: Float[Array, "P 3"]
    damping: Float[Array, " P"]
    stiffness: Float[Array, " P"]

    def blocks(self, h) -> Float[Array, "P 3 3"]:
        """The points' effective blocks ``(dF/d delta_dot + h/2 dF/d delta) n n^T`` (``G = C + h/2 K``,
        :mod:`~diffspace.bodies.rope_stepping`)."""
        rate = self.damping + 0.5 * h * self.stiffness
        return rate[:, None, None] * self.normals[:, :, None] * self.normals[:, None, :]
