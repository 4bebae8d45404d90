r"""The fixed-step scheme of a lumped-mass rope (the snare closing, :mod:`diffspace.scenarios.snare_closing.semi_implicit`,
and the shaft strike, :mod:`diffspace.bodies.snare_impact`): velocity Verlet (the leapfrog, the velocities also kept
at whole steps) with the stiff dashpots by the trapezoidal rule; what it needs: the rope's stability limits, the
dashpots' consistent Jacobian and its block-tridiagonal solve.

One step ``h`` from ``x_n``, ``v_n`` and the accelerations ``a_n`` the previous step applied (``f``: the nodes'
forces; ``J = -df/dv`` the consistent Jacobian of the axial and contact dashpots, 3x3 blocks, tridiagonal along a
rope since a section's dashpot and its contact points act on its two nodes only)::

    v_{n+1/2} = v_n + h/2 a_n,   x_{n+1} = x_n + h v_{n+1/2},   v~ = v_n + h a_n                 (kick, drift, predict)
    M a_{n+1} = f(t_{n+1}, x_{n+1}, v~) - J (v_{n+1} - v~),     v_{n+1} = v_{n+1/2} + h/2 a_{n+1}
      <=>  (M + h/2 J) a_{n+1} = f(t_{n+1}, x_{n+1}, v~) + h/2 J a_n                         (closing kick)

One force evaluation per step (``J`` comes with it: the axial blocks from the section geometry, the contact
points' rates from the same forward-mode pass as their forces) and one block-tridiagonal solve. The dashpot
forces are linear in the velocities, so for the axial and contact dashpots this is exactly the trapezoidal rule
(force at ``v_{n+1}``, A-stable: amplification ``(m - hJ/2) / (m + hJ/2)`` in a pure dashpot, the contact dashpot of
a 0.55 g node being a ``-1e6 1/s`` eigenvalue); the springs are leapfrog (symplectic, second order, stable for
``h omega < 2``); the bending dashpots, not in ``J`` (they couple five nodes), act at the predicted velocity
``v~ = v_{n+1} + O(h^2)``: second order, stable while ``h c_b + (h omega_b)^2 / 4 < 1`` (:func:`bending_step`).
The scheme is second order overall. (A node-local lumped ``D`` in place of ``J``, ``(m_i I + h/2 D_i) a = f(x,
v_{n+1/2})``, leaves a force error ``(J - D) h/2 a``: first order; extrapolating its velocity instead makes the
mismatch ``D - J`` an explicit anti-damping, unstable wherever the lumping exceeds ``J``.) Start:
``(M + h/2 J) a_0 = f(0, x_0, v_0)``. The forces applied are ``f(v~) - J (v_{n+1} - v~)`` (:func:`dashpot_forces`);
integrals of the forces (impulse, work) take the trapezoidal rule over their applied values at whole steps.
"""

from __future__ import annotations

import jax.numpy as jnp
from jaxtyping import Array, Float

from ..core.spatial import safe_norm
from .rope import Rope
from .rope_elements import axial_gain

STABLE_PRODUCT = 1.8
"""Largest ``h omega_max`` a run may use (:func:`highest_frequency`): the leapfrog's undamped limit is 2; beyond 1.8 a
run fails with ``solver_failure``."""


def highest_frequency(rope: Rope) -> Float[Array, ""]:
    """Upper estimate [rad/s] of a rope's highest natural frequency, the explicit part's stability limit: the
    axial zigzag ``omega_a^2 = 4 k_tes / m_i`` and the bending zigzag ``omega_b^2 = 16 k_tor / (l_0^2 m_i)``
    (Eqs. (26), (39); interior nodes, stiffest section, shortest section), added in squares since they couple in a
    curved rope."""
    mass = jnp.min(rope.masses[1:-1])
    axial = 4.0 * jnp.max(rope.axial_stiffness) / mass
    bending = 16.0 * rope.bending_stiffness / (jnp.min(rope.rest_lengths) ** 2 * mass)
    return jnp.sqrt(axial + bending)


BENDING_LIMIT = 0.9
"""Largest ``h c_b + (h omega_b)^2 / 4`` a run may use (:func:`bending_step`; the bending dashpots, explicit at the
predicted velocity, are stable below 1)."""


def bending_step(rope: Rope) -> Float[Array, ""]:
    """Largest step [s] for the explicit bending dashpots: the root of ``h c_b + (h omega_b)^2 / 4 = BENDING_LIMIT``
    for the bending zigzag mode (damping rate ``c_b = 16 c_tor / (l_0^2 m_i)``, ``omega_b^2 = 16 k_tor /
    (l_0^2 m_i)``; shortest section, lightest interior node). The scalar test equation ``x'' = -omega^2 x - c x'``
    with ``c`` at the predicted velocity (module docstring) is stable exactly while ``h c + (h omega)^2 / 4 < 1``."""
    scale = 16.0 / (jnp.min(rope.rest_lengths) ** 2 * jnp.min(rope.masses[1:-1]))
    rate, omega2 = scale * rope.bending_damping, scale * rope.bending_stiffness
    return 2.0 * BENDING_LIMIT / (rate + jnp.sqrt(rate**2 + BENDING_LIMIT * omega2))


def stable_step(rope: Rope) -> Float[Array, ""]:
    """Largest step [s] the scheme runs stably: ``STABLE_PRODUCT / omega_max`` (:func:`highest_frequency`, the
    springs) and :func:`bending_step` (the explicit bending dashpots)."""
    return jnp.minimum(STABLE_PRODUCT / highest_frequency(rope), bending_step(rope))


def axial_dashpot_blocks(rope: Rope, x: Float[Array, "*R N1 3"]) -> Float[Array, "*R N 3 3"]:
    """Each section's axial dashpot block ``B_k = g c_tes u u^T`` [N s/m] (Eq. (26)): the section pulls node ``k``
    with ``B_k (v_{k+1} - v_k)`` and node ``k + 1`` with the opposite force."""
    d = x[..., 1:, :] - x[..., :-1, :]
    length = safe_norm(d)
    u = d / length[..., None]
    gain = axial_gain(length - rope.rest_lengths, rope.compression_ratio)
    return (gain * rope.axial_damping)[..., None, None] * u[..., :, None] * u[..., None, :]


def section_dashpots(blocks: Float[Array, "*R N 3 3"]) -> tuple[Array, Array]:
    """The consistent Jacobian ``-df/dv`` of dashpots between neighbouring nodes (a block ``B_k`` per section):
    ``(diagonal, off_diagonal)`` blocks, ``(*R, N+1, 3, 3)`` and ``(*R, N, 3, 3)``."""
    batch = [(0, 0)] * (blocks.ndim - 3)
    cell = [(0, 0), (0, 0)]
    return jnp.pad(blocks, batch + [(1, 0)] + cell) + jnp.pad(blocks, batch + [(0, 1)] + cell), -blocks


def dashpot_forces(jacobian: tuple[Array, Array], dv: Float[Array, "*R N1 3"]) -> Float[Array, "*R N1 3"]:
    """The dashpot force change ``-J dv`` [N] on every node for a velocity change ``dv`` of every node, ``J`` the
    symmetric block-tridiagonal ``(diagonal, off_diagonal)`` Jacobian."""
    diag, off = jacobian
    jdv = _mv(diag, dv)
    jdv = jdv.at[..., :-1, :].add(_mv(off, dv[..., 1:, :])).at[..., 1:, :].add(_mv(off, dv[..., :-1, :]))
    return -jdv


def implicit_accelerations(masses: Float[Array, " N1"], jacobian: tuple[Array, Array],
                           forces: Float[Array, "*R N1 3"], h) -> Float[Array, "*R Nm1 3"]:
    """The free nodes' accelerations ``a`` of the module docstring's closing kick, ``(M + h/2 J) a = f`` over the
    interior nodes (``masses`` [kg] and ``forces`` [N] of every node, the end nodes' dropped; ``J`` the
    ``(diagonal, off_diagonal)`` blocks of :func:`section_dashpots` and of node-local dashpots [N s/m]): block
    tridiagonal elimination down the rope and substitution back (3x3 blocks, unrolled, elementwise)."""
    diag, off = jacobian
    diag = masses[1:-1, None, None] * jnp.eye(3) + 0.5 * h * diag[..., 1:-1, :, :]
    off, rhs = 0.5 * h * off[..., 1:-1, :, :], forces[..., 1:-1, :]
    pivots, reduced = [_inverse3(diag[..., 0, :, :])], [rhs[..., 0, :]]
    for i in range(1, rhs.shape[-2]):
        lower = _mm(off[..., i - 1, :, :], pivots[-1])  # off is symmetric: B^T = B
        pivots.append(_inverse3(diag[..., i, :, :] - _mm(lower, off[..., i - 1, :, :])))
        reduced.append(rhs[..., i, :] - _mv(lower, reduced[-1]))
    out = [_mv(pivots[-1], reduced[-1])]
    for i in range(rhs.shape[-2] - 2, -1, -1):
        out.append(_mv(pivots[i], reduced[i] - _mv(off[..., i, :, :], out[-1])))
    return jnp.stack(out[::-1], axis=-2)


def _mv(m: Float[Array, "*B 3 3"], z: Float[Array, "*B 3"]) -> Float[Array, "*B 3"]:
    """Batched 3x3 matrix times vector, elementwise (XLA fuses it; a batched dot of 3x3 blocks does not)."""
    return jnp.sum(m * z[..., None, :], axis=-1)


def _mm(a: Float[Array, "*B 3 3"], b: Float[Array, "*B 3 3"]) -> Float[Array, "*B 3 3"]:
    """Batched 3x3 matrix product, elementwise."""
    return jnp.sum(a[..., :, :, None] * b[..., None, :, :], axis=-2)


def _inverse3(a: Float[Array, "*B 3 3"]) -> Float[Array, "*B 3 3"]:
    """Inverse of 3x3 matrices by cofactors (:func:`~diffspace.core.spatial.solve3`'s rule: elementwise)."""
    r0, r1, r2 = a[..., 0, :], a[..., 1, :], a[..., 2, :]
    c0 = jnp.cross(r1, r2)
    det = jnp.sum(r0 * c0, axis=-1)[..., None, None]
    return jnp.stack([c0, jnp.cross(r2, r0), jnp.cross(r0, r1)], axis=-1) / det
