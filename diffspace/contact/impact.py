r"""Two bodies colliding along a line, as one hybrid system integrated by :func:`~diffspace.integrate.hybrid_solve`.

Body 1 (mass :math:`m_1`) approaches body 2 (:math:`m_2`, may be ``inf``: a fixed support) across a gap.
With :math:`\delta = x_1 - x_2 - \text{gap}` the indentation and :math:`F(\delta, \dot\delta; v_0)` any contact
law of :mod:`diffspace.contact.forces` (paper Eq. (1), :math:`v_0` the approach speed at first touch):

.. math:: m_1\ddot x_1 = -F + f_1,\qquad m_2\ddot x_2 = F + f_2,

which for :math:`f_i = 0` is the paper's equivalent-mass impact :math:`m\ddot\delta = -F`,
:math:`m = m_1 m_2/(m_1 + m_2)` (Eqs. (4)-(5)). Friction (``ImpactFriction.model``):

* ``none``;
* ``paper``: the paper's Eq. (10), a constant force :math:`f` on the relative motion during contact only (an
  internal pair :math:`f_1 = f`, :math:`f_2 = -f`, pushing the bodies together; it is the sign that reproduces
  the paper's trend, and it is not a physical table friction);
* ``coulomb``: air-table friction on each body, :math:`f_i = -\mu m_i g\,\mathrm{sign}(\dot x_i)` while it
  slides; a body at rest sticks while the other forces on it stay below :math:`\mu m_i g` (stick-slip as
  joint friction: modes as data, transitions as events). Body 2 starts at rest and stuck.

Events (each a Diffrax event located by the safeguarded root find, so every time is differentiable): the
touch (:math:`\delta` rises to 0), the peak force (:math:`\dot F = 0`), the maximum indentation
(:math:`\dot\delta = 0`), the release (:math:`\delta` falls to 0, or the law's force releases with
:math:`\delta > 0`), the binding of the pair (below) and the stick/slip changes.

**Stuck together.** A force that presses the pair together during contact (the ``paper`` friction pair
:math:`f`) can keep it from ever separating. The relative motion obeys :math:`m\ddot\delta = -F + f`, so its
energy :math:`E = \tfrac12 m\dot\delta^2 + k\delta^{n+1}/(n+1) - f\delta` only decreases (the law's damping);
separating needs :math:`E \ge 0` (the value at :math:`\delta = 0`). Once :math:`E < 0` the pair is bound for
good (an event, ``binding``). The bound pair oscillates about its equilibrium; at its next turning point, where
the relative speed falls below ``SETTLE_SPEED`` times the impact speed (the equal velocities of persistent
contact; also reached on an overdamped approach to equilibrium), the contact phase ends and the two bodies
continue as one at the common velocity momentum conservation gives (the relative velocity left, at most
``SETTLE_SPEED`` of the impact speed, removed by an internal plastic impulse counted in the damping energy). Without a pressing force (``none``, ``coulomb``: table friction on each body pulls a pair
in contact apart or not at all) :math:`E \ge 0` throughout and the pair always separates.

**Outcomes** (``ImpactOutcome.outcome``): ``separated``, ``stuck_together``, or ``not_reached`` (the bodies
did not touch within the horizon); a pair still in contact at the end, neither separated nor bound, is the
failure ``NO_EVENT`` (the horizon is too short). Peak force and maximum indentation are the state at their
events, so their gradients are exact.

The state is integrated in scaled units: :math:`x / d_{ref}`, :math:`v / v_a`, :math:`t / t_{ref}` with
:math:`v_a` the approach speed, :math:`d_{ref}` the undamped Hertz maximum indentation and
:math:`t_{ref} = d_{ref}/v_a`, so one ``rtol``/``atol`` suits steel spheres and air-table bumpers alike. The
state also carries the impulse :math:`\int F dt`, the damping dissipation
:math:`\int (F - k\delta^n)\dot\delta\,dt` and the friction work :math:`\sum_i \int f_i \dot x_i\,dt`.
"""

from __future__ import annotations

import dataclasses

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float, Int

from ..actuation.friction import JointFriction
from ..integrate import EXTREMUM_MARGIN, AbstractHybridSystem, SolverSettings, hybrid_solve
from ..core.status import Status, first_failure, flag
from .forces import AbstractContactLaw

FRICTION_MODELS = ("none", "paper", "coulomb")
APPROACH, CONTACT, SEPARATED, JOINED = 0, 1, 2, 3
SETTLE_SPEED = 1e-6  # relative speed / impact speed at which a bound pair is joined
OUTCOMES = ("separated", "stuck_together", "not_reached")
SEPARATED_OUTCOME, STUCK_OUTCOME, NOT_REACHED_OUTCOME = range(3)
_RATE_TOL = 1e-9  # scaled velocity under which a sliding body is at its zero crossing


class ImpactFriction(eqx.Module):
    """``model`` (static) and the force level: ``paper``: ``force`` [N] on the relative motion; ``coulomb``:
    ``mu`` and ``gravity`` (body ``i`` feels ``mu m_i g``)."""

    force: Float[Array, ""]
    mu: Float[Array, ""]
    gravity: Float[Array, ""]
    model: str = eqx.field(static=True, default="none")


class ImpactMode(eqx.Module):
    phase: Int[Array, ""]  # APPROACH, CONTACT, SEPARATED or JOINED (stuck together)
    loading: Bool[Array, ""]  # before the peak force
    compressing: Bool[Array, ""]  # before the maximum indentation
    slip: Int[Array, "2"]  # Coulomb: -1 / 0 (stuck) / +1 per body
    impact_speed: Float[Array, ""]  # scaled v0, recorded at the touch
    bound: Bool[Array, ""]  # in contact with negative relative energy: can no longer separate


class ImpactOutcome(eqx.Module):
    """Impact results (SI). ``outcome``: an index into ``OUTCOMES``; the release quantities are NaN unless the
    bodies separated, ``common_velocity`` unless they stuck together, every contact quantity unless they touched.
    ``status``: ``NO_EVENT`` when they touched and were still in contact, unbound, at the end."""

    contact_made: Bool[Array, ""]
    separated: Bool[Array, ""]
    stuck: Bool[Array, ""]
    common_velocity: Float[Array, ""]  # of a pair stuck together [m/s]
    binding_time: Float[Array, ""]  # when the pair became bound [s]
    contact_start_time: Float[Array, ""]
    impact_speed: Float[Array, ""]
    peak_force: Float[Array, ""]
    peak_force_time: Float[Array, ""]
    max_indentation: Float[Array, ""]
    max_compression_time: Float[Array, ""]
    release_time: Float[Array, ""]
    detached_velocity: Float[Array, ""]  # relative separation speed
    velocity_out: Float[Array, "2"]  # both bodies after the release
    impulse: Float[Array, ""]  # of the contact force up to the release or the binding
    damping_energy: Float[Array, ""]
    friction_work: Float[Array, ""]
    release_indentation: Float[Array, ""]  # at the end of the contact: > 0 when the law's force released before
    # separation, or the indentation a stuck pair keeps
    elastic_energy_at_release: Float[Array, ""]  # of that indentation
    series_time: Float[Array, " T"]
    series_indentation: Float[Array, " T"]
    series_velocity: Float[Array, " T"]
    series_force: Float[Array, " T"]
    num_steps: Int[Array, ""]
    outcome: Int[Array, ""]
    status: Int[Array, ""]

    @property
    def contact_duration(self):
        return self.release_time - self.contact_start_time

    @property
    def restitution(self):
        return self.detached_velocity / self.impact_speed


class ImpactSystem(AbstractHybridSystem):
    """The scaled equations as a hybrid system; ``y = [x1, u1, x2, u2, impulse, damping, friction]``."""

    law: AbstractContactLaw
    mass: Float[Array, "2"]
    friction: ImpactFriction
    gap: Float[Array, ""]
    d_ref: Float[Array, ""]
    v_a: Float[Array, ""]

    @property
    def t_ref(self):
        return self.d_ref / self.v_a

    @property
    def mass_fractions(self) -> Float[Array, "2"]:
        """``m_i / (m_1 + m_2)``: the weights of the centre-of-mass velocity (body 2 alone when it is fixed)."""
        fixed = jnp.isinf(self.mass[1])
        return jnp.where(fixed, jnp.array([0.0, 1.0]), self.mass / jnp.where(fixed, 1.0, self.mass.sum()))

    def coulomb(self) -> JointFriction:
        level = self.friction.mu * self.friction.gravity * jnp.where(jnp.isinf(self.mass), 0.0, self.mass)
        return JointFriction(level, level, jnp.zeros(2), jnp.asarray(1.0), "hybrid")

    def relative(self, y):
        return self.d_ref * (y[0] - y[2]) - self.gap, self.v_a * (y[1] - y[3])

    def contact_force(self, y, mode):
        delta, rate = self.relative(y)
        force = self.law.force(delta, rate, self.v_a * mode.impact_speed)
        return jnp.where(mode.phase == CONTACT, force, 0.0)

    def forces(self, y, mode):
        """Contact force, the non-friction force on each body, and the friction force on each body [N]."""
        force = self.contact_force(y, mode)
        applied = jnp.stack([-force, force])
        if self.friction.model == "paper":
            pair = jnp.where(mode.phase == CONTACT, self.friction.force, 0.0)
            return force, applied, jnp.stack([pair, -pair])
        if self.friction.model == "coulomb":
            rates = self.v_a * jnp.stack([y[1], y[3]])
            return force, applied, self.coulomb().torque(rates, mode.slip)
        return force, applied, jnp.zeros(2)

    def vector_field(self, t, y, mode):
        force, applied, fric = self.forces(y, mode)
        free = jnp.ones(2) if self.friction.model != "coulomb" else (mode.slip != 0).astype(float)
        accel = free * (applied + fric) / self.mass  # a stuck body is held; m = inf: fixed
        # joined: one body; the pressing pair is internal (only the paper model joins): no acceleration
        accel = jnp.where(mode.phase == JOINED, 0.0, accel)
        delta, rate = self.relative(y)
        power_damp = (force - self.law.elastic_force(delta)) * rate
        scale = self.t_ref / self.v_a
        velocities = self.v_a * jnp.stack([y[1], y[3]])
        return jnp.stack([y[1], accel[0] * scale, y[3], accel[1] * scale, force * scale / self.mass[0],
                          power_damp * scale / (self.mass[0] * self.v_a), jnp.sum(fric * velocities * free) * scale
                          / (self.mass[0] * self.v_a)])

    def force_rate_indicator(self, y, mode):
        """The law's normalised ``dF/dt`` (zero at a force extremum) with the relative acceleration."""
        delta, rate = self.relative(y)
        dy = self.vector_field(0.0, y, mode)
        accel = self.v_a * (dy[1] - dy[3]) / self.t_ref
        return self.law.force_rate_indicator(delta, rate, accel, self.v_a * mode.impact_speed)


    # ------------------------------------------------------------------ events
    def touch_margin(self, y, mode):
        return jnp.where(mode.phase == APPROACH, -self.relative(y)[0] / self.d_ref, 1.0)

    def release_margin(self, y, mode):
        delta, rate = self.relative(y)
        indicator = self.law.release_indicator(delta, rate, self.v_a * mode.impact_speed)
        return jnp.where(mode.phase == CONTACT, jnp.minimum(delta / self.d_ref, indicator), 1.0)

    def force_extremum_margin(self, y, mode):
        """dF/dt falls to 0 at a peak (loading), rises to 0 at a valley."""
        rate = self.force_rate_indicator(y, mode)
        return jnp.where(mode.phase == CONTACT, jnp.where(mode.loading, rate, -rate) + EXTREMUM_MARGIN, 1.0)

    def binding_margin(self, y, mode):
        """``E / (m v_0^2 / 2)`` in contact (module notes: positive while the pair can still separate)."""
        delta, rate = self.relative(y)
        m_eq = jnp.where(jnp.isinf(self.mass[1]), self.mass[0],
                         self.mass[0] * self.mass[1] / jnp.where(jnp.isinf(self.mass[1]), 1.0, self.mass.sum()))
        depth = jnp.maximum(delta, 0.0)
        energy = (0.5 * m_eq * rate**2 + self.law.elastic_force(depth) * depth / (self.law.exponent + 1.0)
                  - self.friction.force * depth)
        watched = (mode.phase == CONTACT) & ~mode.bound
        scale = jnp.where(watched, 0.5 * m_eq * (self.v_a * mode.impact_speed) ** 2, 1.0)  # v_0 = 0 before contact
        return jnp.where(watched, energy / scale, 1.0)

    def settle_margin(self, y, mode):
        """``|d_dot| / v_0 - SETTLE_SPEED`` while bound: falls to zero just before the bound pair's turning point."""
        watched = (mode.phase == CONTACT) & mode.bound
        speed = jnp.where(watched, mode.impact_speed, 1.0)
        return jnp.where(watched, jnp.abs(y[1] - y[3]) / speed - SETTLE_SPEED, 1.0)

    def indentation_extremum_margin(self, y, mode):
        rate = y[1] - y[3]
        return jnp.where(mode.phase == CONTACT, jnp.where(mode.compressing, rate, -rate) + EXTREMUM_MARGIN, 1.0)

    def stick_slip_margin(self, y, mode):
        _, applied, _ = self.forces(y, mode)
        margins = self.coulomb().stick_margin(applied, self.v_a * jnp.stack([y[1], y[3]]), mode.slip)
        scale = jnp.where(mode.slip == 0, self.law.elastic_force(self.d_ref), self.v_a)
        return jnp.min(margins / scale)

    def conditions(self, t, y, mode, segment_start):
        """Each positive while the mode holds: touch, release, force extremum, indentation extremum, stick/slip."""
        margins = (self.touch_margin(y, mode), self.release_margin(y, mode), self.force_extremum_margin(y, mode),
                   self.indentation_extremum_margin(y, mode))
        if self.friction.model == "paper":
            margins += (self.binding_margin(y, mode), self.settle_margin(y, mode))
        return margins + ((self.stick_slip_margin(y, mode),) if self.friction.model == "coulomb" else ())

    def transition(self, t, y, mode):
        tol = 1e-9
        delta, rate = self.relative(y)
        touched = (mode.phase == APPROACH) & (delta >= -tol * self.d_ref)
        speed = jnp.where(touched, y[1] - y[3], mode.impact_speed)
        mode = eqx.tree_at(lambda m: (m.phase, m.impact_speed, m.loading, m.compressing), mode,
                           (jnp.where(touched, CONTACT, mode.phase), speed, mode.loading | touched,
                            mode.compressing | touched))
        release, extremum = self.release_margin(y, mode), self.force_extremum_margin(y, mode)
        indentation = self.indentation_extremum_margin(y, mode)
        in_contact = mode.phase == CONTACT
        phase = jnp.where(in_contact & (release <= tol) & ~touched, SEPARATED, mode.phase)
        loading = jnp.where(in_contact & (extremum <= tol), ~mode.loading, mode.loading)
        compressing = jnp.where(in_contact & (indentation <= tol) & ~touched, ~mode.compressing, mode.compressing)
        mode = eqx.tree_at(lambda m: (m.phase, m.loading, m.compressing), mode, (phase, loading, compressing))
        if self.friction.model == "paper":
            y, mode = _join_if_bound(self, y, mode, tol)
        if self.friction.model != "coulomb":
            return y, mode
        return _settle_coulomb(self, y, mode, tol)


def _join_if_bound(system: ImpactSystem, y, mode, tol):
    """A pair in contact whose relative energy fell below zero can no longer separate; once its relative speed
    is down to ``SETTLE_SPEED`` both bodies take the common velocity (momentum conserved; the relative kinetic
    energy left goes to the damping energy) and continue as one (module notes)."""
    in_contact = mode.phase == CONTACT
    mode = eqx.tree_at(lambda m: m.bound, mode, mode.bound | (in_contact & (system.binding_margin(y, mode) <= tol)))
    bound = in_contact & mode.bound & (system.settle_margin(y, mode) <= SETTLE_SPEED)  # speed <= 2 SETTLE_SPEED
    common = system.mass_fractions @ jnp.stack([y[1], y[3]])
    lost = 0.5 * (system.mass[0] * (y[1] - common) ** 2
                  + jnp.where(jnp.isinf(system.mass[1]), 0.0, system.mass[1]) * (y[3] - common) ** 2)
    joined = y.at[1].set(common).at[3].set(common).at[5].add(lost / system.mass[0])  # damping state: E / (m1 v_a^2)
    return jnp.where(bound, joined, y), eqx.tree_at(lambda m: m.phase, mode, jnp.where(bound, JOINED, mode.phase))


def _settle_coulomb(system: ImpactSystem, y, mode, tol):
    """A sliding body whose rate reached zero sticks (rate set to zero) or reverses; a stuck body breaks
    loose, in the direction of the force on it, when that force exceeds ``mu m g``."""
    rates = jnp.stack([y[1], y[3]])
    stopped = (mode.slip != 0) & (mode.slip * rates <= _RATE_TOL)
    rates = jnp.where(stopped, 0.0, rates)
    y = y.at[1].set(rates[0]).at[3].set(rates[1])
    _, applied, _ = system.forces(y, mode)
    level = system.coulomb().static_torque
    holds = jnp.abs(applied) < level * (1 - tol)  # at a breakaway event |applied| = level: it breaks loose
    slip = jnp.where(stopped | (mode.slip == 0), jnp.where(holds, 0, jnp.sign(applied).astype(mode.slip.dtype)),
                     mode.slip)
    return y, eqx.tree_at(lambda m: m.slip, mode, slip)


IMPACT_SOLVER = SolverSettings(rtol=1e-10, atol=1e-12, n_save=200, max_steps=4096, max_segments=12)
"""Default solver settings of :func:`simulate_impact` (tolerances on the scaled state)."""


def reference_indentation(law: AbstractContactLaw, mass, speed) -> Array:
    """Undamped maximum indentation ``((n + 1) m v^2 / (2 k))^(1/(n+1))`` [m] (energy balance, paper Eq. (7))."""
    n = law.exponent
    return ((n + 1.0) * mass * speed**2 / (2.0 * law.stiffness)) ** (1.0 / (n + 1.0))


def simulate_impact(law: AbstractContactLaw, mass1, mass2, approach_speed, gap=0.0, t_max=10.0,
                    friction: ImpactFriction | None = None, *, settings: SolverSettings = IMPACT_SOLVER,
                    adjoint=None) -> ImpactOutcome:
    """Simulate one impact (pure; jit/vmap/grad). ``mass2 = inf``: body 2 is a fixed support. ``gap`` [m] at
    ``t = 0`` (0: first touch at ``t = 0``), ``t_max`` [s] horizon, ``settings``: tolerances on the scaled state, ``n_save`` saved times around the
    contact, budgets."""
    friction = ImpactFriction(jnp.zeros(()), jnp.zeros(()), jnp.ones(())) if friction is None else friction
    mass = jnp.stack([jnp.asarray(mass1, float), jnp.asarray(mass2, float)])
    v_a, gap = jnp.asarray(approach_speed, float), jnp.asarray(gap, float)
    m_eq = jnp.where(jnp.isinf(mass[1]), mass[0], mass[0] * mass[1] / jnp.where(jnp.isinf(mass[1]), 1.0, mass.sum()))
    d_ref = reference_indentation(law, m_eq, v_a)
    system = ImpactSystem(law, mass, friction, gap, d_ref, v_a)
    t_ref = system.t_ref
    touch_guess = gap / v_a / t_ref
    save = jnp.clip(touch_guess + jnp.linspace(-0.5, 8.0, settings.n_save), 0.0, t_max / t_ref)
    y0 = jnp.zeros(7).at[1].set(1.0)
    mode0 = ImpactMode(phase=jnp.asarray(APPROACH), loading=jnp.asarray(False), compressing=jnp.asarray(False),
                       slip=jnp.array([1, 0]), impact_speed=jnp.zeros(()), bound=jnp.asarray(False))
    y0, mode0 = system.transition(0.0, y0, mode0)
    sol = hybrid_solve(system, y0, mode0, t_max / t_ref, settings, save_times=save, adjoint=adjoint)
    return _outcome(system, sol, mode0)


def _event_index(sol, mask):
    """``(happened, index)`` of the first segment end where ``mask`` holds."""
    mask = mask & sol.segment_event
    return jnp.any(mask), jnp.argmax(mask)


def _outcome(system: ImpactSystem, sol, mode0: ImpactMode) -> ImpactOutcome:
    before, after = sol.segment_mode_before, sol.segment_mode_after
    in_contact = before.phase == CONTACT
    initial_contact = mode0.phase == CONTACT  # zero gap: the touch is at t = 0, before the first segment
    touch_event, i_touch = _event_index(sol, (before.phase == APPROACH) & (after.phase == CONTACT))
    touched = touch_event | initial_contact
    released, i_release = _event_index(sol, in_contact & (after.phase == SEPARATED))
    peaks = sol.segment_event & in_contact & before.loading & ~after.loading
    maxima = sol.segment_event & in_contact & before.compressing & ~after.compressing
    t_ref, v_a, d_ref = system.t_ref, system.v_a, system.d_ref
    t_touch = jnp.where(initial_contact, 0.0, t_ref * sol.segment_end[i_touch])
    v0 = v_a * jnp.where(initial_contact, mode0.impact_speed, after.impact_speed[i_touch])
    forces = jax.vmap(lambda y, mode: system.law.force(*system.relative(y), mode.impact_speed * v_a))(sol.segment_y, after)
    forces = jnp.where(peaks, forces, -jnp.inf)
    i_peak = jnp.argmax(forces)
    touch_force = system.law.first_touch_force(v0)  # Kelvin-Voigt: the force is largest at delta = 0+
    at_touch = touch_force >= forces[i_peak]
    stuck, i_joined = _event_index(sol, in_contact & (after.phase == JOINED))
    _, i_bound = _event_index(sol, in_contact & ~before.bound & after.bound)
    joined_here = sol.segment_event & in_contact & (after.phase == JOINED)  # just before its turning point
    deltas = jnp.where(maxima | joined_here, d_ref * (sol.segment_y[:, 0] - sol.segment_y[:, 2]) - system.gap,
                       -jnp.inf)
    i_max = jnp.argmax(deltas)
    y_r = sol.segment_y[i_release]
    _, rate_r = system.relative(y_r)
    ended = jnp.where(stuck, i_joined, i_release)
    delta_end = jnp.maximum(system.relative(sol.segment_y[ended])[0], 0.0)  # left when the contact ended
    ok = touched & released
    nan = lambda x: jnp.where(ok, x, jnp.nan)  # noqa: E731
    contact = lambda x: jnp.where(touched, x, jnp.nan)  # noqa: E731
    y_b = sol.segment_y[i_joined]
    scale = system.mass[0] * v_a
    ys = sol.ys
    rel_delta = d_ref * (ys[:, 0] - ys[:, 2]) - system.gap
    rel_rate = v_a * (ys[:, 1] - ys[:, 3])
    outcome = jnp.where(ok, SEPARATED_OUTCOME, jnp.where(stuck, STUCK_OUTCOME, NOT_REACHED_OUTCOME))
    status = first_failure(sol.status, flag(touched & ~ok & ~stuck, Status.NO_EVENT))
    y_end = jax.tree_util.tree_map(lambda a: a[ended], sol.segment_y)
    y_end = jnp.where(stuck, sol.final_y, y_end)  # joined: after the plastic impulse
    done = lambda x: jnp.where(ok | stuck, x, jnp.nan)  # noqa: E731
    return ImpactOutcome(
        contact_made=touched, separated=ok, stuck=stuck,
        common_velocity=jnp.where(stuck, v_a * system.mass_fractions @ jnp.stack([y_b[1], y_b[3]]), jnp.nan),
        binding_time=jnp.where(stuck, t_ref * sol.segment_end[i_bound], jnp.nan),
        contact_start_time=contact(t_touch), impact_speed=contact(v0),
        peak_force=contact(jnp.where(at_touch, touch_force, forces[i_peak])),
        peak_force_time=contact(jnp.where(at_touch, t_touch, t_ref * sol.segment_end[i_peak])),
        max_indentation=contact(jnp.max(deltas)), max_compression_time=contact(t_ref * sol.segment_end[i_max]),
        release_time=nan(t_ref * sol.segment_end[i_release]),
        detached_velocity=nan(-rate_r), velocity_out=done(v_a * jnp.stack([y_end[1], y_end[3]])),
        impulse=done(scale * y_end[4]), damping_energy=done(scale * v_a * y_end[5]),
        friction_work=done(scale * v_a * y_end[6]), release_indentation=done(delta_end),
        elastic_energy_at_release=done(system.law.elastic_force(delta_end) * delta_end / (system.law.exponent + 1.0)),
        series_time=t_ref * sol.ts, series_indentation=rel_delta, series_velocity=rel_rate,
        series_force=system.law.force(rel_delta, rel_rate, v0),
        num_steps=sol.num_steps, outcome=outcome, status=status,
    )


@eqx.filter_jit
def _restitutions(laws: AbstractContactLaw, rtol: float, atol: float) -> Array:
    def one(law):
        # heavy damping (e ~ 1/chi) makes the rebound creep: long horizon
        settings = dataclasses.replace(IMPACT_SOLVER, rtol=rtol, atol=atol, n_save=2)
        out = simulate_impact(law, 1.0, jnp.inf, 1.0, t_max=1e4, settings=settings)
        return jnp.where(out.separated, out.restitution, jnp.nan)

    return jax.vmap(one)(laws)


def output_restitution(law_name: str, c, exponent=1.5, rtol: float = 1e-11, atol: float = 1e-13) -> Array:
    """Simulated output restitution ``e = v_out / v_in`` of a law for input coefficients ``c`` (vectorised).

    Frictionless impact of a unit mass on a fixed support with unit stiffness and speed: for the
    Hunt-Crossley family ``e`` depends on ``c`` only; for Kelvin-Voigt on ``c`` and ``n``. NaN where the run
    did not separate. Every Hunt-Crossley-family law shares one compiled program (its canonical form).
    """
    from .forces import CHI_LAWS, ChiLaw, ContactLaw

    c = jnp.atleast_1d(jnp.asarray(c, float))
    ones = jnp.ones_like(c)
    if law_name == "kelvin_voigt":
        laws = ContactLaw(ones, exponent * ones, c, mass=ones, law=law_name)
    else:
        laws = ChiLaw(ones, exponent * ones, CHI_LAWS[law_name](c))
    return _restitutions(laws, rtol, atol)
