r"""Snare closing: three wire ropes close on a free grapple shaft while the rotating ring turns (capture step 2
of the seed, Cai et al. 2021, Aerospace 8:381, Section 3, Fig. 1: "the rotating ring begins to rotate, making
the capture zone shrink ... several impacts will occur between the target load and the flexible wire ropes").

Geometry (paper Section 3.1.2). Fixed and rotating rings of radius ``R`` share the plane ``z = 0`` and the ring
axis ``z``. Rope 0 runs from the fixed-ring point ``A`` at angle ``-pi/2 - gamma_0`` to the rotating-ring point
``B`` at ``-pi/2 + gamma_0 + psi(t)``, so ``d_se = 2 R sin(gamma_0 + psi / 2)``: the open snare has the paper's
minimum ``d_se(0) = 2 R sin(gamma_0)`` and ``d_se`` reaches ``2 R`` (each rope spans a diameter) at
``psi_max = pi - 2 gamma_0``. (These are :meth:`SnareRings.ends` with unit rate evaluated at "time" ``psi``.) Ropes
``k = 1 .. n - 1`` are rope 0 turned by ``2 pi k / n`` about ``z``; the ring angle ``psi(t)`` is a
:mod:`diffspace.actuation.drive` profile. Ropes do not touch each other (they lie in slightly different planes in the
device; their crossing at the centre is not modelled).

Ropes: the lumped-mass model of :mod:`diffspace.bodies.rope` (node masses Eq. (17), Newton's law Eq. (24),
axial springs Eq. (26), bending springs Eqs. (37)-(39)), one parameter set for all ropes, vmapped over ropes;
the end nodes are prescribed and their masses count as ring inertia. **Bow.** The ropes' rest curvature
(``rope.rest_bend_total_deg``) points *outward*, so they line the ring in the open snare (a preformed rope): with
the inward bow of the one-rope scenario the ropes' middles sit 8.7 mm from the axis at ``d_se = 0.26 m`` and no
10 mm shaft fits; an outward bow against an inward rest curvature would roll over out of plane (a maximum of
the bending energy about the chord). Initial shapes: static equilibrium (Eqs. (35)-(36)) at ``psi(0)``.

Grapple shaft: a rigid cylinder along ``z`` of mass ``m_s``, translating in the ring plane (no rotation, no
gravity). Every rope touches it through :meth:`Shaft.forces` (frictionless
:class:`~diffspace.contact.ContactLaw`; the Hunt-Crossley damping ``lambda = chi k / v_0`` uses a fixed
reference speed ``v_0``, since impacts at many speeds happen during one closing) at its nodes and at
equally spaced points along its sections (:func:`contact_forces`): with node contact alone a shaft sliding
along the ropes sinks between nodes and is held in spurious pockets.

Equations (state :class:`ClosingState`: free nodes, shaft, impulse and three work integrals)::

    m_i x_i''  = f_int,i + f_c,i                        (Eq. (24), every free node of every rope)
    m_s p''    = -sum_{k,i} f_c,k,i                      (shaft)
    J'         = -sum f_c                                (contact impulse on the shaft)
    W_drive'   = -sum_k (f_int + f_c)_{k,B} . v_B,k = tau psi'    (drive power)
    W_c'       = -sum_{k,i} f_c,k,i . (v_k,i - p') = sum F delta_dot   (power absorbed by the contacts)
    D_rope'    = -sum_{k,i} f_damp,k,i . v_k,i  (all nodes)   (power dissipated by the rope dashpots)

with the ring torque ``tau = -sum_k e_z . (r_B,k x (f_int + f_c)_{k,B})`` (the ring holds its end nodes against
the rope; ring inertia not included). Energy balance (exact for the ODE, so its
residual measures the solver error): ``E(t) - E(0) = W_drive - W_c - D_rope`` with ``E`` the kinetic energy of
the free nodes plus the ropes' elastic energy plus the shaft's kinetic energy; ``W_c`` minus the contact
potential ``sum k delta^(n+1) / (n+1)`` is the energy the contact damping has dissipated. One Tsit5 + PID
solve (Diffrax).
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from ...actuation.drive import Drive
from ...bodies import Rope, Shaft, SnareRings, arc_guess, equilibrium
from ...bodies.rope import assemble
from ...contact import AbstractContactLaw, safe_power
from ...integrate import SolverSettings, solve_smooth
from ...core.spatial import safe_norm


class ClosingModel(eqx.Module):
    """The closing snare. ``rope``: one rope's parameters (all ropes alike, outward rest bend); ``rings``: rope
    0's ring geometry (``SnareRings(R, d_se(0), ring_rate=1)``, ends at ring angle ``psi``); ``drive``:
    ``psi(t)`` [rad]; ``shaft``/``law``: grapple shaft (axis ``z``) and its contact law; ``shaft_mass`` [kg];
    ``reference_speed`` ``v_0`` [m/s] of the contact damping. Static: rope ``length`` [m], ``n_ropes``,
    contact ``points_per_section`` (:func:`contact_forces`)."""

    rope: Rope
    rings: SnareRings
    drive: Drive
    shaft: Shaft
    law: AbstractContactLaw
    shaft_mass: Float[Array, ""]
    reference_speed: Float[Array, ""]
    length: float = eqx.field(static=True)
    n_ropes: int = eqx.field(static=True, default=3)
    points_per_section: int = eqx.field(static=True, default=1)

    def turns(self) -> Float[Array, "R 3 3"]:
        """Rotations about the ring axis by ``2 pi k / n`` that carry rope 0 onto rope ``k``."""
        phi = 2.0 * jnp.pi * jnp.arange(self.n_ropes) / self.n_ropes
        c, s, o, i = jnp.cos(phi), jnp.sin(phi), jnp.zeros_like(phi), jnp.ones_like(phi)
        return jnp.stack([jnp.stack([c, -s, o], -1), jnp.stack([s, c, o], -1), jnp.stack([o, o, i], -1)], -2)

    def ends(self, t) -> tuple[Float[Array, "R 3"], Float[Array, "R 3"], Float[Array, "R 3"], Float[Array, "R 3"]]:
        """Fixed-ring ends, rotating-ring ends and their velocities at time ``t``: ``(A, B, dA/dt, dB/dt)``."""
        psi, rate = self.drive.state(t)
        a, b, _, db_dpsi = self.rings.end_states(psi)
        rot = self.turns()
        return rot @ a, rot @ b, jnp.zeros((self.n_ropes, 3)), (rot @ db_dpsi) * rate


class ClosingState(eqx.Module):
    """The integrated state: free nodes of every rope (positions, velocities), shaft position ``p`` and velocity
    ``w``, contact impulse on the shaft and the three work integrals of the module docstring."""

    x_free: Float[Array, "R Nm1 3"]
    v_free: Float[Array, "R Nm1 3"]
    p: Float[Array, "3"]
    w: Float[Array, "3"]
    impulse: Float[Array, "3"]
    work_drive: Float[Array, ""]
    work_contact: Float[Array, ""]
    rope_dissipated: Float[Array, ""]


def rope_nodes(model: ClosingModel, t, x_free, v_free):
    """All node positions and velocities ``(R, N+1, 3)`` of every rope at time ``t``."""
    first, last, v_first, v_last = model.ends(t)
    return jax.vmap(assemble)(x_free, first, last), jax.vmap(assemble)(v_free, v_first, v_last)


def contact_points(n_sections: int, per_section: int) -> Float[Array, "P N1"]:
    """Linear interpolation ``W`` from the ``N + 1`` nodes to the contact points: ``per_section`` equally spaced
    points on every section (its first node included) and the last node, ``P = per_section N + 1`` (rows sum
    to 1)."""
    s = np.arange(per_section) / per_section
    weights = np.zeros((n_sections * per_section + 1, n_sections + 1))
    for i in range(n_sections):
        weights[i * per_section:(i + 1) * per_section, i] = 1.0 - s
        weights[i * per_section:(i + 1) * per_section, i + 1] = s
    weights[-1, -1] = 1.0
    return jnp.asarray(weights)


class ContactTerms(eqx.Module):
    """The shaft contacts at one state: ``forces`` on every node, and at the contact points the force ``magnitudes``
    ``F``, outward ``normals`` ``n`` and the derivatives ``damping`` ``dF/d delta_dot`` [N s/m] and ``stiffness``
    ``dF/d delta`` [N/m] (:class:`~diffspace.bodies.rope.NormalContact`; the fixed-step scheme's implicit part,
    :meth:`jacobian`; unused outputs cost nothing under ``jit``). Static: ``points_per_section``."""

    forces: Float[Array, "R N1 3"]
    magnitudes: Float[Array, "R P"]
    normals: Float[Array, "R P 3"]
    damping: Float[Array, "R P"]
    stiffness: Float[Array, "R P"]
    points_per_section: int = eqx.field(static=True)

    def jacobian(self, h) -> tuple[Float[Array, "R N1 3 3"], Float[Array, "R N 3 3"]]:
        """The nodes' effective contact Jacobian ``W^T G_p W``, ``G_p = (dF/d delta_dot + h/2 dF/d delta) n n^T``
        (:func:`~diffspace.bodies.rope_stepping.effective_jacobian`), as ``(diagonal, off_diagonal)`` 3x3 blocks
        per node and per section: a section's points weigh ``(1 - s)^2``, ``s^2`` onto its two nodes' blocks and
        ``s (1 - s)`` onto their coupling (one ``einsum``)."""
        per = self.points_per_section
        s = np.arange(per) / per
        weights = jnp.asarray(np.stack([(1.0 - s) ** 2, s**2, s * (1.0 - s)]))
        scaled = (self.damping + 0.5 * h * self.stiffness)[..., None] * self.normals
        n_rope = scaled.shape[0]
        sections = lambda z: z[:, :-1].reshape(n_rope, -1, per, 3)  # noqa: E731  (R, N, per, 3)
        first, second, off = jnp.einsum("ck,rnki,rnkj->crnij", weights, sections(scaled), sections(self.normals))
        last = scaled[:, -1, :, None] * self.normals[:, -1, None, :]
        cell = [(0, 0), (0, 0)]
        diag = (jnp.pad(first, [(0, 0), (0, 1)] + cell) + jnp.pad(second, [(0, 0), (1, 0)] + cell)
                + jnp.pad(last[:, None], [(0, 0), (first.shape[1], 0)] + cell))
        return diag, off


def contact_forces(model: ClosingModel, x, v, p, w) -> ContactTerms:
    """Shaft contact forces on the nodes of every rope, the force magnitudes at the contact points and the
    contact points' normal Jacobians (:class:`ContactTerms`).

    :meth:`Shaft.forces` acts at the contact points ``x_p = W x`` (velocities ``W v``; :func:`contact_points`),
    all ropes in one call; the nodes receive ``W^T f_p`` (the virtual-work transpose), so impulse and power are
    unchanged. With one point per section these are the paper's node forces (Section 3.2: "the impact force only
    acts on the node"); more points keep a shaft from sinking between nodes (up to ``r - sqrt(r^2 - l_0^2 / 4)``
    deep, 2.8 mm for 15 mm sections and ``r = 11.5 mm``), which traps a sliding shaft in spurious pockets. ``W``
    is applied section by section (its two nonzero columns per row), as plain elementwise sums."""
    per = model.points_per_section
    s = np.arange(per) / per  # the points' positions along a section

    def to_points(z):  # W z: per points on every section, then the last node
        inner = z[:, :-1, None] * (1.0 - s)[:, None] + z[:, 1:, None] * s[:, None]
        return jnp.concatenate([inner.reshape(z.shape[0], -1, z.shape[-1]), z[:, -1:]], axis=1)

    def to_nodes(g):  # W^T g for point values g (R, P, 3)
        inner = g[:, :-1].reshape(g.shape[0], -1, per, 3)
        first = sum((1.0 - s[k]) * inner[:, :, k] for k in range(per))
        second = sum(s[k] * inner[:, :, k] for k in range(1, per))
        return (jnp.pad(first, [(0, 0), (0, 1), (0, 0)]) + jnp.pad(second, [(0, 0), (1, 0), (0, 0)])
                + jnp.pad(g[:, -1:], [(0, 0), (first.shape[1], 0), (0, 0)]))

    xp, vp = to_points(x), to_points(v)
    c = model.shaft.contact(model.law, model.rope, xp.reshape(-1, 3), vp.reshape(-1, 3), p, w, model.reference_speed)
    points = lambda z: z.reshape(*xp.shape[:-1], *z.shape[1:])  # noqa: E731
    return ContactTerms(to_nodes(points(c.forces)), points(c.magnitudes), points(c.normals), points(c.damping),
                        points(c.stiffness), per)


def ring_torque(last: Float[Array, "R 3"], end_forces: Float[Array, "R 3"]) -> Float[Array, ""]:
    """Drive torque about the ring axis [N m] that holds the rotating-ring ends against the forces
    ``end_forces`` the ropes and the shaft put on them: ``-sum_k e_z . (r_B,k x f_B,k)``."""
    return -jnp.sum(last[:, 0] * end_forces[:, 1] - last[:, 1] * end_forces[:, 0])


def internal_forces(model: ClosingModel, x, v) -> tuple[Float[Array, "R N1 3"], Float[Array, "R N1 3"]]:
    """Elastic and damping forces on every node of every rope (pinned ends): :meth:`Rope.forces`, axial springs
    and dashpots (Eq. (26)) and bending springs and dashpots (Eqs. (37)-(39)) in closed form, split to expose the
    damping power."""
    return model.rope.forces(x, v)


def closing_field(t, y: ClosingState, model: ClosingModel) -> ClosingState:
    """Vector field of the module docstring's equations."""
    x, v = rope_nodes(model, t, y.x_free, y.v_free)
    f_c = contact_forces(model, x, v, y.p, y.w).forces
    f_el, f_damp = internal_forces(model, x, v)
    f = f_el + f_damp + f_c
    f_shaft = -jnp.sum(f_c, axis=(0, 1))
    return ClosingState(y.v_free, f[:, 1:-1] / model.rope.masses[1:-1, None], y.w, f_shaft / model.shaft_mass,
                        f_shaft, -jnp.sum(f[:, -1] * v[:, -1]), -jnp.sum(f_c * (v - y.w)), -jnp.sum(f_damp * v))


def initial_state(model: ClosingModel, shaft_position, shaft_velocity) -> tuple[ClosingState, Array]:
    """Ropes at rest in static equilibrium at ``psi(0)`` (rope 0 solved from an outward arc, the others turned
    copies) and the shaft at ``shaft_position``/``shaft_velocity`` (in-plane, 2 or 3 components). Returns
    ``(y0, converged)``."""
    first, last, _, _ = model.ends(0.0)
    a, b = first[0], last[0]
    guess = arc_guess(a, b, model.length, model.rope.n_sections, bow=a + b)
    xi, ok = equilibrium(model.rope, guess[1:-1], a, b)
    x_free = jnp.einsum("kij,nj->kni", model.turns(), xi)
    in_plane = lambda u: jnp.zeros(3).at[:2].set(jnp.asarray(u, float)[:2])  # noqa: E731
    zero = jnp.zeros(())
    return ClosingState(x_free, jnp.zeros_like(x_free), in_plane(shaft_position), in_plane(shaft_velocity),
                        jnp.zeros(3), zero, zero, zero), ok


def closing_solve(model: ClosingModel, y0: ClosingState, t_end, settings: SolverSettings, *, adjoint=None):
    """One adaptive Tsit5 solve over ``[0, t_end]`` (:func:`~diffspace.integrate.solve_smooth`; check
    ``sol.result``). The axial modes set the step (``omega ~ 2 sqrt(k_tes / m_i)``, ~N^2)."""
    return solve_smooth(closing_field, y0, t_end, settings, args=model, adjoint=adjoint)


def contact_potential(model: ClosingModel, x, p) -> Float[Array, ""]:
    """Elastic energy stored in the contacts, ``sum k delta^(n+1) / (n+1)`` [J]."""
    xp = contact_points(model.rope.n_sections, model.points_per_section) @ x
    delta, _ = model.shaft.indentation(model.rope, xp.reshape(-1, 3), p)
    n = model.law.exponent
    return jnp.sum(model.law.stiffness * safe_power(delta, n + 1.0) / (n + 1.0))


class ClosingSample(eqx.Module):
    """Derived quantities at one saved state (a leading time axis when sampled along a solve)."""

    psi: Float[Array, ""]  # ring angle [rad]
    psi_rate: Float[Array, ""]
    rope_force: Float[Array, "R 3"]  # contact force of the shaft on each rope [N]
    rope_force_norm: Float[Array, " R"]
    contact_point_force: Float[Array, "R P"]
    ring_torque: Float[Array, ""]
    shaft_force: Float[Array, "3"]
    rope_kinetic: Float[Array, ""]
    rope_elastic: Float[Array, ""]
    shaft_kinetic: Float[Array, ""]
    contact_potential: Float[Array, ""]
    nodes: Float[Array, "R N1 3"]

    @property
    def energy(self):
        """Mechanical energy ``E``: free nodes' kinetic + ropes' elastic + shaft's kinetic [J]."""
        return self.rope_kinetic + self.rope_elastic + self.shaft_kinetic


def sample(model: ClosingModel, t, y: ClosingState) -> ClosingSample:
    """Ring angle/rate, per-rope contact force vectors and magnitudes, ring torque, shaft force and the
    energies (module docstring) at one state."""
    x, v = rope_nodes(model, t, y.x_free, y.v_free)
    contact = contact_forces(model, x, v, y.p, y.w)
    f_c, mags = contact.forces, contact.magnitudes
    f = sum(internal_forces(model, x, v)) + f_c
    psi, rate = model.drive.state(t)
    per_rope = jnp.sum(f_c, axis=1)
    kinetic = jnp.sum(jax.vmap(model.rope.kinetic_energy)(v.at[:, 0].set(0.0).at[:, -1].set(0.0)))
    elastic = jnp.sum(jax.vmap(model.rope.elastic_energy)(x))
    return ClosingSample(psi, rate, per_rope, safe_norm(per_rope), mags, ring_torque(x[:, -1], f[:, -1]),
                         -jnp.sum(per_rope, axis=0), kinetic, elastic, 0.5 * model.shaft_mass * (y.w @ y.w),
                         contact_potential(model, x, y.p), x)
