r"""What a fixed-step, semi-implicit scheme of a lumped-mass rope needs: the rope's highest frequency (the explicit
part's stability limit), the lumped axial-dashpot blocks, and the kick of the free nodes with their dashpots
(axial and contact) implicit, node by node.

The kick (one step ``h``; ``f`` the nodes' forces at the step's start, ``D_i`` the 3x3 dashpot rates of node ``i``)::

    (m_i I + h D_i) dv_i = h f_i,    f_i^applied = f_i - D_i dv_i

Both ``D`` are row-sum lumpings that bound their consistent matrices (block-diagonal dominance), so the linearised
step is unconditionally stable in the dashpots (the contact dashpot of a 0.55 g node is a ``-1e6 1/s`` eigenvalue);
the springs stay explicit (symplectic Euler: ``h omega < 2``). Used by the snare closing
(:mod:`diffspace.scenarios.snare_closing.semi_implicit`) and the shaft strike (:mod:`diffspace.bodies.snare_impact`).
"""

from __future__ import annotations

import jax.numpy as jnp
from jaxtyping import Array, Float

from ..core.spatial import safe_norm, solve3
from .rope import Rope
from .rope_elements import axial_gain

STABLE_PRODUCT = 1.8
"""Largest ``h omega_max`` a run may use (:func:`highest_frequency`): symplectic Euler's undamped limit is 2, and the
closing's rope ran stably at 1.99 with its dashpots and contacts; beyond 1.8 a run fails with ``solver_failure``."""


def highest_frequency(rope: Rope) -> Float[Array, ""]:
    """Upper estimate [rad/s] of a rope's highest natural frequency, the explicit part's stability limit: the
    axial zigzag ``omega_a^2 = 4 k_tes / m_i`` and the bending zigzag ``omega_b^2 = 16 k_tor / (l_0^2 m_i)``
    (Eqs. (26), (39); interior nodes, stiffest section, shortest section), added in squares since they couple in a
    curved rope."""
    mass = jnp.min(rope.masses[1:-1])
    axial = 4.0 * jnp.max(rope.axial_stiffness) / mass
    bending = 16.0 * rope.bending_stiffness / (jnp.min(rope.rest_lengths) ** 2 * mass)
    return jnp.sqrt(axial + bending)


def lumped_axial_damping(rope: Rope, x: Float[Array, "*R N1 3"]) -> Float[Array, "*R N1 3 3"]:
    """Lumped axial dashpots (Eq. (26)) of every node: ``2 g c_tes u u^T`` of each adjacent section (the consistent
    matrix ``g c_tes [[u u^T, -u u^T], [-u u^T, u u^T]]`` bounded by its block-diagonal dominance)."""
    d = x[..., 1:, :] - x[..., :-1, :]
    length = safe_norm(d)
    u = d / length[..., None]
    gain = axial_gain(length - rope.rest_lengths, rope.compression_ratio)
    blocks = 2.0 * (gain * rope.axial_damping)[..., None, None] * u[..., :, None] * u[..., None, :]
    batch = [(0, 0)] * (blocks.ndim - 3)
    return (jnp.pad(blocks, batch + [(1, 0), (0, 0), (0, 0)])
            + jnp.pad(blocks, batch + [(0, 1), (0, 0), (0, 0)]))


def implicit_kick(masses: Float[Array, " *R N"], dashpots: Float[Array, "*R N 3 3"], forces: Float[Array, "*R N 3"],
                  h) -> Float[Array, "*R N 3"]:
    """The free nodes' velocity change ``dv`` of the module docstring's kick (``masses`` [kg], ``dashpots`` the
    summed 3x3 rates ``D_i`` [N s/m], ``forces`` [N] at the step's start)."""
    return solve3(masses[..., None, None] * jnp.eye(3) + h * dashpots, h * forces)
