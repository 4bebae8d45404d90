r"""A grapple shaft striking one snare rope: the paper's virtual-spring impact and the full dynamic rope impact
(seed: Cai et al. 2021, Aerospace 8:381, Sections 3.2 and 4.2). Both are pure JAX (jit/vmap/grad).

* **virtual spring** (Eq. (43)): the striking mass on the node's :class:`~diffspace.bodies.snare.VirtualSpring`,
  a 1-D impact with touch, peak-force, maximum-indentation and release events
  (:func:`diffspace.contact.virtual_spring.virtual_impact`);
* **full dynamic rope**: all nodes (Newton's law Eq. (24) with the rope's internal forces) plus a translating
  rigid shaft of the striking mass, with the shaft-node contact law at every node (no events: the ``n = 1.5``
  law is C1 at touch and release). The peak force is the largest sample of the total contact force refined by a
  parabola (:func:`parabolic_peak`).

Two schemes integrate the full rope. ``"tsit5"``: Tsit5 + PID, whose step is set by stability (the axial modes,
``2 sqrt(k_tes / m_i) = 2.3e5 rad/s`` for the shipped rope: 15,000 steps of six right-hand sides). ``"semi_implicit"``
(:func:`strike_step`): the average-acceleration Newmark method for the axial springs and dashpots and the contact's
normal spring and dashpot (their consistent Jacobians, block tridiagonal along the rope), linearised once per step,
and the bending forces explicit (:mod:`~diffspace.bodies.rope_stepping`): one right-hand side and one
block-tridiagonal solve per step at a fixed step, ``max_step`` or 0.99 of the bending forces' stability limit if
that is shorter (:func:`strike_step_length`), so any rope runs stably; second order.
"""

from __future__ import annotations

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float, Int

from ..contact.impact import ImpactOutcome
from ..contact.virtual_spring import linear_contact_time, virtual_impact
from ..integrate import SolverSettings, ZeroStep, bounded_step_solve, solve_smooth
from ..core.spatial import safe_norm
from ..core.status import Status, first_failure, flag
from .rope import assemble, rope_accelerations
from .rope_stepping import (axial_dashpot_blocks, axial_spring_blocks, bending_step, effective_jacobian,
                            implicit_accelerations, linear_forces, section_blocks)
from .snare import SnareModel, contact_direction

SCHEMES = ("semi_implicit", "tsit5")
MAX_STEP = 2e-5
"""Default upper bound [s] of the semi-implicit scheme's step (:func:`strike_step_length`)."""
STEP_FRACTION = 0.99
"""The semi-implicit step as a fraction of the stability limit (:func:`~diffspace.bodies.rope_stepping.bending_step`)."""


def snare_virtual_impact(model: SnareModel, coefficients, speed, *, n_save: int = 2, adjoint=None) -> ImpactOutcome:
    """Impact of ``model.mass`` at ``speed`` on the virtual spring ``coefficients`` (damping ``c_v``), over
    20 linearised contact times."""
    return virtual_impact(coefficients, model.virtual_damping, model.mass, speed, n_save=n_save, adjoint=adjoint)


class RopeImpact(eqx.Module):
    """Full dynamic rope impact (SI). ``peak_force`` (norm of the total contact force on the shaft, parabolic
    refinement of the samples), ``impulse``, ``rebound_speed`` and ``restitution`` at the horizon,
    ``max_travel`` (shaft, along the approach), ``max_node_displacement`` (``delta_v`` of the struck node),
    ``separated`` (force zero and shaft receding at the horizon), ``status`` (``SOLVER_FAILURE`` /
    ``NO_EVENT`` when not separated), and the series (``series_inner_nodes``: the free nodes)."""

    peak_force: Float[Array, ""]
    impulse: Float[Array, ""]
    rebound_speed: Float[Array, ""]
    restitution: Float[Array, ""]
    max_travel: Float[Array, ""]
    max_node_displacement: Float[Array, ""]
    separated: Bool[Array, ""]
    status: Int[Array, ""]
    num_steps: Int[Array, ""]
    series_time: Float[Array, " T"]
    series_force: Float[Array, " T"]
    series_node_forces: Float[Array, "T N1"]
    series_travel: Float[Array, " T"]
    series_inner_nodes: Float[Array, "T Nm1 3"]


def strike_rates(t, y, previous, h, args):
    """What the strike's step applies at ``t`` (:mod:`~diffspace.bodies.rope_stepping`; positions and velocities of
    ``y`` the predictors ``x^``, ``v^`` and the shaft's ``p_{n+1}`` and predicted ``w~``; ``previous`` the
    accelerations ``a_n``): the rates ``(v, a, w, A, F)`` of ``y = (interior nodes, their velocities, shaft position,
    shaft velocity, contact impulse)`` at the whole step, ``args = (model, impact speed)``. The shaft receives exactly
    the contact force the nodes received (linearised to the whole step, the prescribed end nodes' included), so the
    impulse is the shaft's momentum change."""
    model, speed = args
    rope, shaft = model.rope, model.shaft
    xi, vi, p, w, _ = y
    x, v, attach, attach_rate = _rope_state(model, t, xi, vi)
    lag = jnp.pad(0.5 * h * previous, ((1, 1), (0, 0)))  # v~ - v^
    touch = shaft.contact(model.law, rope, x, v, p, w, speed)
    f_c = touch.forces
    damping = section_blocks(axial_dashpot_blocks(rope, x))
    forces = rope.internal_forces(x, v + lag, attach, attach_rate) - linear_forces(damping, lag) + f_c
    diag, off = effective_jacobian(damping, section_blocks(axial_spring_blocks(rope, x)), h)
    contact = touch.blocks(h)
    acc = implicit_accelerations(rope.masses, (diag + contact, off), forces, h)
    dv = jnp.pad(0.5 * h * acc, ((1, 1), (0, 0)))
    f_shaft = -jnp.sum(f_c + linear_forces((contact, jnp.zeros_like(off)), dv), axis=0)
    return vi + dv[1:-1], acc, w, f_shaft / model.mass, f_shaft


def strike_field(t, y, args):
    """The strike's equations of motion, ``dy/dt`` at ``t`` for ``y = (interior nodes, their velocities, shaft
    position, shaft velocity, contact impulse)``, ``args = (model, impact speed)``: the nodes' Newton's law Eq. (24)
    with the shaft's contact forces, the shaft's under their opposite sum (the ``tsit5`` scheme's vector field)."""
    model, speed = args
    xi, vi, p, w, _ = y
    x, v, attach, attach_rate = _rope_state(model, t, xi, vi)
    f_nodes, _ = model.shaft.forces(model.law, model.rope, x, v, p, w, speed)
    f_shaft = -jnp.sum(f_nodes, axis=0)
    return vi, rope_accelerations(model.rope, x, v, f_nodes, attach, attach_rate), w, f_shaft / model.mass, f_shaft


def _rope_state(model: SnareModel, t, xi, vi):
    """All nodes' positions and velocities at ``t`` (the interior ones ``xi``, ``vi`` and the ring-held ends) and the
    fittings' axes and their rates."""
    a, b, va, vb = model.rings.end_states(t)
    attach, attach_rate = model.rings.attachment_states(t)
    return assemble(xi, a, b), assemble(vi, va, vb), attach, attach_rate


def strike_step(t, y, rates, h, args):
    """One step of the strike's scheme from ``(y_n, rates_n)`` at ``t`` (:func:`strike_rates`; the nodes' predictors
    ``x^ = x_n + h v_n + h^2/4 a_n``, ``v^ = v_n + h/2 a_n``, the shaft's velocity Verlet):
    ``(y_{n+1}, rates_{n+1})``."""
    xi, vi, p, w, impulse = y
    xi, vi = xi + h * vi + 0.25 * h**2 * rates[1], vi + 0.5 * h * rates[1]
    w_half = w + 0.5 * h * rates[3]
    new = strike_rates(t + h, (xi, vi, p + h * w_half, w_half + 0.5 * h * rates[3], impulse), rates[1], h, args)
    return (xi + 0.5 * h * (new[0] - vi), new[0], p + h * w_half, w_half + 0.5 * h * new[3],
            impulse + 0.5 * h * (rates[4] + new[4])), new


STRIKE_SOLVER = SolverSettings(rtol=1e-6, atol=1e-9, n_save=600, max_steps=200_000)
"""Default solver settings of the strike (the tolerances serve ``scheme = "tsit5"``)."""


class StrikeSolution(eqx.Module):
    """The strike's states ``ys`` at the saved times ``ts`` (``(interior nodes, their velocities, shaft position,
    shaft velocity, contact impulse)``), the steps taken and whether the solve completed."""

    ts: Float[Array, " T"]
    ys: tuple
    num_steps: Int[Array, ""]
    solved: Bool[Array, ""]


def rope_impact_solve(model: SnareModel, x_eq, node, speed, t_end, settings: SolverSettings = STRIKE_SOLVER, *,
                      gap=0.0, scheme: str = "tsit5", max_step: float = MAX_STEP, adjoint=None):
    r"""Full dynamic impact: the shaft (isotropic ``model.mass``, translating) moves with ``speed`` along the
    approach direction of node ``node`` (0-based) and touches it after ``gap`` [m]; the rope starts at rest
    in ``x_eq``; the rotating-ring end follows the drive. State: interior nodes, shaft position/velocity and
    the contact impulse, saved at ``settings.n_save`` times. ``scheme``: ``"tsit5"`` (adaptive,
    ``settings.rtol``/``atol``, :func:`~diffspace.integrate.solve_smooth`) or ``"semi_implicit"`` (:func:`strike_step`
    at equal steps no longer than :func:`strike_step_length`, the saved times exact step ends,
    :func:`~diffspace.integrate.bounded_step_solve`); both within ``settings.max_steps``. Returns
    ``(StrikeSolution, approach direction)``."""
    rope, shaft = model.rope, model.shaft
    u = contact_direction(x_eq, node, model.approach)
    speed = jnp.asarray(speed, float)
    p0 = x_eq[node] - (shaft.radius + rope.radius + gap) * u
    y0 = (x_eq[1:-1], jnp.zeros_like(x_eq[1:-1]), p0, speed * u, jnp.zeros(3))
    args = (model, speed)
    if scheme == "tsit5":
        sol = solve_smooth(strike_field, y0, t_end, settings, args=args, adjoint=adjoint)
        return StrikeSolution(sol.ts, sol.ys, sol.stats["num_steps"], sol.result == diffrax.RESULTS.successful), u
    if scheme != "semi_implicit":
        raise ValueError(f"scheme must be one of {SCHEMES}, not {scheme!r}")
    start = ZeroStep(jax.tree_util.tree_map(jnp.zeros_like, y0))  # Newmark's M a_0 = F(x_0, v_0): a zero-length step
    sol = bounded_step_solve(lambda t, y, c, h: strike_step(t, y, c, h, args), start, y0, t_end, settings.n_save,
                             strike_step_length(model, max_step), settings.max_steps,
                             "forward" if isinstance(adjoint, diffrax.ForwardMode) else "reverse")
    return StrikeSolution(sol.ts, sol.ys, sol.num_steps, sol.finite & sol.within_budget), u


def strike_step_length(model: SnareModel, max_step) -> Array:
    """The semi-implicit scheme's fixed step [s]: ``max_step``, or ``STEP_FRACTION`` of the rope's stability limit
    if that is shorter (:func:`~diffspace.bodies.rope_stepping.bending_step`, the explicit bending forces; 1.97e-5 s
    for the shipped rope, which therefore runs at that step)."""
    return jnp.minimum(max_step, STEP_FRACTION * bending_step(model.rope))


def parabolic_peak(values):
    """Maximum of sampled values refined by the parabola through the best sample and its neighbours."""
    j = jnp.clip(jnp.argmax(values), 1, values.shape[0] - 2)
    a, b, c = values[j - 1], values[j], values[j + 1]
    curv = a - 2.0 * b + c
    safe = jnp.where(curv < 0.0, curv, -1.0)
    return jnp.where(curv < 0.0, b - (c - a) ** 2 / (8.0 * safe), jnp.max(values))


def dynamic_impact(model: SnareModel, x_eq, node, speed, t_end, settings: SolverSettings = STRIKE_SOLVER,
                   **options) -> RopeImpact:
    """:func:`rope_impact_solve` and its results (``options``: ``gap``, ``scheme``, ``max_step``, ``adjoint``); a
    solve that stops early or a non-finite force is a ``SOLVER_FAILURE``."""
    sol, u = rope_impact_solve(model, x_eq, node, speed, t_end, settings, **options)
    xi, vi, p, w, impulse = sol.ys
    a, b, va, vb = jax.vmap(model.rings.end_states)(sol.ts)

    def sample(xi, vi, p, w, a, b, va, vb):
        x, v = assemble(xi, a, b), assemble(vi, va, vb)
        f_nodes, mags = model.shaft.forces(model.law, model.rope, x, v, p, w, speed)
        return safe_norm(jnp.sum(f_nodes, axis=0)), mags  # zero between contacts: safe gradient

    force, mags = jax.vmap(sample)(xi, vi, p, w, a, b, va, vb)
    rebound = -(w[-1] @ u)
    separated = (force[-1] == 0.0) & (rebound > 0.0)
    solved = sol.solved & jnp.all(jnp.isfinite(force))
    return RopeImpact(
        peak_force=parabolic_peak(force), impulse=safe_norm(impulse[-1]), rebound_speed=rebound,
        restitution=rebound / speed, max_travel=jnp.max((p - p[0]) @ u),
        max_node_displacement=jnp.max((xi[:, node - 1] - x_eq[node]) @ u), separated=separated,
        status=first_failure(flag(~solved, Status.SOLVER_FAILURE), flag(~separated, Status.NO_EVENT)),
        num_steps=sol.num_steps, series_time=sol.ts, series_force=force, series_node_forces=mags,
        series_travel=(p - p[0]) @ u, series_inner_nodes=xi,
    )


def dynamic_horizon(model: SnareModel, coefficients, virtual: ImpactOutcome, speed, gap, factor) -> Array:
    """Horizon of a full dynamic impact [s]: ``factor`` times the longer of the linearised contact time and the
    virtual-spring impact's contact duration (softening nodes release late; the linearised time if the
    virtual impact did not separate), plus the approach across ``gap``. Not differentiated."""
    t_lin = linear_contact_time(model.mass, coefficients[0])
    duration = jnp.where(virtual.separated, virtual.contact_duration, t_lin)
    horizon = factor * jnp.maximum(duration, t_lin) + gap / speed
    return jax.lax.stop_gradient(horizon)
