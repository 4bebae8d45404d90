"""What a flexible-arm run returns (both formulations on one output grid) and its headline scalars."""

from __future__ import annotations

import jax.numpy as jnp
from jaxtyping import Array, Float, Int

from ...core.spatial import safe_norm
from ..base import AbstractOutcome
from .model import Motion


class FlexibleArmOutcome(AbstractOutcome):
    """Both runs on the output grid. ``maximal``: the paper's formulation (flexible or rigid last link);
    ``reference``: the rigid arm in minimal coordinates. ``momentum``: ``[linear; angular]`` (world origin);
    ``energy``: kinetic plus elastic (J); ``input_power``: power of the joint torques (W), so that
    ``dE/dt = input_power - modal damping losses``; ``mass_centre``: of the whole system, the deflection included
(world, m). ``reaction_force``: force of the parent on the child at each
    joint (world, N; ``None`` when not asked for)."""

    ts: Float[Array, " T"]
    maximal: Motion
    reference: Motion
    modal: Float[Array, "T k"]
    modal_rate: Float[Array, "T k"]
    tip_deflection: Float[Array, " T"]
    constraint_violation: Float[Array, " T"]
    velocity_violation: Float[Array, " T"]
    momentum: Float[Array, "T 6"]
    mass_centre: Float[Array, "T 3"]
    energy: Float[Array, " T"]
    input_power: Float[Array, " T"]
    reaction_force: Float[Array, "T 2 3"] | None
    maximal_steps: Int[Array, ""]
    reference_steps: Int[Array, ""]
    maximal_status: Int[Array, ""]
    reference_status: Int[Array, ""]
    status: Int[Array, ""]

    @property
    def end_effector_difference(self) -> Float[Array, " T"]:
        """``|p_maximal - p_reference|`` of the end effector (finite gradients where it vanishes)."""
        return safe_norm(self.maximal.end_effector - self.reference.end_effector)


def key_results(out: FlexibleArmOutcome) -> dict[str, Array]:
    """The scalars both ``metrics`` and the summary report (SI)."""
    difference = out.end_effector_difference
    mean_square = jnp.mean(difference**2)
    positive = mean_square > 0.0
    return {
        "end_effector_difference_max_m": jnp.max(difference),
        "end_effector_difference_rms_m": jnp.where(positive, jnp.sqrt(jnp.where(positive, mean_square, 1.0)), 0.0),
        "tip_deflection_max_m": jnp.max(out.tip_deflection),
        "base_angle_final_deg": jnp.rad2deg(out.maximal.base_angle[-1]),
        "constraint_violation_max": jnp.max(out.constraint_violation),
        "momentum_drift_max": jnp.max(jnp.abs(out.momentum - out.momentum[0])),
        "mass_centre_drift_max_m": jnp.max(safe_norm(out.mass_centre - out.mass_centre[0])),
    }
