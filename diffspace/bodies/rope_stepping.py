r"""The fixed-step scheme of a lumped-mass rope (the snare closing, :mod:`diffspace.scenarios.snare_closing.semi_implicit`,
and the shaft strike, :mod:`diffspace.bodies.snare_impact`): the average-acceleration Newmark method (trapezoidal
rule) for the stiff, local forces, linearised once per step, and explicit forces at the extrapolated state for the
rest; what it needs: the stiff forces' consistent Jacobians, their block-tridiagonal solve and the explicit part's
stability limit.

**Stiff and explicit forces.** The axial springs and dashpots (Eq. (26)) and the shaft contacts' normal springs and
dashpots act along a section or at a contact point, so their Jacobians ``K = -df/dx`` and ``C = -df/dv`` are block
tridiagonal along a rope (3x3 node blocks; a section's blocks ``[[B, -B], [-B, B]]``, a contact point's ``W^T R W``
over the two nodes it lies between). They carry the rope's fast modes: the axial zigzag ``2 sqrt(k_tes / m_i)``
(1.55e5 rad/s in the closing's rope), the contact damping (a ``-1e6 1/s`` eigenvalue on a 0.55 g node) and the
contact spring (2.5e4 rad/s at a 130 N contact). The bending springs and dashpots (Eqs. (37)-(39), five nodes
coupled) and the terms of the contact normals' turning stay explicit.

**Step** ``h`` from ``x_n``, ``v_n`` and the accelerations ``a_n`` the previous step applied (``f``: every force on
the nodes; ``G = C + h/2 K`` the stiff forces' effective Jacobian): the Newmark method with ``beta = 1/4``,
``gamma = 1/2`` in predictor-corrector form (Hughes and Liu's implicit-explicit partition, the stiff forces
linearised about the predictors)::

    x^ = x_n + h v_n + h^2/4 a_n,   v^ = v_n + h/2 a_n,   v~ = v_n + h a_n                 (predict)
    M a_{n+1} = f(t_{n+1}, x^, v~) + C (v~ - v^) - K (x_{n+1} - x^) - C (v_{n+1} - v^)     (stiff part linearised)
    x_{n+1} = x^ + h^2/4 a_{n+1},   v_{n+1} = v^ + h/2 a_{n+1}                            (correct)
      <=>  (M + h/2 G) a_{n+1} = f(t_{n+1}, x^, v~) + h/2 C a_n,   v_{n+1} = v^ + dv,  dv = h/2 a_{n+1},
           x_{n+1} = x^ + h/2 dv

The explicit forces see the positions at the predictor ``x^`` and the velocities extrapolated to ``v~``; the stiff
ones, linear in the velocity, are shifted to ``v^`` (the ``h/2 C a_n`` term). One force evaluation per step (``K``
and ``C`` come with it: the section blocks from the section geometry, the contact points' from the same
forward-mode pass as their forces) and one block-tridiagonal solve. The forces applied are ``f(x^, v~) - C (dv -
h/2 a_n) - h/2 K dv`` (:func:`linear_forces`). The stiff forces are thus the trapezoidal rule on their
linearisation at the predictor: A-stable (a linear spring-dashpot gets the average-acceleration method's
amplification, modulus at most 1 at any ``h``), second order. The explicit forces err by ``O(h^2)`` in the
acceleration (``x^`` and ``v~`` are second-order predictions of ``x_{n+1}``, ``v_{n+1}``): second order. On the test
equation ``x'' = -omega^2 x - c x'`` they are stable exactly while ``h c + (h omega)^2 / 4 < 1`` (the amplification
matrix of the update above, whatever the implicit part; for ``c = 0`` up to ``h omega = 2``, the central-difference
limit, without numerical damping); the bending zigzag mode sets it (:func:`bending_step`).

**Why this predictor.** With the explicit forces at the extrapolation ``x~ = x_n + h v_n + h^2/2 a_n`` (this
module's previous scheme) they are stable only to ``h c + (h omega)^2 / 2 < 1``, and an explicit *destabilising*
stiffness ``k_e`` beside an implicit restoring one ``k_i`` along the same direction gains energy although the net
stiffness restores (per step up to ``2 k_e / k_i`` once ``h^2 k_i / m`` is large): the contact normals' turning
(``+F / r`` along the shaft's circumference) beside the axial springs of a rope wrapped on the shaft. Random
closings at 3e-5 s grew that spurious mode smoothly into peaks of 1e3-1e9 N. At ``x^`` the pair's amplification has
modulus 1 whenever the net stiffness restores. So the step is free of the axial and contact frequencies and is set
by accuracy (the scenario pages give the measured errors; some contacts of stiff ropes struck hard still go wrong
at steps the explicit part allows, and the closing fails such runs on their energy balance). Start: ``(M + h/2 G)
a_0 = f(0, x_0, v_0)``. Integrals of the forces (impulse, work) take the trapezoidal rule over their applied values
at whole steps.
"""

from __future__ import annotations

import jax.numpy as jnp
from jaxtyping import Array, Float

from ..core.spatial import safe_norm
from .rope import Rope
from .rope_elements import axial_gain
from .rope_stiffness import section_hessian

BENDING_LIMIT = 0.9
"""Largest ``h c_b + (h omega_b)^2 / 4`` a run may use (:func:`bending_step`; the explicit bending forces are
stable below 1)."""


def bending_step(rope: Rope) -> Float[Array, ""]:
    """Largest step [s] of the scheme: the root of ``h c_b + (h omega_b)^2 / 4 = BENDING_LIMIT`` for the bending
    zigzag mode (``omega_b^2 = 16 k_tor / (l_0^2 m_i)``, damping rate ``c_b = 16 c_tor / (l_0^2 m_i)``; shortest
    section, lightest interior node), the explicit forces' stability limit (module docstring)."""
    scale = 16.0 / (jnp.min(rope.rest_lengths) ** 2 * jnp.min(rope.masses[1:-1]))
    rate, omega2 = scale * rope.bending_damping, scale * rope.bending_stiffness
    return 2.0 * BENDING_LIMIT / (rate + jnp.sqrt(rate**2 + BENDING_LIMIT * omega2))


def axial_dashpot_blocks(rope: Rope, x: Float[Array, "*R N1 3"]) -> Float[Array, "*R N 3 3"]:
    """Each section's axial dashpot block ``B_k = g c_tes u u^T`` [N s/m] (Eq. (26)): the section pulls node ``k``
    with ``B_k (v_{k+1} - v_k)`` and node ``k + 1`` with the opposite force."""
    d = x[..., 1:, :] - x[..., :-1, :]
    length = safe_norm(d)
    u = d / length[..., None]
    gain = axial_gain(length - rope.rest_lengths, rope.compression_ratio)
    return (gain * rope.axial_damping)[..., None, None] * u[..., :, None] * u[..., None, :]


def axial_spring_blocks(rope: Rope, x: Float[Array, "*R N1 3"]) -> Float[Array, "*R N 3 3"]:
    """Each section's axial spring block ``d^2 V_a / dd dd`` [N/m] (Eq. (26), material and geometric stiffness;
    :func:`~diffspace.bodies.rope_stiffness.section_hessian`), coupling its nodes like :func:`axial_dashpot_blocks`."""
    d = x[..., 1:, :] - x[..., :-1, :]
    stiffness = jnp.broadcast_to(rope.axial_stiffness, d.shape[:-1])
    return section_hessian(d, jnp.broadcast_to(rope.rest_lengths, d.shape[:-1]), stiffness, rope.compression_ratio)


def section_blocks(blocks: Float[Array, "*R N 3 3"]) -> tuple[Array, Array]:
    """The Jacobian of forces between neighbouring nodes (a block ``B_k`` per section, acting on ``x_{k+1} - x_k``
    or ``v_{k+1} - v_k``): ``(diagonal, off_diagonal)`` node blocks, ``(*R, N+1, 3, 3)`` and ``(*R, N, 3, 3)``."""
    batch = [(0, 0)] * (blocks.ndim - 3)
    cell = [(0, 0), (0, 0)]
    return jnp.pad(blocks, batch + [(1, 0)] + cell) + jnp.pad(blocks, batch + [(0, 1)] + cell), -blocks


def effective_jacobian(damping: tuple[Array, Array], stiffness: tuple[Array, Array], h) -> tuple[Array, Array]:
    """``G = C + h/2 K`` of block-tridiagonal ``(diagonal, off_diagonal)`` Jacobians (module docstring)."""
    return damping[0] + 0.5 * h * stiffness[0], damping[1] + 0.5 * h * stiffness[1]


def linear_forces(jacobian: tuple[Array, Array], dv: Float[Array, "*R N1 3"]) -> Float[Array, "*R N1 3"]:
    """The force change ``-J dv`` [N] on every node for a change ``dv`` of every node, ``J`` a symmetric
    block-tridiagonal ``(diagonal, off_diagonal)`` Jacobian."""
    diag, off = jacobian
    jdv = _mv(diag, dv)
    jdv = jdv.at[..., :-1, :].add(_mv(off, dv[..., 1:, :])).at[..., 1:, :].add(_mv(off, dv[..., :-1, :]))
    return -jdv


def implicit_accelerations(masses: Float[Array, " N1"], jacobian: tuple[Array, Array],
                           forces: Float[Array, "*R N1 3"], h) -> Float[Array, "*R Nm1 3"]:
    """The free nodes' accelerations ``a`` of the module docstring's step, ``(M + h/2 J) a = f`` over the interior
    nodes (``masses`` [kg] and ``forces`` [N] of every node, the end nodes' dropped; ``J`` the effective Jacobian
    ``G`` [N s/m] as ``(diagonal, off_diagonal)`` blocks, :func:`effective_jacobian`), by :func:`block_solve`."""
    diag, off = jacobian
    diag = masses[1:-1, None, None] * jnp.eye(3) + 0.5 * h * diag[..., 1:-1, :, :]
    return block_solve(diag, 0.5 * h * off[..., 1:-1, :, :], forces[..., 1:-1, :])


def block_solve(diag: Float[Array, "*R n 3 3"], off: Float[Array, "*R m 3 3"],
                rhs: Float[Array, "*R n 3"]) -> Float[Array, "*R n 3"]:
    """Solve a symmetric positive definite block-tridiagonal system (``diag``: the 3x3 diagonal blocks, ``off``:
    the symmetric blocks coupling block ``i`` to ``i + 1``, ``m = n - 1``) by twisted block elimination: both ends
    are eliminated towards the middle block ``k = n // 2`` at once (the two sweeps stacked as a batch of two, the
    shorter one led by an identity block), ``k`` is solved, and both sweeps substitute back outwards. Half the
    sequential depth of elimination from one end; 3x3 blocks, unrolled, elementwise."""
    n = rhs.shape[-2]
    if n == 1:
        return _mv(_inverse3(diag[..., 0, :, :]), rhs[..., 0, :])[..., None, :]
    k = n // 2
    pad = 2 * k + 1 - n  # the lower sweep eliminates n - 1 - k blocks, the upper k

    def lead(z, value, axis):  # the lower sweep's blocks, from the last one up, led by ``pad`` filler blocks
        filler = jnp.broadcast_to(value, z.shape[:z.ndim + axis] + (pad,) + z.shape[z.ndim + axis + 1:])
        return jnp.concatenate([filler, jnp.flip(z, axis)], axis)

    d2 = jnp.stack([diag[..., :k, :, :], lead(diag[..., k + 1:, :, :], jnp.eye(3), -3)])
    b2 = jnp.stack([off[..., :k, :, :], lead(off[..., k:, :, :], 0.0, -3)])  # b2[i]: sweep block i to i + 1
    r2 = jnp.stack([rhs[..., :k, :], lead(rhs[..., k + 1:, :], 0.0, -2)])
    pivots, reduced = [_inverse3(d2[..., 0, :, :])], [r2[..., 0, :]]
    for i in range(1, k):
        lower = _mm(b2[..., i - 1, :, :], pivots[-1])  # b2 is symmetric: B^T = B
        pivots.append(_inverse3(d2[..., i, :, :] - _mm(lower, b2[..., i - 1, :, :])))
        reduced.append(r2[..., i, :] - _mv(lower, reduced[-1]))
    lower = _mm(b2[..., k - 1, :, :], pivots[-1])  # both sweeps onto the middle block
    middle = _mv(_inverse3(diag[..., k, :, :] - jnp.sum(_mm(lower, b2[..., k - 1, :, :]), axis=0)),
                 rhs[..., k, :] - jnp.sum(_mv(lower, reduced[-1]), axis=0))
    out = [jnp.broadcast_to(middle, r2.shape[:-2] + (3,))]
    for i in range(k - 1, -1, -1):
        out.append(_mv(pivots[i], reduced[i] - _mv(b2[..., i, :, :], out[-1])))
    sweeps = jnp.stack(out[:0:-1], axis=-2)  # (2, *R, k, 3)
    return jnp.concatenate([sweeps[0], middle[..., None, :], jnp.flip(sweeps[1][..., pad:, :], -2)], axis=-2)


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
