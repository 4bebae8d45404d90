"""Headline quantities of an ejection run, computed in JAX (so they batch under ``vmap`` and differentiate)."""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Float

from ..dynamics import kinetic_energy
from .ejection import FLIGHT, RAIL, EjectionModel, EjectionRun, rigid_motion


class EjectionResult(eqx.Module):
    """Scalars and per-joint values of one ejection (SI units; angles in radians here)."""

    equivalent_mass: Float[Array, ""]
    separated: Array
    separation_time: Float[Array, ""]
    separation_velocity: Float[Array, ""]
    joint_change_at_separation: Float[Array, " n"]
    stable: Array
    stable_time: Float[Array, ""]
    stable_velocity: Float[Array, ""]
    stable_angular_velocity: Float[Array, "3"]  # world axes, at the stable time
    joint_change_final: Float[Array, " n"]
    spring_energy: Float[Array, ""]
    kinetic_energy_final: Float[Array, ""]
    friction_loss: Float[Array, ""]
    status: Array


def ejection_result(model: EjectionModel, run: EjectionRun, joint_angles) -> EjectionResult:
    """Extract separation (first rail -> flight event), stable ejection (all joints stuck in flight) and energies."""
    sol = run.solution
    phase_before, phase_after = sol.segment_mode_before[0], sol.segment_mode_after[0]
    is_separation = sol.segment_event & (phase_before == RAIL) & (phase_after == FLIGHT)
    index = jnp.argmax(is_separation)
    q_sep, v_sep, _ = (x[index] for x in sol.segment_y)
    q_end, v_end, loss = sol.final_y
    final_phase, final_slip = sol.final_mode
    if model.friction.model == "locked":
        all_stuck = jnp.asarray(True)
    elif model.friction.model == "hybrid":
        all_stuck = jnp.all(final_slip == 0)
    else:
        all_stuck = jnp.asarray(False)
    stable = (final_phase == FLIGHT) & all_stuck
    last = jnp.argmax(jnp.where(sol.segment_event, sol.segment_end, -1.0))
    q_stable, v_stable, _ = (x[last] for x in sol.segment_y)
    # at t_s: in space a rigid body off its principal axes keeps changing its angular velocity afterwards
    com_velocity, omega = rigid_motion(model, q_stable, v_stable)
    return EjectionResult(
        equivalent_mass=run.equivalent_mass,
        separated=jnp.any(is_separation),
        separation_time=sol.segment_end[index],
        separation_velocity=model.rail_axis @ v_sep[:3],
        joint_change_at_separation=q_sep[7:] - joint_angles,
        stable=stable,
        stable_time=sol.segment_end[last],
        stable_velocity=jnp.linalg.norm(com_velocity),
        stable_angular_velocity=omega,
        joint_change_final=q_end[7:] - joint_angles,
        spring_energy=0.5 * model.stiffness * model.compression**2,
        kinetic_energy_final=kinetic_energy(model.robot, q_end, v_end),
        friction_loss=loss,
        status=sol.status,
    )
