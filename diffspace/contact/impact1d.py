"""Differentiable one-dimensional impact of two bodies through a compliant contact law.

Relative coordinate ``delta`` (indentation, < 0 = gap) with the equivalent mass ``m = m1 m2 / (m1 + m2)``
(paper Eqs. (4)-(5)) and an optional constant friction force ``f`` on the relative motion (paper Eq. (10)):

    m delta_ddot = -F(delta, delta_dot; v0) + f_fric,        v0 = delta_dot at first touch

Phases, each one ``diffrax.diffeqsolve`` ended by a real-valued ``Event`` whose time is located by an
Optimistix Newton root find on the step's dense interpolant, so every event time is differentiable
(``RecursiveCheckpointAdjoint`` for reverse mode, or ``ForwardMode``):

0. approach (only with ``approach_phase=True`` and a gap > 0): free flight until the touch (``delta`` rises
   to 0) or until the bodies stop (``delta_dot`` falls to 0, Coulomb friction), whichever is first;
1. contact: from the touch until release, the first of ``delta`` falling to 0 (geometric separation) or
   :meth:`ContactLaw.release_indicator` falling to 0 (the non-adhesive force vanishes while ``delta > 0``,
   Kelvin-Voigt). With Coulomb friction, whose sign flips at maximum indentation, this phase is split into
   compression (ends at ``delta_dot = 0``) and restitution, so that the switch is an event too.

The peak force and the maximum indentation are maxima over the contact's dense output: a 48-point grid,
then successive parabolic interpolation; their gradients use the envelope theorem (the time of the maximum
is ``stop_gradient``-ed, which is exact to first order at a maximum).

Friction models on the relative coordinate (``f = friction_force`` >= 0):
``none``; ``paper`` (Eq. (10): ``+f`` during contact only, i.e. pushing the bodies together, which is the sign
that reproduces the paper's trend of higher peak force and lower rebound); ``coulomb`` (``-f sign(delta_dot)``
in every phase: slows the approach, and both compression and rebound).

The ODE is integrated in scaled variables ``x = delta / d_ref``, ``u = delta_dot / v_a``, ``tau = t v_a /
d_ref`` (``v_a`` approach speed, ``d_ref`` the undamped Hertz maximum indentation), so one ``rtol``/``atol``
suits steel spheres and air-table bumpers alike. Besides ``(x, u)`` the state carries the impulse
``J = int F dt``, the damping dissipation ``int (F - k delta^n) delta_dot dt`` and the friction work
``int f_fric delta_dot dt``.
"""

from __future__ import annotations

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import optimistix as optx
from jaxtyping import Array, Float

from .forces import ChiLaw, ContactLaw

FRICTION_MODELS = ("none", "paper", "coulomb")
_PEAK_GRID = 48
_PEAK_ITERS = 8


def reference_indentation(law: ContactLaw, mass, speed) -> Array:
    """Undamped maximum indentation ``((n + 1) m v^2 / (2 k))^(1/(n+1))`` [m] (energy balance, paper Eq. (7))."""
    n = law.exponent
    return ((n + 1.0) * mass * speed**2 / (2.0 * law.stiffness)) ** (1.0 / (n + 1.0))


def _friction(model: str, phase: str, f):
    """Friction force on the relative coordinate in a phase (positive = towards more indentation)."""
    if model == "none" or (model == "paper" and phase == "approach"):
        return jnp.zeros_like(f)
    if model == "paper" or phase == "restitution":
        return f
    return -f  # coulomb while approaching or compressing


def _solve(phase, law, mass, f, model, scales, y0, tau0, tau_max, cond_fns, directions, opts, dense):
    rtol, atol, max_steps, adjoint = opts
    d_ref, v_a, t_ref, v_imp = scales
    f_fric = _friction(model, phase, f)

    def field(tau, y, args):
        delta, v = d_ref * y[0], v_a * y[1]
        # free flight before the touch event: no force even in Runge-Kutta stages that overshoot delta = 0
        # (the onset ~ delta^n is not smooth and would spoil the event-time derivatives)
        force = jnp.zeros_like(delta) if phase == "approach" else law.force(delta, v, v_imp)
        power_damp = (force - law.elastic_force(delta)) * v
        return jnp.stack([
            y[1],
            (-force + f_fric) / mass * t_ref / v_a,
            force * t_ref / (mass * v_a),
            power_damp * t_ref / (mass * v_a**2),
            f_fric * v * t_ref / (mass * v_a**2),
        ])

    event = diffrax.Event(cond_fns, root_finder=optx.Newton(rtol=1e-13, atol=1e-13), direction=directions)
    return diffrax.diffeqsolve(
        diffrax.ODETerm(field), diffrax.Tsit5(), t0=tau0, t1=tau_max, dt0=None, y0=y0,
        saveat=diffrax.SaveAt(t1=True, dense=dense), stepsize_controller=diffrax.PIDController(rtol=rtol, atol=atol),
        event=event, max_steps=max_steps, throw=False,
        adjoint=diffrax.ForwardMode() if adjoint == "forward" else diffrax.RecursiveCheckpointAdjoint(),
    )


def _no_grad(tree):
    return jax.tree_util.tree_map(lambda x: jax.lax.stop_gradient(x) if eqx.is_array(x) else x, tree)


def _argmax_times(objectives, lo, hi):
    """Times maximising each of the scalar functions ``objectives(t) -> (k,)`` on ``[lo, hi]``: a 48-point
    grid, then 8 steps of successive parabolic interpolation on each bracketing triple (superlinear).
    Not differentiated: a maximum's value is differentiated at a fixed time (envelope theorem)."""
    grid = jnp.linspace(lo, hi, _PEAK_GRID)
    values = jax.vmap(objectives)(grid)  # (G, k)
    k = values.shape[1]
    j = jnp.argmax(values, axis=0)
    i = jnp.clip(j, 1, _PEAK_GRID - 2)
    cols = jnp.arange(k)
    abc = jnp.stack([grid[i - 1], grid[i], grid[i + 1]])  # (3, k)
    gabc = jnp.stack([values[i - 1, cols], values[i, cols], values[i + 1, cols]])

    def step(carry, _):
        (a, b, c), (ga, gb, gc) = carry
        num = (b - a) ** 2 * (gb - gc) - (b - c) ** 2 * (gb - ga)
        den = (b - a) * (gb - gc) - (b - c) * (gb - ga)
        t = b - 0.5 * num / jnp.where(den == 0.0, 1.0, den)
        fallback = jnp.where((b - a) > (c - b), 0.5 * (a + b), 0.5 * (b + c))
        t = jnp.where((den == 0.0) | ~jnp.isfinite(t) | (t <= a) | (t >= c) | (t == b), fallback, t)
        gt = jax.vmap(lambda tt, col: objectives(tt)[col])(t, cols)
        left, better = t < b, gt > gb
        new = jnp.where(left, jnp.where(better, jnp.stack([a, t, b]), jnp.stack([t, b, c])),
                        jnp.where(better, jnp.stack([b, t, c]), jnp.stack([a, b, t])))
        new_g = jnp.where(left, jnp.where(better, jnp.stack([ga, gt, gb]), jnp.stack([gt, gb, gc])),
                          jnp.where(better, jnp.stack([gb, gt, gc]), jnp.stack([ga, gb, gt])))
        return (tuple(new), tuple(new_g)), None

    (abc, gabc), _ = jax.lax.scan(step, (tuple(abc), tuple(gabc)), None, length=_PEAK_ITERS)
    return jnp.where(gabc[1] >= values[j, cols], abc[1], grid[j])


def simulate_impact(
    law: ContactLaw | ChiLaw,
    mass: Float[Array, ""],
    approach_speed: Float[Array, ""],
    friction_force: Float[Array, ""] | float = 0.0,
    gap: Float[Array, ""] | float = 0.0,
    t_max: Float[Array, ""] | float = 10.0,
    *,
    friction_model: str = "none",
    approach_phase: bool = False,
    rtol: float = 1e-10,
    atol: float = 1e-12,
    max_steps: int = 4096,
    n_save: int = 0,
    adjoint: str = "reverse",
) -> dict[str, Array]:
    """Simulate one impact; return a dict of scalars (SI) plus flags and, if ``n_save > 0``, time series.

    ``mass`` equivalent mass [kg], ``approach_speed`` relative speed at ``t = 0`` [m/s] (> 0 approaching),
    ``friction_force`` [N] (>= 0, see the module docstring for ``friction_model``), ``gap`` initial separation
    [m] (used only with ``approach_phase=True``, and then it must be > 0), ``t_max`` horizon [s] from ``t = 0``.
    ``rtol``/``atol`` apply to the scaled state. Flags: ``contact_made``, ``separated`` (both must be true
    for a valid result; the caller raises, since this function may run under ``jit``/``vmap``/``grad``).
    Pure; jit/vmap/grad-compatible.
    ``adjoint="reverse"`` (default): ``RecursiveCheckpointAdjoint`` (``jax.grad``/``jacrev``; it has no
    forward-mode rule); ``"forward"``: ``diffrax.ForwardMode`` for ``jax.jvp``/``jacfwd`` (cheaper Jacobians
    with few parameters, e.g. identification).
    """
    if adjoint not in ("reverse", "forward"):
        raise ValueError("adjoint must be 'reverse' or 'forward'")
    if friction_model not in FRICTION_MODELS:
        raise ValueError(f"friction_model must be one of {FRICTION_MODELS}")
    return _simulate(
        law.canonical() if isinstance(law, ContactLaw) else law, mass, approach_speed, friction_force, gap, t_max,
        friction_model=friction_model, approach_phase=approach_phase, rtol=rtol, atol=atol, max_steps=max_steps,
        n_save=n_save, adjoint=adjoint,
    )


@eqx.filter_jit
def _simulate(law, mass, approach_speed, friction_force, gap, t_max, *, friction_model, approach_phase, rtol, atol,
              max_steps, n_save, adjoint):
    mass = jnp.asarray(mass, float)
    v_a = jnp.asarray(approach_speed, float)
    f = jnp.asarray(friction_force, float)
    d_ref = reference_indentation(law, mass, v_a)
    t_ref = d_ref / v_a
    tau_max = jnp.asarray(t_max, float) / t_ref
    opts = (rtol, atol, max_steps, adjoint)
    zero, one = jnp.zeros(()), jnp.ones(())

    if approach_phase:
        y0 = jnp.stack([-jnp.asarray(gap, float) / d_ref, one, zero, zero, zero])
        # one scalar condition (cheaper root find): touch (-x falls to 0) or stop (u falls to 0)
        sol0 = _solve("approach", law, mass, f, friction_model, (d_ref, v_a, t_ref, v_a), y0, zero, tau_max,
                      lambda t, y, args, **kw: jnp.minimum(-y[0], y[1]), False, opts, False)
        tau_c, y_c = sol0.ts[-1], sol0.ys[-1]
        contact_made = diffrax.is_event(sol0.result) & (y_c[1] > -y_c[0])
    else:
        tau_c, y_c = zero, jnp.stack([zero, one, zero, zero, zero])
        contact_made = jnp.asarray(True)
    y_c = y_c.at[0].set(0.0)
    v_imp = v_a * y_c[1]
    scales = (d_ref, v_a, t_ref, v_imp)

    def release(t, y, args, **kw):  # geometric separation (x = 0) or force release (Kelvin-Voigt), first of
        return jnp.minimum(y[0], law.release_indicator(d_ref * y[0], v_a * y[1], v_imp))

    release_events = (release, False)
    if friction_model == "coulomb":  # friction flips at maximum compression: split there (exact gradients)
        sol1 = _solve("compression", law, mass, f, friction_model, scales, y_c, tau_c, tau_max,
                      lambda t, y, args, **kw: y[1], False, opts, True)
        tau_m = sol1.ts[-1]
        sol2 = _solve("restitution", law, mass, f, friction_model, scales, sol1.ys[-1], tau_m, tau_max,
                      *release_events, opts, n_save > 0)
        separated = diffrax.is_event(sol1.result) & diffrax.is_event(sol2.result)
        phases = (sol1, sol2)
    else:
        sol2 = _solve("contact", law, mass, f, friction_model, scales, y_c, tau_c, tau_max, *release_events, opts, True)
        separated = diffrax.is_event(sol2.result)
        phases = (sol2,)
    sol_c = phases[0]  # holds the peak force and the maximum indentation
    tau_r, y_r = sol2.ts[-1], sol2.ys[-1]
    tau_end = sol_c.ts[-1]

    force_of = lambda lw, y: lw.force(d_ref * y[0], v_a * y[1], v_imp)  # noqa: E731
    sol_ng, law_ng = _no_grad(sol_c), _no_grad(law)
    lo, hi = jax.lax.stop_gradient(tau_c), jax.lax.stop_gradient(tau_end)

    def objectives(t):  # peak force, maximum indentation
        y = sol_ng.evaluate(t)
        return jnp.stack([force_of(law_ng, y), y[0]])

    tau_p, tau_x = jax.lax.stop_gradient(_argmax_times(objectives, lo, hi))
    f_peak = jnp.maximum(force_of(law, sol_c.evaluate(tau_p)), law.first_touch_force(v_imp))  # KV: F(0+) = D v0
    if friction_model == "coulomb":
        tau_m, x_max = tau_end, sol_c.ys[-1][0]
    else:
        tau_m, x_max = tau_x, sol_c.evaluate(tau_x)[0]

    delta_r = jnp.maximum(d_ref * y_r[0], 0.0)
    out = {
        "contact_start_time_s": t_ref * tau_c,
        "impact_speed_m_s": v_imp,
        "peak_force_N": f_peak,
        "peak_force_time_s": t_ref * tau_p,
        "max_indentation_m": d_ref * x_max,
        "max_compression_time_s": t_ref * tau_m,
        "release_time_s": t_ref * tau_r,
        "contact_duration_s": t_ref * (tau_r - tau_c),
        "detached_velocity_m_s": -v_a * y_r[1],
        "restitution": -v_a * y_r[1] / v_imp,
        "impulse_N_s": mass * v_a * y_r[2],
        "damping_energy_J": mass * v_a**2 * y_r[3],
        "friction_work_J": mass * v_a**2 * y_r[4],
        "release_indentation_m": delta_r,
        "elastic_energy_at_release_J": law.elastic_force(delta_r) * delta_r / (law.exponent + 1),
        "contact_made": contact_made,
        "separated": separated & contact_made,
        "num_steps": sum(sol.stats["num_steps"] for sol in phases),
    }
    if n_save > 0:
        s = jnp.linspace(0.0, 1.0, n_save)
        parts = []
        starts = (tau_c, tau_m)
        for k, sol in enumerate(phases):
            ta = starts[k] + s * (sol.ts[-1] - starts[k])
            parts.append((ta, jax.vmap(sol.evaluate)(ta)))
        ts = jnp.concatenate([p[0] for p in parts])
        ys = jnp.concatenate([p[1] for p in parts])
        out["series_time_s"] = t_ref * ts
        out["series_indentation_m"] = d_ref * ys[:, 0]
        out["series_velocity_m_s"] = v_a * ys[:, 1]
        out["series_force_N"] = law.force(d_ref * ys[:, 0], v_a * ys[:, 1], v_imp)
    return out


def output_restitution(law_name: str, c, exponent=1.5, rtol: float = 1e-11, atol: float = 1e-13) -> Array:
    """Simulated output restitution ``e = v_out / v_in`` of a law for input coefficient ``c``.

    Frictionless impact with unit mass, stiffness and speed: for the Hunt-Crossley family ``e`` depends on
    ``c`` only; for Kelvin-Voigt (secant-stiffness calibration) on ``c`` and ``n``. Vectorises over ``c``.
    """
    def one(ci):
        law = ContactLaw(1.0, exponent, ci, mass=1.0, law=law_name)
        # heavy damping (e ~ 1/chi) makes the rebound creep: long horizon
        res = simulate_impact(law, jnp.ones(()), jnp.ones(()), t_max=jnp.asarray(1e4), rtol=rtol, atol=atol)
        return jnp.where(res["separated"], res["restitution"], jnp.nan)

    return jax.vmap(one)(jnp.atleast_1d(jnp.asarray(c, float)))
