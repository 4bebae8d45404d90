r"""Fixed-step time stepping of the planar arm against the plane ``y = 0`` (paper sec. 4.1, steps 1-4).

Each step of ``dt`` (``lax.scan``, static length) evaluates ``M``, ``h`` and the tip kinematics at
``(q_k, u_k)``, the inputs ``Q_k``, solves the contact LCP of the chosen formulation
(:func:`diffspace.contact.unilateral.contact_step`) for the forces and the new rates ``u_{k+1}``, and
updates ``q_{k+1} = q_k + dt u_{k+1}`` (semi-implicit Euler: the paper's state equation (23)-(25) with the
contact forces of step 2 held over the step). At the acceleration level a step in which the tip has just
reached the plane with speed starts with an impact impulse (Newton restitution, Coulomb friction).
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float, Int

from ...contact.unilateral import contact_step, point_plane_contacts
from .control import InputProfiles, TaskController
from .model import PlanarArm

PLANE_NORMAL = (0.0, 1.0)
PLANE_TANGENT = ((1.0, 0.0),)


class StepOptions(eqx.Module):
    """Numerical settings of the time stepping (static: they fix the program, not the physics)."""

    formulation: str = eqx.field(static=True)
    dt: float = eqx.field(static=True)
    n_steps: int = eqx.field(static=True)
    baumgarte_rate: float = eqx.field(static=True)  # acceleration level, 1/s
    closed_gap: float = eqx.field(static=True)  # acceleration level, m
    restitution: float = eqx.field(static=True)  # acceleration level: Newton's coefficient of the impacts
    penetration_tolerance: float = eqx.field(static=True)  # reporting: deeper penetration is flagged, m


class ContactTrajectory(eqx.Module):
    """Samples at ``t_k = k dt``: states at ``k = 0..N``, step quantities (forces, inputs) at ``k < N``."""

    t: Float[Array, " N1"]
    q: Float[Array, "N1 6"]
    u: Float[Array, "N1 6"]
    tip: Float[Array, "N1 2"]
    tip_drift: Float[Array, "N 2"]  # J_P' u: the tip's velocity-product acceleration [m/s^2]
    normal_force: Float[Array, " N"]  # lambda_N on the tip along +y [N]
    tangent_force: Float[Array, " N"]  # lambda_T on the tip along +x [N]
    impact_impulse: Float[Array, "N 2"]  # impact impulse on the tip at the start of step k, (+x, +y) [N s]
    closing_speed: Float[Array, " N"]  # approach speed an impulse stops at step k, else 0 [m/s]
    mode: Int[Array, " N"]
    inputs: Float[Array, "N 6"]  # Q_k
    manipulability: Float[Array, " N"]  # w of the arm's tip Jacobian at step k [m^2]
    lcp_pivots: Int[Array, " N"]
    lcp_converged: Bool[Array, " N"]  # the step's force (or impulse) LCP
    impact_converged: Bool[Array, " N"]  # the impact LCP (acceleration level; the step's LCP otherwise)


def run(arm: PlanarArm, q0, u0, mu, controller: TaskController, profiles: InputProfiles,
        options: StepOptions) -> ContactTrajectory:
    """Simulate ``options.n_steps`` steps from ``(q0, u0)``; pure (jit/vmap/grad)."""
    reference = (q0, arm.tip_position(q0)[0])

    def step(state, k):
        q, u = state
        t = k * options.dt
        state = arm.evaluate(q, u)
        mass, bias, tip = state.mass, state.bias, state.tip
        control, manipulability = controller(t, q, u, tip.position, tip.jacobian, reference)
        inputs = profiles(t) + control
        contacts = point_plane_contacts(
            tip.position[None], tip.jacobian[None], tip.drift[None], PLANE_NORMAL, PLANE_TANGENT, mu
        )
        result = contact_step(
            options.formulation, mass, inputs - bias, u, contacts, options.dt,
            baumgarte_rate=options.baumgarte_rate, closed_gap=options.closed_gap, restitution=options.restitution,
        )
        u_next = result.velocity
        impulse = jnp.stack([result.tangent_impulse[0, 0], result.normal_impulse[0]])
        record = (q, u, tip.position, tip.drift, result.normal_force[0], result.tangent_force[0, 0], impulse,
                  result.closing_speed[0], result.mode[0], inputs, manipulability, result.info.iterations,
                  result.info.converged, result.impact_info.converged)
        return (q + options.dt * u_next, u_next), record

    (q_end, u_end), rec = jax.lax.scan(step, (q0, u0), jnp.arange(options.n_steps))
    q, u, tip, drift, lam_n, lam_t, impulse, closing, mode, inputs, manipulability, pivots, converged, impact = rec
    return ContactTrajectory(
        t=options.dt * jnp.arange(options.n_steps + 1),
        q=jnp.concatenate([q, q_end[None]]),
        u=jnp.concatenate([u, u_end[None]]),
        tip=jnp.concatenate([tip, arm.tip_position(q_end)[None]]),
        tip_drift=drift,
        normal_force=lam_n,
        tangent_force=lam_t,
        impact_impulse=impulse,
        closing_speed=closing,
        mode=mode,
        inputs=inputs,
        manipulability=manipulability,
        lcp_pivots=pivots,
        lcp_converged=converged,
        impact_converged=impact,
    )
