r"""Fixed-step time stepping of the planar arm against the plane ``y = 0`` (paper sec. 4.1, steps 1-4).

Each step of ``dt`` (``lax.scan``, static length) evaluates ``M``, ``h`` and the tip kinematics at
``(q_k, u_k)``, the inputs ``Q_k``, solves the contact LCP of the chosen formulation
(:func:`diffspace.contact.unilateral.contact_step`) for the forces and the new rates ``u_{k+1}``, and
updates ``q_{k+1} = q_k + dt u_{k+1}`` (semi-implicit Euler: the paper's state equation (23)-(25) with the
contact forces of step 2 held over the step).
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


class Trajectory(eqx.Module):
    """Samples at ``t_k = k dt``: states at ``k = 0..N``, step quantities (forces, inputs) at ``k < N``."""

    t: Float[Array, " N1"]
    q: Float[Array, "N1 6"]
    u: Float[Array, "N1 6"]
    tip: Float[Array, "N1 2"]
    tip_drift: Float[Array, "N 2"]  # J_P' u: the tip's velocity-product acceleration [m/s^2]
    normal_force: Float[Array, " N"]  # lambda_N on the tip along +y [N]
    tangent_force: Float[Array, " N"]  # lambda_T on the tip along +x [N]
    mode: Int[Array, " N"]
    inputs: Float[Array, "N 6"]  # Q_k
    lcp_pivots: Int[Array, " N"]
    lcp_converged: Bool[Array, " N"]


def run(arm: PlanarArm, q0, u0, mu, controller: TaskController, profiles: InputProfiles,
        options: StepOptions) -> Trajectory:
    """Simulate ``options.n_steps`` steps from ``(q0, u0)``; pure (jit/vmap/grad)."""
    reference = (q0, arm.tip_position(q0)[0])

    def step(state, k):
        q, u = state
        t = k * options.dt
        state = arm.evaluate(q, u)
        mass, bias, tip = state.mass, state.bias, state.tip
        inputs = profiles(t) + controller(t, q, u, tip.position, tip.jacobian, reference)
        contacts = point_plane_contacts(
            tip.position[None], tip.jacobian[None], tip.drift[None], PLANE_NORMAL, PLANE_TANGENT, mu
        )
        result = contact_step(
            options.formulation, mass, inputs - bias, u, contacts, options.dt,
            baumgarte_rate=options.baumgarte_rate, closed_gap=options.closed_gap,
        )
        u_next = result.velocity
        record = (q, u, tip.position, tip.drift, result.normal_force[0], result.tangent_force[0, 0], result.mode[0], inputs,
                  result.info.iterations, result.info.converged)
        return (q + options.dt * u_next, u_next), record

    (q_end, u_end), rec = jax.lax.scan(step, (q0, u0), jnp.arange(options.n_steps))
    q, u, tip, drift, lam_n, lam_t, mode, inputs, pivots, converged = rec
    return Trajectory(
        t=options.dt * jnp.arange(options.n_steps + 1),
        q=jnp.concatenate([q, q_end[None]]),
        u=jnp.concatenate([u, u_end[None]]),
        tip=jnp.concatenate([tip, arm.tip_position(q_end)[None]]),
        tip_drift=drift,
        normal_force=lam_n,
        tangent_force=lam_t,
        mode=mode,
        inputs=inputs,
        lcp_pivots=pivots,
        lcp_converged=converged,
    )
