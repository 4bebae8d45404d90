"""Headline quantities of an ejection run, computed in JAX (so they batch under ``vmap`` and differentiate).

Status: ``NOT_CONVERGED`` when a stick/slip choice at an event found no consistent mode (its LCP did not
converge), ``NO_EVENT`` when the arm never left the rail within the horizon (then no separation quantity is
defined and they are NaN), the solver's status otherwise, and the warnings ``LIMIT_CROSSED`` (``limits =
"flag"``: a joint crossed a limit) and ``NOT_SETTLED`` when the joints can stick (hybrid friction) but were
still slipping at the end (then the stable quantities are NaN).
"""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float, Int

from ...core.dynamics import kinetic_energy
from ...integrate import HybridSolution
from ...core.spatial import safe_norm
from ...core.status import Status, first_failure, flag
from .model import FLIGHT, RAIL, EjectionModel, EjectionRun, rigid_motion
from .paper import PaperResult


class EjectionOutcome(eqx.Module):
    """One ejection (SI units; angles in radians; NaN where undefined, see the module docstring)."""

    equivalent_mass: Float[Array, ""]
    equivalent_mass_space_frictionless: Float[Array, ""]
    equivalent_mass_plane_frictionless: Float[Array, ""]
    separated: Bool[Array, ""]
    separation_time: Float[Array, ""]
    separation_velocity: Float[Array, ""]
    joint_change_at_separation: Float[Array, " n"]
    stable: Bool[Array, ""]
    stable_time: Float[Array, ""]
    stable_velocity: Float[Array, ""]
    stable_angular_velocity: Float[Array, "3"]  # world axes, at the stable time
    joint_change_final: Float[Array, " n"]
    spring_energy: Float[Array, ""]
    kinetic_energy_final: Float[Array, ""]
    friction_loss: Float[Array, ""]
    stop_loss: Float[Array, ""]  # kinetic energy lost in stop impacts
    limit_crossing_time: Float[Array, " n"]  # limits = "flag": first crossing per joint (inf: never)
    solution: HybridSolution
    status: Int[Array, ""]
    paper: PaperResult | None  # the paper's recursion on the same case (``ejection.method = "paper"``)

    @property
    def tumbling_rate(self) -> Float[Array, ""]:
        """|omega| at the stable time [rad/s] (NaN when not stable; finite gradient at zero)."""
        return safe_norm(self.stable_angular_velocity)


def _nan_unless(ok, x):
    return jnp.where(ok, x, jnp.nan)


def ejection_outcome(model: EjectionModel, run: EjectionRun, joint_angles, frictionless_masses,
                     paper: PaperResult | None):
    """Separation (first rail -> flight event), stable ejection (all joints stuck in flight), energies."""
    sol = run.solution
    is_separation = sol.segment_event & (sol.segment_mode_before.phase == RAIL) & (sol.segment_mode_after.phase == FLIGHT)
    separated = jnp.any(is_separation)
    index = jnp.argmax(is_separation)
    q_sep, v_sep = sol.segment_y.q[index], sol.segment_y.v[index]
    end, final = sol.final_y, sol.final_mode
    can_stick = model.friction.model in ("hybrid", "locked")
    all_held = (final.slip == 0) | (final.stop != 0)
    all_stuck = jnp.asarray(True) if model.friction.model == "locked" else jnp.all(all_held)
    stable = (final.phase == FLIGHT) & all_stuck & can_stick
    last = jnp.argmax(jnp.where(sol.segment_event, sol.segment_end, -1.0))
    q_stable, v_stable = sol.segment_y.q[last], sol.segment_y.v[last]
    # at t_s: in space a rigid body off its principal axes keeps changing its angular velocity afterwards
    com_velocity, omega = rigid_motion(model, q_stable, v_stable)
    crossed = jnp.any(jnp.isfinite(final.crossed_time))
    status = first_failure(sol.status, flag(~final.consistent, Status.NOT_CONVERGED), flag(~separated, Status.NO_EVENT),
                           flag(crossed, Status.LIMIT_CROSSED),
                           flag(can_stick & ~stable, Status.NOT_SETTLED))
    m_space, m_plane = frictionless_masses
    return EjectionOutcome(
        equivalent_mass=run.equivalent_mass,
        equivalent_mass_space_frictionless=m_space,
        equivalent_mass_plane_frictionless=m_plane,
        separated=separated,
        separation_time=_nan_unless(separated, sol.segment_end[index]),
        separation_velocity=_nan_unless(separated, model.rail_axis @ v_sep[:3]),
        joint_change_at_separation=_nan_unless(separated, q_sep[7:] - joint_angles),
        stable=stable,
        stable_time=_nan_unless(stable, sol.segment_end[last]),
        stable_velocity=_nan_unless(stable, safe_norm(com_velocity)),
        stable_angular_velocity=_nan_unless(stable, omega),
        joint_change_final=end.q[7:] - joint_angles,
        spring_energy=0.5 * model.stiffness * model.compression**2,
        kinetic_energy_final=kinetic_energy(model.robot, end.q, end.v),
        friction_loss=end.dissipated,
        stop_loss=end.stop_loss,
        limit_crossing_time=final.crossed_time,
        solution=sol,
        status=status,
        paper=paper,
    )
