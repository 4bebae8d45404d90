r"""One wire rope of a space snare between its two rings: geometry, installed shape and static contact stiffness
(seed: Cai et al. 2021, Aerospace 8:381, Sections 3.1.2 and 3.2). The impacts are in
:mod:`diffspace.bodies.snare_impact`.

Geometry (paper Figs. 5 and 7). Fixed and rotating rings share the plane ``z = 0`` and the radius ``R_cm``,
centred at the origin. A rope runs from its fixed-ring point ``A`` to its rotating-ring point ``B``; the chord
is symmetric about the ``-y`` axis at ``y = -R cos(gamma)``, ``d_se = 2 R sin(gamma)`` (paper:
``d_se`` in ``[2 R sin(gamma_0), 2 R]``). Turning the rotating ring by ``psi(t) = rate t`` moves ``B`` along
the ring. The rope bows towards the ring centre (+y), where the grapple shaft (axis along z) is, so the shaft
pushes a rope *against* its bow (``approach = "against_bow"``): the rope softens as it is pushed flat.
``"along_bow"`` (shaft outside the loop) is kept for comparison: there the rope goes taut within ~1 cm.

End fittings (``rope.end_condition = "clamped"``, :mod:`diffspace.bodies.rope`) are fixed to their rings.
With ``c_X = -X / |X|`` the inward ring radius at end ``X`` and ``Rz`` a rotation about the ring axis (+z),
the fitting axes (along the rope, node order) are ``t_A = Rz(-alpha_A) c_A`` and ``t_B = -Rz(alpha_B) c_B``:
``t_B`` turns with the rotating ring (and with ``d_se``). ``SnareRings.attach_angles`` come from an
**unstressed installation** (:func:`install_clamps`): laid in at ``d_se(t = 0)`` with free ends, the rope
settles into the pinned equilibrium and the fittings are tightened along its end sections (``t_A = e_1``,
``t_B = e_N``), so the installed shape is the same for both end conditions and the clamps add only stiffness
(and moments once the ring turns). A fitting along the rest-curvature tangent would pre-load the ends
arbitrarily: the 26 deg rest bend cannot span d_se = 0.26 m with a 0.30 m rope.

Virtual spring (Section 3.2): static displacement-controlled solves at node ``n`` give ``F_c(delta_v)``
(Eqs. (40)-(41), :func:`pressing_curve`); :func:`virtual_spring` fits the polynomial of
:mod:`diffspace.contact.virtual_spring` over ``F_c in [0, F_A]``. The linearised stiffness at every node is
``k_v(0) = 1 / (u^T K^-1 u)`` with ``K`` the Hessian of the elastic energy, the banded stiffness of
:mod:`diffspace.bodies.rope_stiffness` (:func:`stiffness_profile`).
"""

from __future__ import annotations

import dataclasses

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from ..contact.forces import AbstractContactLaw
from ..contact.virtual_spring import fit_polynomial
from .rope import Rope, Shaft, assemble, equilibrium, pressed_equilibrium
from .rope_stiffness import stiffness_bands

APPROACHES = ("against_bow", "along_bow")


class SnareRings(eqx.Module):
    """Where one rope of the snare is held: ring radius ``R`` [m], end distance at ``t = 0`` [m], ring rate
    [rad/s] and the fitting angles ``(alpha_A, alpha_B)`` [rad] of clamped ends (module notes; unused if
    pinned)."""

    ring_radius: Float[Array, ""]
    end_distance: Float[Array, ""]
    ring_rate: Float[Array, ""]
    attach_angles: Float[Array, "2"]

    def __init__(self, ring_radius, end_distance, ring_rate=0.0, attach_angles=(0.0, 0.0)):
        self.ring_radius = jnp.asarray(ring_radius, float)
        self.end_distance = jnp.asarray(end_distance, float)
        self.ring_rate = jnp.asarray(ring_rate, float)
        self.attach_angles = jnp.broadcast_to(jnp.asarray(attach_angles, float), (2,))

    def ends(self, t=0.0) -> tuple[Float[Array, "3"], Float[Array, "3"]]:
        """Fixed-ring point ``A`` and rotating-ring point ``B(t)`` (world)."""
        r = self.ring_radius
        g0 = jnp.arcsin(self.end_distance / (2.0 * r))
        a = -0.5 * jnp.pi - g0
        b = -0.5 * jnp.pi + g0 + self.ring_rate * t
        return r * jnp.stack([jnp.cos(a), jnp.sin(a), 0.0 * a]), r * jnp.stack([jnp.cos(b), jnp.sin(b), 0.0 * b])

    def end_states(self, t):
        """``(A, B, dA/dt, dB/dt)`` at time ``t``."""
        (a, b), (va, vb) = jax.jvp(self.ends, (jnp.asarray(t, float),), (jnp.ones(()),))
        return a, b, va, vb

    def attachments(self, t=0.0) -> Float[Array, "2 3"]:
        """Fitting axes ``[t_A, t_B(t)]`` (unit, along the rope in node order), fixed in their rings."""
        a, b = self.ends(t)

        def turn(v, angle):  # rotation about +z
            c, s = jnp.cos(angle), jnp.sin(angle)
            return jnp.stack([c * v[0] - s * v[1], s * v[0] + c * v[1], v[2]])

        al = self.attach_angles
        return jnp.stack([turn(-a / self.ring_radius, -al[0]), -turn(-b / self.ring_radius, al[1])])

    def attachment_states(self, t):
        """``(attach (2, 3), d attach / dt)`` at time ``t``."""
        return jax.jvp(self.attachments, (jnp.asarray(t, float),), (jnp.ones(()),))


class SnareModel(eqx.Module):
    """Everything an impact on one rope needs. Arrays are differentiable; ``length`` and the polynomial
    ``degree`` are static. ``law``: shaft-node contact law (canonical form); ``mass``: effective striking
    mass [kg]; ``virtual_damping``: ``c_v`` [N s/m]; ``fit_depths``: pressing depths of the static solves [m];
    ``fit_max_force``: the force range ``[0, F_A]`` of the polynomial fit [N] (paper Section 3.2, step (1))."""

    rope: Rope
    rings: SnareRings
    shaft: Shaft
    law: AbstractContactLaw
    mass: Float[Array, ""]
    virtual_damping: Float[Array, ""]
    fit_depths: Float[Array, " K"]
    fit_max_force: Float[Array, ""]
    length: float = eqx.field(static=True)
    degree: int = eqx.field(static=True, default=3)
    approach: str = eqx.field(static=True, default="against_bow")


class RopeSpec(eqx.Module):
    """A uniform snare rope's fixed properties (arrays; sizes and end condition static): linear density
    [kg/m], rest bend [deg] (total over the interior nodes, in the ring plane), damping ratios of the
    node-scale axial and bending modes, compression ratio, diameter [m], length [m], sections. The stiffnesses
    (often design variables) are given to :meth:`build`."""

    linear_density: Float[Array, ""]
    rest_bend_total_deg: Float[Array, ""]
    axial_damping_ratio: Float[Array, ""]
    bending_damping_ratio: Float[Array, ""]
    compression_ratio: Float[Array, ""]
    diameter: Float[Array, ""]
    length: float = eqx.field(static=True)
    n_sections: int = eqx.field(static=True)
    end_condition: str = eqx.field(static=True, default="pinned")

    def build(self, axial_rigidity, bending_stiffness) -> Rope:
        """The rope with ``EA`` [N] and ``k_tor`` [N m/rad]; rest bend ``-rest_bend_total_deg`` about +z (bowing
        towards +y between ends on the -y side); dashpots ``c_tes = 2 zeta_a sqrt(k_tes m_i)`` (one section's
        axial mode) and ``c_tor = 2 zeta_b sqrt(k_tor m_i l_0^2)`` (one node's bending mode), ``k_tes = EA / l_0``,
        ``m_i = rho l_0``."""
        l0 = self.length / self.n_sections
        m_node = self.linear_density * l0
        k_tes = jnp.asarray(axial_rigidity, float) / l0
        return Rope.uniform(
            self.length, self.n_sections, self.linear_density, axial_rigidity, bending_stiffness,
            rest_bend_total=-jnp.deg2rad(self.rest_bend_total_deg), plane_normal=(0.0, 0.0, 1.0),
            axial_damping=2.0 * self.axial_damping_ratio * jnp.sqrt(k_tes * m_node),
            bending_damping=2.0 * self.bending_damping_ratio * jnp.sqrt(bending_stiffness * m_node * l0**2),
            compression_ratio=self.compression_ratio, radius=0.5 * self.diameter, end_condition=self.end_condition)


def arc_guess(first, last, length, n_sections: int, bow=(0.0, 1.0, 0.0)) -> Float[Array, "N1 3"]:
    """Nodes of a circular arc of the given length through the two ends, bulging towards ``bow`` (the
    starting guess of the static solve; gradients stopped). Needs ``|last - first| < length``."""
    first, last = jax.lax.stop_gradient((jnp.asarray(first, float), jnp.asarray(last, float)))
    d = jnp.linalg.norm(last - first)

    def newton(theta, _):  # sin(t/2) / (t/2) = d / L
        h = 0.5 * theta
        return theta - (jnp.sin(h) / h - d / length) / (0.5 * (jnp.cos(h) * h - jnp.sin(h)) / h**2), None

    theta, _ = jax.lax.scan(newton, jnp.asarray(2.0), None, length=60)
    radius = length / theta
    s = jnp.linspace(-0.5, 0.5, n_sections + 1) * theta
    ex = (last - first) / d
    bow = jnp.asarray(bow, float)
    ey = bow - (bow @ ex) * ex
    ey = ey / jnp.linalg.norm(ey)
    mid = 0.5 * (first + last)
    return mid + jnp.outer(radius * jnp.sin(s), ex) + jnp.outer(radius * (jnp.cos(s) - jnp.cos(0.5 * theta)), ey)


def initial_shape(model: SnareModel):
    """Static equilibrium shape at ``t = 0`` (Eqs. (35)-(36)): ``(x_all (N+1, 3), converged)``."""
    first, last = model.rings.ends(0.0)
    guess = arc_guess(first, last, model.length, model.rope.n_sections)
    xi, ok = equilibrium(model.rope, guess[1:-1], first, last, attach=model.rings.attachments(0.0))
    return assemble(xi, first, last), ok


def installed_attach_angles(model: SnareModel) -> Float[Array, "2"]:
    """Fitting angles ``(alpha_A, alpha_B)`` of an unstressed installation: the end sections of the *pinned*
    equilibrium at ``t = 0`` (the clamped rope with ``clamp_ratio = 0``) measured from the inward ring radii
    (module notes). Differentiable (through the pinned solve by the implicit function theorem)."""
    return fitting_angles(initial_shape(_holding_nothing(model))[0])


def _holding_nothing(model: SnareModel) -> SnareModel:
    """``model`` with fittings that hold nothing (``clamp_ratio = 0``): the pinned rope on the clamped one's arrays."""
    return eqx.tree_at(lambda m: m.rope.clamp_ratio, model, jnp.zeros(()))


def fitting_angles(x: Float[Array, "N1 3"]) -> Float[Array, "2"]:
    """The angles ``(alpha_A, alpha_B)`` of fittings along the end sections of the nodes ``x`` (module notes)."""

    def angle(u, w):  # signed angle of the rotation u -> w about +z
        return jnp.arctan2(u[0] * w[1] - u[1] * w[0], u @ w)

    e_a, e_b, c_a, c_b = (v / jnp.linalg.norm(v) for v in (x[1] - x[0], x[-1] - x[-2], -x[0], -x[-1]))
    return jnp.stack([angle(e_a, c_a), angle(c_b, -e_b)])


def install_clamps(model: SnareModel) -> SnareModel:
    """``model`` with ``rings.attach_angles`` of an unstressed installation (no-op for pinned ropes)."""
    if model.rope.end_condition != "clamped":
        return model
    return eqx.tree_at(lambda m: m.rings.attach_angles, model, installed_attach_angles(model))


def contact_direction(x: Float[Array, "N1 3"], node, approach: str = "against_bow") -> Float[Array, "3"]:
    """Unit in-plane normal of the rope at ``node`` (0-based): the shaft's approach direction ``u``.
    ``against_bow`` points from the ring centre outwards (the shaft pushes the bow back)."""
    if approach not in APPROACHES:
        raise ValueError(f"approach must be one of {APPROACHES}, got {approach!r}")
    tangent = x[node + 1] - x[node - 1]
    normal = jnp.stack([tangent[1], -tangent[0], 0.0 * tangent[0]])
    normal = normal / jnp.linalg.norm(normal)
    outward = jnp.where(normal @ x[node] > 0.0, 1.0, -1.0)  # ring centre at the origin
    return (1.0 if approach == "against_bow" else -1.0) * outward * normal


def pressing_curve(model: SnareModel, x_eq, node, depths: Float[Array, " K"] | None = None, direction=None):
    """Static contact force ``F_c`` [N] at each pressing depth ``delta_v`` of node ``node`` (0-based) along
    the approach direction (or ``direction``) (Eqs. (40)-(41)): displacement-controlled continuation, a
    ``lax.scan`` over increasing depths, each Newton solve started from the previous shape.
    Returns ``(F_c (K,), converged)``."""
    depths = model.fit_depths if depths is None else depths
    u = contact_direction(x_eq, node, model.approach) if direction is None else jnp.asarray(direction, float)
    steps = _Steps.pressing(model, depths)
    statics = _continuation(model, node, steps, x_eq[1:-1], u, direction is None)
    return statics.forces, statics.forces_converged


class NodeStatics(eqx.Module):
    """A rope's installed ``shape`` (N+1, 3) at ``t = 0``, one node's static pressing ``forces`` (K,) [N] from it
    (Eqs. (40)-(41)), whether each converged, and the fitting angles ``attach_angles`` [rad] of an unstressed
    installation (:func:`installed_attach_angles`; the model's own for a pinned rope)."""

    shape: Float[Array, "N1 3"]
    shape_converged: Array
    forces: Float[Array, " K"]
    forces_converged: Array
    attach_angles: Float[Array, "2"]


def shape_and_pressing_curve(model: SnareModel, node, installed_at=None) -> NodeStatics:
    """:func:`initial_shape` and :func:`pressing_curve` of ``node`` (0-based) from it, as one continuation: its
    first Newton solve is the free equilibrium from the arc guess (:func:`~diffspace.bodies.rope.pressed_equilibrium`
    with control 0), the others press the node, so one compiled Newton step serves both. With ``installed_at`` (an
    end distance [m]; clamped ropes) a first solve installs the clamps there as :func:`install_clamps` does: the
    free equilibrium with fittings that hold nothing, whose end sections set the fittings."""
    install = installed_at is not None and model.rope.clamped
    steps = _Steps.settling(model, installed_at if install else None)
    return _continuation(model, node, steps, None, jnp.zeros(3), True)


class _Steps(eqx.Module):
    """The Newton solves of a continuation, one row each: ``control`` (0: free, 1: pressed), ``clamp_ratio``, the
    rings' ``end_distance`` [m], the pressing ``depth`` [m], whether it ``installs`` the clamps, whether it starts
    from the arc guess (``fresh``); the first ``n_settle`` are free."""

    control: Float[Array, " S"]
    clamp_ratio: Float[Array, " S"]
    end_distance: Float[Array, " S"]
    depth: Float[Array, " S"]
    installs: Array
    fresh: Array
    n_settle: int = eqx.field(static=True, default=0)  # the leading free solves

    @classmethod
    def pressing(cls, model: SnareModel, depths) -> "_Steps":
        ones, no = jnp.ones_like(depths), jnp.zeros(depths.shape, bool)
        return cls(ones, model.rope.clamp_ratio * ones, model.rings.end_distance * ones, depths, no, no)

    @classmethod
    def settling(cls, model: SnareModel, installed_at) -> "_Steps":
        """(install,) settle, press: the clamps' installation at the end distance ``installed_at`` (unless
        ``None``), the free equilibrium and the model's ``fit_depths``."""
        press = cls.pressing(model, model.fit_depths)
        install = installed_at is not None
        ratios = ([jnp.zeros(())] if install else []) + [model.rope.clamp_ratio]
        distances = ([jnp.asarray(installed_at, float)] if install else []) + [model.rings.end_distance]
        n = len(ratios)
        head = cls(jnp.zeros(n), jnp.stack(ratios), jnp.stack(distances), jnp.zeros(n), jnp.arange(n) < int(install),
                   jnp.ones(n, bool))
        rows = jax.tree.map(lambda a, b: jnp.concatenate([a, b]), head, press)
        return dataclasses.replace(rows, n_settle=n)


def _continuation(model: SnareModel, node, steps: _Steps, x_start, u, track_direction: bool) -> NodeStatics:
    """The Newton solves of :func:`~diffspace.bodies.rope.pressed_equilibrium` in a ``lax.scan`` over ``steps``,
    each from the previous shape or (``fresh``) the arc guess (:func:`_fresh_guesses`). A free solve that does not install sets the reference
    shape the depths are measured from and, with ``track_direction``, the approach direction ``u`` there; one that
    installs sets the fitting angles. The shape and its convergence are the last free solve's, the forces the
    pressed ones'."""
    n = model.rope.n_sections

    def body(carry, row):
        step, guess = row
        xi, x_ref, u, angles, shape_ok = carry
        m = eqx.tree_at(lambda t: (t.rope.clamp_ratio, t.rings.end_distance, t.rings.attach_angles), model,
                        (step.clamp_ratio, step.end_distance, angles))
        first, last = m.rings.ends(0.0)
        start = jnp.where(step.fresh, guess, xi)
        shift = (start[node - 1] - x_ref[node - 1]) @ u  # pressed_equilibrium measures from its start shape
        xn, fc, ok = pressed_equilibrium(m.rope, start, first, last, node, u, step.depth - shift,
                                         attach=m.rings.attachments(0.0), control=step.control)
        x_all = assemble(xn, first, last)
        angles = jnp.where(step.installs, fitting_angles(x_all), angles)
        settles = (step.control == 0.0) & ~step.installs
        x_ref, shape_ok = jnp.where(settles, xn, x_ref), jnp.where(settles, ok, shape_ok)
        if track_direction:
            u = jnp.where(settles, contact_direction(x_all, node, model.approach), u)
        return (xn, x_ref, u, angles, shape_ok), (fc, ok)

    x0 = jnp.zeros((n - 1, 3)) if x_start is None else x_start
    carry = (x0, x0, u, model.rings.attach_angles, jnp.asarray(True))
    (_, x_ref, _, angles, shape_ok), (forces, ok) = jax.lax.scan(body, carry, (steps, _fresh_guesses(model, steps)))
    first, last = model.rings.ends(0.0)
    return NodeStatics(assemble(x_ref, first, last), shape_ok, forces[steps.n_settle:], jnp.all(ok[steps.n_settle:]),
                       angles)


def _fresh_guesses(model: SnareModel, steps: _Steps) -> Float[Array, "S Nm1 3"]:
    """The arc guess (:func:`arc_guess`, interior nodes) of each of the leading ``n_settle`` rows at its end distance,
    zeros for the rows that start from the previous shape."""
    n = model.rope.n_sections
    rest = jnp.zeros((steps.depth.shape[0] - steps.n_settle, n - 1, 3))
    if steps.n_settle == 0:
        return rest

    def guess(distance):
        first, last = eqx.tree_at(lambda r: r.end_distance, model.rings, distance).ends(0.0)
        return arc_guess(first, last, model.length, n)[1:-1]

    return jnp.concatenate([jax.vmap(guess)(steps.end_distance[: steps.n_settle]), rest])


class VirtualSpring(eqx.Module):
    """The virtual spring of one node: polynomial ``coefficients`` (``a_1 = k_v(0)``), the static ``forces``
    at ``SnareModel.fit_depths``, the deepest fitted depth ``fit_limit`` [m] and ``converged``."""

    coefficients: Float[Array, " p"]
    forces: Float[Array, " K"]
    fit_limit: Float[Array, ""]
    converged: Array


def virtual_spring(model: SnareModel, x_eq, node) -> VirtualSpring:
    """The paper's virtual spring at ``node`` (0-based): static pressing curve over ``model.fit_depths``
    (:func:`pressing_curve`) and its polynomial (:func:`fit_virtual_spring`)."""
    return fit_virtual_spring(model, *pressing_curve(model, x_eq, node))


def fit_virtual_spring(model: SnareModel, forces: Float[Array, " K"], converged) -> VirtualSpring:
    """The polynomial of a pressing curve ``forces`` at ``model.fit_depths``, fitted to the points up to the
    first one whose force exceeds ``F_A = fit_max_force`` (Section 3.2: fit over ``F_c in [0, F_A]``; a
    softening node that never reaches ``F_A`` uses the whole depth range)."""
    keep = jnp.cumprod(forces <= model.fit_max_force).astype(float)
    keep = keep.at[: model.degree + 1].set(1.0)  # always enough points to determine the polynomial
    limit = jnp.max(jnp.where(keep > 0.0, model.fit_depths, 0.0))
    return VirtualSpring(fit_polynomial(model.fit_depths, forces, model.degree, keep), forces, limit, converged)


def node_table(model: SnareModel, nodes) -> tuple[Float[Array, "K p"], Float[Array, " K"], bool]:
    """Virtual-spring polynomial and fitted depth range of each 1-based node, from the one initial shape and
    one vmapped set of static solves: ``(coefficients (K, degree), fit_limit (K,) [m], converged)``."""
    x_eq, ok_shape = initial_shape(model)
    spring = jax.jit(jax.vmap(lambda node: virtual_spring(model, x_eq, node - 1)))(jnp.asarray(nodes))
    return spring.coefficients, spring.fit_limit, bool(ok_shape) and bool(jnp.all(spring.converged))


def stiffness_profile(model: SnareModel, x_eq) -> Float[Array, " Nm1"]:
    """Linearised virtual-spring stiffness ``k_v(0) = 1 / (u^T K^-1 u)`` [N/m] at every interior node, with
    ``K`` the Hessian of the elastic energy at the initial shape and ``u`` the node's approach direction."""
    n = model.rope.n_sections - 1
    attach = model.rope.fittings(model.rings.attachments(0.0))
    nodes = jnp.arange(1, n + 1)
    u = jax.vmap(lambda node: contact_direction(x_eq, node, model.approach))(nodes)  # (n, 3)
    loads = jnp.eye(n)[:, None, :] * u.T[None]  # column j: u_j on node j, (n, 3, n)
    compliance = stiffness_bands(model.rope, x_eq, attach).inner().solve(loads)
    return 1.0 / jnp.einsum("ja,jaj->j", u, compliance)
