r"""Rigid unilateral point contacts with Coulomb friction as LCPs, for any system ``M(q) u' + h(q, u) = f``.

A system supplies its mass matrix ``M``, the generalised force ``f - h`` (inputs minus bias) and, per
contact point, the gap and the contact Jacobians (``Contacts``, e.g. from ``point_plane_contacts``):

$$
g_N,\quad \gamma_N = J_N u,\quad \gamma_T = J_T u,\quad
\ddot g_N = J_N \dot u + \dot J_N u,\quad \ddot g_T = J_T \dot u + \dot J_T u,
$$

with ``J_N`` along the plane normal (``g_N > 0``: separated) and ``J_T`` along the tangents. The contact
force on the system is ``J_N^T lambda_N + J_T^T lambda_T``. Two formulations, both advancing one fixed step
``dt`` by semi-implicit Euler (``u+ = u + dt u'``, then the caller sets ``q+ = q + dt u+``):

**Acceleration level** (the paper's eqs. (9)-(22), planar friction, ``nt = 1``): per closed contact the
complementarity pairs are ``(g_N'', lambda_N)``, ``(g_T''^-, lambda_T0^-)``, ``(lambda_T0^+, g_T''^+)``
with the friction reserves ``lambda_T0^+- = (mu lambda_N +- lambda_T) / 2`` (eq. (10)) and the split
``g_T'' = g_T''^+ - g_T''^-`` (eqs. (11), (13)). With ``eta = [lambda_N, lambda_T0^-, g_T''^+]`` and
``xi = [g_N'', g_T''^-, lambda_T0^+]``, ``lambda_T = mu lambda_N - 2 lambda_T0^-`` and ``G_AB = J_A M^-1
J_B^T`` this is the LCP ``xi = A eta + b`` of eqs. (20)-(22):

$$
A = \begin{bmatrix} G_{NN} + G_{NT}\mu & -2G_{NT} & 0\\ -(G_{TN} + G_{TT}\mu) & 2G_{TT} & I\\
\mu & -I & 0\end{bmatrix},\quad
b = \begin{bmatrix} J_N M^{-1}(f - h) + \dot J_N u + s_N \\ -(J_T M^{-1}(f - h) + \dot J_T u + s_T)
\\ 0\end{bmatrix}.
$$

(The paper writes it with its own signs of ``W``; in ours ``lambda_T`` is the friction force along ``+t``.)
A contact is *closed* when ``g_N <= closed_gap``; open contacts get ``lambda = 0`` (their rows are replaced
by ``z_i = 0``, so one jitted function serves every mode). Two stabilisation terms, both zero at the
paper's state ``g_N = gamma_N = gamma_T = 0`` of a resting contact: ``s_N = 2 alpha gamma_N + alpha^2 g_N``
(Baumgarte; without it the fixed-step drift of ``g_N`` and ``gamma_N`` accumulates) and ``s_T = gamma_T /
dt``, which makes the complementarity act on the end-of-step sliding velocity ``gamma_T + dt g_T''``: the
friction of a sliding contact opposes its velocity (eq. (9), "sliding"), and one that would reverse within
the step sticks instead (no chattering between slip+ and slip-).

**Impacts at the acceleration level.** Forces cannot stop a contact that closes with speed within a step
(Baumgarte alone took several steps: a landing at 72 mm/s penetrated 1 mm whatever the step). A contact
*closes* in the step from ``q_{k-1}`` to ``q_k`` when ``g_N <= closed_gap`` now, it was open before
(``g_N - dt gamma_N > closed_gap``: semi-implicit Euler moved it by ``dt gamma_N``, so this is the previous
gap to first order) and it approaches (``gamma_N < 0``). Such a step starts with an impulse: the
velocity-level LCP below with ``dt (f - h) = 0`` (an instantaneous impact) and Newton's law in place of the
gap term, for every closed contact,

$$
0 \le p_N \perp J_N u^+ + e\,\min(\gamma_N, 0) \ge 0,
$$

with Coulomb friction impulses on the ``+-t`` cone (``e`` the restitution coefficient; 0, plastic: the
contact stops approaching; 1: the approach speed is reversed). The force LCP then starts from ``u^+``. The
penetration at the closing step is at most ``dt |gamma_N|`` (the last free step's travel) and shrinks with
the step; the Baumgarte term then removes it.

**Velocity level** (Stewart & Trinkle 1996; Anitescu & Potra 1997): impulses ``p_N``, friction impulses
``beta >= 0`` along ``k`` directions ``D = C J_T`` of a polyhedral cone (``C``: unit direction cosines in the
tangent plane; ``k = 2``, ``+-t``, in the plane) and the sliding speed ``sigma``:

$$
M u^+ = M u + dt (f - h) + J_N^T p_N + D^T \beta,
$$

$$
0 \le p_N \perp J_N u^+ + g_N / dt \ge 0,\quad 0 \le \beta \perp D u^+ + E\sigma \ge 0,\quad
0 \le \sigma \perp \mu p_N - E^T \beta \ge 0,
$$

``E`` the block of ones mapping each contact's ``sigma`` to its directions. ``g_N / dt`` keeps the end of the
step out of the plane to first order (no drift) and lets a contact close within a step; impacts are
perfectly inelastic (restitution 0) and come out of the same LCP. Reported forces are ``impulse / dt``.

Both levels report each contact's *closing speed*: the approach speed ``-gamma_N`` at the start of a step
whose impulse stops an approach (acceleration level: the impact impulse; velocity level: a positive normal
impulse on an approaching contact), 0 elsewhere.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Bool, Float, Int

from ..core.linalg import spd_solver
from .lcp import LemkeInfo, lemke

FORMULATIONS = ("acceleration", "velocity")
SEPARATED, STICK, SLIP_POSITIVE, SLIP_NEGATIVE = 0, 1, 2, 3
MODE_LABELS = ("separated", "stick", "slip+", "slip-")


class Contacts(eqx.Module):
    """Point contacts of a system at one instant: ``nc`` contacts, ``nt`` tangents, ``nv`` velocities.

    Attributes:
        gap: Normal gaps ``g_N``, shape ``(nc,)`` [m]; positive: separated.
        normal_jac: Normal Jacobians ``J_N``, shape ``(nc, nv)``.
        tangent_jac: Tangent Jacobians ``J_T``, shape ``(nc, nt, nv)``.
        normal_drift: ``J_N' u``, shape ``(nc,)`` [m/s²].
        tangent_drift: ``J_T' u``, shape ``(nc, nt)`` [m/s²].
        mu: Coulomb friction coefficients, shape ``(nc,)``.
    """

    gap: Float[Array, " nc"]
    normal_jac: Float[Array, "nc nv"]
    tangent_jac: Float[Array, "nc nt nv"]
    normal_drift: Float[Array, " nc"]  # J_N' u
    tangent_drift: Float[Array, "nc nt"]  # J_T' u
    mu: Float[Array, " nc"]


def point_plane_contacts(position, jacobian, drift, normal, tangents, mu, offset=0.0) -> Contacts:
    """Contacts of points with the plane ``normal . x = offset``.

    Args:
        position: Point positions, shape ``(nc, d)`` [m] (``d`` = 2 in the plane, 3 in space).
        jacobian: Point Jacobians ``J`` (``x' = J u``), shape ``(nc, d, nv)``.
        drift: ``J' u``, shape ``(nc, d)`` [m/s²].
        normal: Unit plane normal, shape ``(d,)``.
        tangents: Unit tangents orthogonal to it, shape ``(nt, d)``.
        mu: Coulomb friction coefficient, scalar or shape ``(nc,)``.
        offset: Plane offset along the normal [m].

    Returns:
        The contacts, gaps and Jacobians projected on the normal and tangents.
    """
    normal, tangents = jnp.asarray(normal, float), jnp.asarray(tangents, float)
    nc = position.shape[0]
    return Contacts(
        gap=position @ normal - offset,
        normal_jac=jnp.einsum("d,cdv->cv", normal, jacobian),
        tangent_jac=jnp.einsum("td,cdv->ctv", tangents, jacobian),
        normal_drift=drift @ normal,
        tangent_drift=drift @ tangents.T,
        mu=jnp.broadcast_to(jnp.asarray(mu, float), (nc,)),
    )


class ContactStep(eqx.Module):
    """One step's result: next velocity, the contact forces (impulses / dt at the velocity level) and the
    impact impulses that started the step (acceleration level; zero at the velocity level, whose step
    impulses are the forces times ``dt``).

    Attributes:
        velocity: Velocity at the end of the step, shape ``(nv,)``.
        normal_force: Normal forces ``lambda_N``, shape ``(nc,)`` [N].
        tangent_force: Friction forces ``lambda_T``, shape ``(nc, nt)`` [N].
        generalized_force: ``J_N^T lambda_N + J_T^T lambda_T``, shape ``(nv,)``.
        normal_impulse: Impact impulses ``p_N``, shape ``(nc,)`` [N s].
        tangent_impulse: Impact friction impulses, shape ``(nc, nt)`` [N s].
        closing_speed: ``-gamma_N`` of a contact whose approach an impulse stops, else 0, shape ``(nc,)`` [m/s].
        mode: Per contact: 0 separated, 1 stick, 2 slip+, 3 slip- (``MODE_LABELS``), shape ``(nc,)``.
        info: The step's force (acceleration) or impulse (velocity) LCP solve.
        impact_info: The impact LCP solve (acceleration level); the step's own LCP at the velocity level.
    """

    velocity: Float[Array, " nv"]
    normal_force: Float[Array, " nc"]
    tangent_force: Float[Array, "nc nt"]
    generalized_force: Float[Array, " nv"]  # J_N^T lambda_N + J_T^T lambda_T
    normal_impulse: Float[Array, " nc"]  # impact p_N [N s]
    tangent_impulse: Float[Array, "nc nt"]  # impact friction impulse [N s]
    closing_speed: Float[Array, " nc"]  # -gamma_N of a contact whose approach an impulse stops, else 0
    mode: Int[Array, " nc"]  # SEPARATED, STICK, SLIP_POSITIVE, SLIP_NEGATIVE
    info: LemkeInfo  # the step's force (acceleration) or impulse (velocity) LCP
    impact_info: LemkeInfo  # the impact LCP (acceleration level); the step's own LCP at the velocity level

    @property
    def converged(self) -> Bool[Array, ""]:
        """Both LCP solves of the step converged."""
        return self.info.converged & self.impact_info.converged


def friction_directions(nt: int, k: int) -> np.ndarray:
    """Direction cosines of the polyhedral friction cone.

    Args:
        nt: Number of tangents: 1 in the plane, 2 in space.
        k: Number of directions in space (ignored in the plane, which uses ``+-t``).

    Returns:
        ``C``, shape ``(2, 1)`` in the plane, ``(k, 2)`` (evenly spaced around the normal) in space.
    """
    if nt == 1:
        return np.array([[1.0], [-1.0]])
    angles = 2.0 * np.pi * np.arange(k) / k
    return np.stack([np.cos(angles), np.sin(angles)], axis=1)


def contact_step(
    formulation: str, mass, force, velocity, contacts: Contacts, dt, *, baumgarte_rate=0.0, closed_gap=0.0,
    restitution=0.0, n_directions: int = 4, negligible_force=1e-9,
) -> ContactStep:
    """Advance the velocity one step with the contact forces of ``formulation`` (see the module text).

    Args:
        formulation: ``"acceleration"`` or ``"velocity"``.
        mass: Mass matrix ``M``, symmetric positive definite, shape ``(nv, nv)``.
        force: Inputs minus bias ``f - h``, shape ``(nv,)``.
        velocity: Velocity ``u`` at the start of the step, shape ``(nv,)``.
        contacts: The contacts at the start of the step.
        dt: Step [s].
        baumgarte_rate: Acceleration level: ``alpha`` of the drift correction [1/s].
        closed_gap: Acceleration level: a contact is closed at gaps up to this [m].
        restitution: Acceleration level: Newton's coefficient ``e`` of the impact impulses.
        n_directions: Velocity level in space: directions of the friction cone (the plane uses ``+-t``).
        negligible_force: Normal forces up to this [N] count as zero when the modes are classified
            (reporting only).

    Returns:
        The velocity at the end of the step, the forces and impulses, the contact modes and the LCP reports.

    Raises:
        ValueError: Unknown ``formulation``.
    """
    if formulation not in FORMULATIONS:
        raise ValueError(f"unknown contact formulation '{formulation}' ({', '.join(FORMULATIONS)})")
    minv = spd_solver(mass)  # one Cholesky (array loops, no LAPACK call: batches under vmap), implicit derivatives
    free_accel = minv(force)
    gamma_n = contacts.normal_jac @ velocity
    if formulation == "acceleration":
        impacting = (contacts.gap <= closed_gap) & (gamma_n < 0.0) & (contacts.gap - dt * gamma_n > closed_gap)
        active = (contacts.gap <= closed_gap) & jnp.any(impacting)
        offset = restitution * jnp.minimum(gamma_n, 0.0)
        p_n, p_t, impact_info = _velocity_impulses(minv, velocity, offset, contacts, n_directions, active)
        velocity = velocity + minv(_generalized(contacts, p_n, p_t))
        lam_n, lam_t, info = _acceleration_forces(minv, free_accel, velocity, contacts, dt, baumgarte_rate, closed_gap)
        closing = jnp.where(impacting, -gamma_n, 0.0)
    else:
        active = jnp.ones(contacts.gap.shape, bool)
        u_free = velocity + dt * free_accel
        lam_n, lam_t, info = _velocity_impulses(minv, u_free, contacts.gap / dt, contacts, n_directions, active)
        closing = jnp.where((lam_n > negligible_force * dt) & (gamma_n < 0.0), -gamma_n, 0.0)
        lam_n, lam_t, impact_info = lam_n / dt, lam_t / dt, info
        p_n, p_t = jnp.zeros_like(lam_n), jnp.zeros_like(lam_t)
    generalized = _generalized(contacts, lam_n, lam_t)
    next_velocity = velocity + dt * (free_accel + minv(generalized))
    mode = _modes(lam_n, lam_t, contacts.mu, negligible_force)
    return ContactStep(next_velocity, lam_n, lam_t, generalized, p_n, p_t, closing, mode, info, impact_info)


def _generalized(contacts: Contacts, normal, tangent):
    """``J_N^T normal + J_T^T tangent`` (forces or impulses)."""
    return contacts.normal_jac.T @ normal + jnp.einsum("ctv,ct->v", contacts.tangent_jac, tangent)


def _delassus(minv, rows):
    """``G = R M^-1 R^T`` for constraint rows ``R (m, nv)``."""
    return rows @ jax.vmap(minv)(rows).T


def _acceleration_forces(minv, free_accel, velocity, contacts: Contacts, dt, alpha, closed_gap):
    """The paper's planar stick-slip LCP (eqs. (20)-(22)) for the closed contacts."""
    if contacts.tangent_jac.shape[1] != 1:
        raise ValueError("the acceleration-level formulation is planar: one tangent per contact")
    nc = contacts.gap.shape[0]
    jn, jt = contacts.normal_jac, contacts.tangent_jac[:, 0]
    g = _delassus(minv, jnp.concatenate([jn, jt]))
    g_nn, g_nt, g_tn, g_tt = g[:nc, :nc], g[:nc, nc:], g[nc:, :nc], g[nc:, nc:]
    mu = contacts.mu
    eye, zero = jnp.eye(nc), jnp.zeros((nc, nc))
    a = jnp.block([
        [g_nn + g_nt * mu[None, :], -2.0 * g_nt, zero],
        [-(g_tn + g_tt * mu[None, :]), 2.0 * g_tt, eye],
        [jnp.diag(mu), -eye, zero],
    ])
    gamma_n, gamma_t = jn @ velocity, jt @ velocity
    b_n = jn @ free_accel + contacts.normal_drift + 2.0 * alpha * gamma_n + alpha**2 * contacts.gap
    b_t = -(jt @ free_accel + contacts.tangent_drift[:, 0] + gamma_t / dt)
    b = jnp.concatenate([b_n, b_t, jnp.zeros(nc)])
    closed = jnp.tile(contacts.gap <= closed_gap, 3)
    a = jnp.where(closed[:, None] & closed[None, :], a, 0.0) + jnp.diag(jnp.where(closed, 0.0, 1.0))
    z, info = lemke(a, jnp.where(closed, b, 1.0))
    lam_n, reserve_minus = z[:nc], z[nc : 2 * nc]
    return lam_n, (mu * lam_n - 2.0 * reserve_minus)[:, None], info


def _velocity_impulses(minv, u_free, normal_offset, contacts: Contacts, n_directions, active):
    """Stewart-Trinkle / Anitescu-Potra impulse LCP (normal condition ``J_N u+ + normal_offset >= 0``) on the
    ``active`` contacts (the others take no impulse); returns normal and tangential impulses."""
    nc, nt, nv = contacts.tangent_jac.shape
    cosines = jnp.asarray(friction_directions(nt, n_directions))
    k = cosines.shape[0]
    dirs = jnp.einsum("kt,ctv->ckv", cosines, contacts.tangent_jac).reshape(nc * k, nv)
    e = jnp.kron(jnp.eye(nc), jnp.ones((k, 1)))  # (nc k, nc)
    rows = jnp.concatenate([contacts.normal_jac, dirs])
    g = _delassus(minv, rows)
    a = jnp.block([
        [g[:nc, :nc], g[:nc, nc:], jnp.zeros((nc, nc))],
        [g[nc:, :nc], g[nc:, nc:], e],
        [jnp.diag(contacts.mu), -e.T, jnp.zeros((nc, nc))],
    ])
    b = jnp.concatenate([contacts.normal_jac @ u_free + normal_offset, dirs @ u_free, jnp.zeros(nc)])
    used = jnp.concatenate([active, jnp.repeat(active, k), active])
    a = jnp.where(used[:, None] & used[None, :], a, 0.0) + jnp.diag(jnp.where(used, 0.0, 1.0))
    z, info = lemke(a, jnp.where(used, b, 1.0))
    p_n, beta = z[:nc], z[nc : nc + nc * k].reshape(nc, k)
    return p_n, beta @ cosines, info


def _modes(lam_n, lam_t, mu, negligible) -> Int[Array, " nc"]:
    """Contact mode from the forces: no normal force (up to ``negligible``) = separated;
    friction on the cone = sliding (against the friction force; in space: ``SLIP_POSITIVE``); inside it =
    sticking."""
    friction = lam_t[:, 0] if lam_t.shape[1] == 1 else jnp.linalg.norm(lam_t, axis=1)
    saturated = jnp.abs(friction) >= mu * lam_n * (1.0 - 1e-9)
    direction = jnp.where(friction <= 0.0, SLIP_POSITIVE, SLIP_NEGATIVE)
    sliding = jnp.where(saturated, direction, STICK)
    return jnp.where(lam_n > negligible, sliding, SEPARATED)


__all__ = [
    "FORMULATIONS",
    "MODE_LABELS",
    "ContactStep",
    "Contacts",
    "contact_step",
    "friction_directions",
    "point_plane_contacts",
]
