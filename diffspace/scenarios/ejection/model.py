r"""Spring ejection of a manipulator from its emergency separation device (ESD).

Seed: Cai, Wang, Deng, Yang (2023), *Emergency ejection characteristics of space manipulator multi-body
system* (``ejection_space_manipulator.txt``). The full multibody model replaces the paper's reduced one:

* **Phase 1, in the rail** (paper eqs. 9-13): the movable base translates along the rail axis only
  (``BaseMotion.rail``), pushed by the separation springs :math:`F = k(l - s)` for :math:`s < l`. The
  equations are :math:`H\dot v + b = [F e_{rail}; 0; \tau_f] + Q_c` with the rail reaction and the holding
  torques of stuck joints in :math:`Q_c` (one masked KKT solve, ``core.restricted.restricted_dynamics``).
* **Zero-force separation** at :math:`s = l` (time :math:`t_r`): a Diffrax event; the state carries over.
* **Phase 2, free flight**: base ``free`` (mode ``space``) or ``planar`` (mode ``plane``: the air table,
  base moving in its x-z plane and turning about y, paper eq. 31). On the air table only joints that keep
  the arm in the plane can move: :func:`plane_locked_joints` finds the others from the kinematics at the
  attitude (the reference arm's joints 1, 3, 5, 7), and they are merged by ``Robot.lock``.
* **Joints**: unpowered with hybrid stick-slip friction (``friction.JointFriction``); each transition is an
  event and the integration restarts inside a bounded ``lax.scan`` (:func:`~diffspace.integrate.hybrid_solve`).
* **Joint limits** (``limits``): ``"stop"``: a hard stop at each limit. Reaching it is an event; the joint
  impact is an impulse :math:`p` on the joint, :math:`\Delta v = Y e_j p` with :math:`Y` the constrained
  response (the masked KKT solve) and :math:`p` such that :math:`\dot\theta_j^+ = -e\,\dot\theta_j^-`
  (``stop_restitution`` :math:`e`); when the rebound is slower than ``HOLD_RATE`` (always for
  :math:`e = 0`) the joint is held at the stop, a constraint, while the load pushes into it, and released
  (to static friction) when its holding torque reverses. The impacts' kinetic-energy loss, the
  impulse's work :math:`-p(\dot\theta_j^- + \dot\theta_j^+)/2` (the held constraints do none), is tracked
  (``stop_loss``) so that the energy budget still closes. ``"flag"``: no stop; the first crossing time of each joint is recorded (status
  ``LIMIT_CROSSED``). ``"ignore"``: limits play no part.
* **Stable ejection** (time :math:`t_s`): all joints stuck in flight; the arm is one rigid body whose CoM
  velocity and angular velocity are reported.

The equivalent mass at :math:`t = 0` (paper eqs. 14-19) is :math:`m_{eq} = (e^T \bar H^{-1} e)^{-1}` with
:math:`\bar H` the mass matrix restricted to the rail coordinate and the joints free at :math:`t = 0`
(all locked: total mass; all free: the Schur complement :math:`H_{ss} - H_{s\theta}H_{\theta\theta}^{-1}H_{\theta s}`).
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Bool, Float, Int

from ...actuation.friction import JointFriction
from ...core.dynamics import configuration_derivative, mass_matrix_and_bias, momentum
from ...core.linalg import spd_solve
from ...core.restricted import BaseMotion, masked_solve
from ...integrate import AbstractHybridSystem, HybridSolution, SolverSettings, hybrid_solve
from ...core.robot import Robot
from ...core.spatial import quat_to_rotation
from ...core.tree_pass import tree_frames

RAIL, FLIGHT = 0, 1
LIMIT_MODES = ("stop", "flag", "ignore")
_SEPARATION_TOL = 1e-9  # relative to the compression: the root find locates s = l far tighter
_RATE_TOL = 1e-8  # rad/s: a slipping joint whose rate reached this is at its zero crossing
_LIMIT_TOL = 1e-9  # rad: a joint this close to a limit has reached it (the root find is far tighter)
HOLD_RATE = 1e-3  # rad/s: a stop rebound slower than this ends the bounces (the joint is held)


class EjectionState(eqx.Module):
    """Continuous state: configuration ``q = [p, quat xyzw, theta]``, velocity ``v = [v_B, omega_B, theta_dot]``
    (free flyer, base velocities in the base frame) and the energy dissipated so far."""

    q: Float[Array, " nq"]
    v: Float[Array, " nv"]
    dissipated: Float[Array, ""]  # work of the joint friction [J]
    stop_loss: Float[Array, ""]  # kinetic energy lost in stop impacts [J]


class EjectionMode(eqx.Module):
    """Discrete state, as data: the phase, each joint's friction mode and stop, the recorded limit crossings."""

    phase: Int[Array, ""]  # RAIL or FLIGHT
    slip: Int[Array, " n"]  # -1 / +1 slipping, 0 stuck
    stop: Int[Array, " n"]  # -1 held at its lower stop, +1 at its upper stop, 0 free of the stops
    crossed_time: Float[Array, " n"]  # limits = "flag": first time each joint crossed a limit (inf: never)
    consistent: Bool[Array, ""]  # every stick/slip choice so far solved its LCP (False: status NOT_CONVERGED)


class EjectionModel(AbstractHybridSystem):
    """Ejection of ``robot`` (locked joints already merged) from a rail along ``rail_axis`` (base frame), as a
    hybrid system: phase (rail, flight), each joint's friction mode and stop are the discrete mode."""

    robot: Robot
    friction: JointFriction
    stiffness: Float[Array, ""]
    compression: Float[Array, ""]
    rail: BaseMotion
    flight: BaseMotion
    rail_axis: Float[Array, "3"]
    stop_restitution: Float[Array, ""]
    limits: str = eqx.field(static=True, default="ignore")

    @classmethod
    def build(cls, robot: Robot, friction: JointFriction, stiffness, compression, rail_axis, flight: str,
              limits: str = "ignore", stop_restitution=0.0):
        if limits not in LIMIT_MODES:
            raise ValueError(f"limits must be one of {LIMIT_MODES}, got {limits!r}")
        axis = jnp.asarray(rail_axis, dtype=float)
        axis = axis / jnp.linalg.norm(axis)
        flight_motion = BaseMotion.free() if flight == "space" else BaseMotion.planar(plane_normal(axis))
        return cls(robot, friction, jnp.asarray(stiffness, float), jnp.asarray(compression, float),
                   BaseMotion.rail(axis), flight_motion, axis, jnp.asarray(stop_restitution, float), limits)

    def initial_mode(self) -> EjectionMode:
        n = self.robot.n_joints
        start = jnp.ones(n, dtype=int) if self.friction.model == "none" else jnp.zeros(n, dtype=int)
        return EjectionMode(phase=jnp.asarray(RAIL), slip=start, stop=jnp.zeros(n, dtype=int),
                            crossed_time=jnp.full(n, jnp.inf), consistent=jnp.asarray(True))

    def base_motion(self, phase) -> BaseMotion:
        in_rail = phase == RAIL
        return BaseMotion(
            jnp.where(in_rail, self.rail.basis, self.flight.basis), jnp.where(in_rail, self.rail.allowed, self.flight.allowed)
        )

    def spring_force(self, q, phase):
        travel = self.rail_axis @ q[:3]
        return jnp.where(phase == RAIL, self.stiffness * (self.compression - travel), 0.0)

    def free_mask(self, mode: EjectionMode):
        """1 for joints moving under the dynamics; 0 for joints held by static friction or by a stop."""
        return self.friction.free_mask(mode.slip) * (mode.stop == 0)

    def _masking(self, mode: EjectionMode):
        return _restriction(self.base_motion(mode.phase), self.free_mask(mode))

    def dynamics(self, q, v, mode: EjectionMode, inertia=None):
        """Accelerations, constraint forces (rail reaction, holding torques) and joint friction torques;
        ``inertia``: ``(H, b)`` at ``(q, v)`` when already computed."""
        tau_friction = self.friction.torque(v[6:], mode.slip) * (mode.stop == 0)
        tau = jnp.concatenate([self.spring_force(q, mode.phase) * self.rail_axis, jnp.zeros(3), tau_friction])
        h, b = mass_matrix_and_bias(self.robot, q, v) if inertia is None else inertia
        accel, constraint = masked_solve(h, tau - b, *self._masking(mode))
        return accel, constraint, tau_friction

    def rest_problem(self, q, v, mode: EjectionMode, at_rest):
        """``(a_0, W)`` of ``JointFriction.rest_modes``: the joint accelerations with the joints ``at_rest`` free
        and frictionless (the slipping ones with their friction, the rest of ``mode`` held) and the joint
        accelerations per unit torque on each joint at rest."""
        moving = (mode.slip != 0) & ~at_rest & (mode.stop == 0)
        tau_friction = jnp.where(moving, self.friction.torque(v[6:], mode.slip), 0.0)
        tau = jnp.concatenate([self.spring_force(q, mode.phase) * self.rail_axis, jnp.zeros(3), tau_friction])
        h, b = mass_matrix_and_bias(self.robot, q, v)
        basis, mask = self._masking(mode)
        mask = mask.at[6:].set(jnp.where(at_rest | moving, 1.0, mask[6:]))
        free_accel, _ = masked_solve(h, tau - b, basis, mask)
        return free_accel[6:], joint_response(h, basis, mask)[:, 6:]

    def joint_impulse(self, q, mode: EjectionMode, joint: int, rate_change):
        """``(dv, p)``: the velocity change of the whole system when an impulse ``p`` on ``joint`` changes its
        rate by ``rate_change`` (the other constraints of ``mode`` hold): ``dv = Y e_j p`` with
        ``p = rate_change / Y_jj``."""
        h, _ = mass_matrix_and_bias(self.robot, q, jnp.zeros(self.robot.nv))
        unit = jnp.zeros(self.robot.nv).at[6 + joint].set(1.0)
        basis, mask = self._masking(mode)
        response, _ = masked_solve(h, unit, basis, mask.at[6 + joint].set(1.0))
        return response * rate_change / response[6 + joint], rate_change / response[6 + joint]

    @property
    def limited(self):
        """Per joint: its limits take part (``limits != "ignore"`` and finite)."""
        finite = jnp.isfinite(self.robot.lower) | jnp.isfinite(self.robot.upper)
        return finite & (self.limits != "ignore")

    def limit_margin(self, theta):
        """Distance to the nearer limit per joint [rad] (+1 where unlimited)."""
        lower = jnp.where(jnp.isfinite(self.robot.lower), theta - self.robot.lower, 1.0)
        upper = jnp.where(jnp.isfinite(self.robot.upper), self.robot.upper - theta, 1.0)
        return jnp.minimum(lower, upper)


    # ------------------------------------------------------------------ hybrid system
    def vector_field(self, t, y: EjectionState, mode: EjectionMode) -> EjectionState:
        accel, _, tau_friction = self.dynamics(y.q, y.v, mode)
        dissipated = -jnp.sum(self.free_mask(mode) * tau_friction * y.v[6:])
        return EjectionState(configuration_derivative(y.q, y.v), accel, dissipated, jnp.zeros(()))

    def conditions(self, t, y: EjectionState, mode: EjectionMode, segment_start) -> tuple:
        """``(separation, holding, slip, limits)``, each present when it can happen, positive while the mode
        holds. ``holding`` is the smallest of the static-friction margins of stuck joints (hybrid friction; a
        locked joint holds any torque) and of the push of held joints into their stops (one
        constrained-dynamics evaluation); ``slip`` the smallest rate of a slipping joint along its slip
        direction; ``limits`` the smallest distance of a joint to a limit it may still reach."""
        margins = (self.separation_margin(y, mode),)
        if not self.robot.n_joints:  # every joint locked: one rigid body, separation is the only event
            return margins
        if self.friction.is_hybrid:
            margins += (self.holding_margin(y, mode), self.slip_margin(y, mode))
        elif self.limits == "stop":
            margins += (self.holding_margin(y, mode),)
        if self.limits != "ignore":
            margins += (self.limit_condition(y, mode),)
        return margins

    def separation_margin(self, y: EjectionState, mode: EjectionMode):
        return jnp.where(mode.phase == RAIL, self.compression - self.rail_axis @ y.q[:3], 1.0)

    def holding_margin(self, y: EjectionState, mode: EjectionMode):
        _, constraint, _ = self.dynamics(y.q, y.v, mode)
        # only hybrid friction lets a stuck joint break loose (a "locked" joint holds any torque)
        stuck = (mode.slip == 0) & (mode.stop == 0) & self.friction.is_hybrid
        friction = self.friction.stick_margin(constraint[6:], y.v[6:], mode.slip)
        margins = jnp.where(stuck, friction, jnp.inf)
        margins = jnp.where(mode.stop != 0, -mode.stop * constraint[6:], margins)
        return jnp.where(jnp.any(stuck | (mode.stop != 0)), jnp.min(margins), 1.0)

    def slip_margin(self, y: EjectionState, mode: EjectionMode):
        moving = (mode.slip != 0) & (mode.stop == 0)
        margins = self.friction.stick_margin(jnp.zeros(self.robot.n_joints), y.v[6:], mode.slip)
        return jnp.where(jnp.any(moving), jnp.min(jnp.where(moving, margins, jnp.inf)), 1.0)

    def limit_condition(self, y: EjectionState, mode: EjectionMode):
        """Offset: a joint starting exactly at a limit is caught when it moves beyond it."""
        watched = self.limited & (mode.stop == 0) & ~jnp.isfinite(mode.crossed_time)
        margins = jnp.where(watched, self.limit_margin(y.q[7:]) + _LIMIT_TOL, jnp.inf)
        return jnp.where(jnp.any(watched), jnp.min(margins), 1.0)

    def transition(self, t, y: EjectionState, mode: EjectionMode):
        """Resolve the modes at an event: separation; joints reaching a limit (stop impacts, or the crossing
        time recorded with ``limits = "flag"``); joints leaving their stops; then stick/slip
        (:func:`_settle_friction`)."""
        mode = _separate(self, y, mode)
        if not self.robot.n_joints:
            return y, mode
        if self.limits != "ignore":
            hit, side = _hit_limits(self, y, mode)
            if self.limits == "flag":
                first = hit & ~jnp.isfinite(mode.crossed_time)
                mode = eqx.tree_at(lambda m: m.crossed_time, mode, jnp.where(first, t, mode.crossed_time))
            else:
                y, mode = _stop_impacts(self, y, mode, hit, side)
        if self.limits != "stop" and not self.friction.is_hybrid:
            return y, mode
        inertia = mass_matrix_and_bias(self.robot, y.q, y.v)  # shared by the release and the halt
        if self.limits == "stop":
            mode = _release_stops(self, y, mode, inertia)
        if self.friction.is_hybrid:
            y, mode = _settle_friction(self, y, mode, inertia[0])
        return y, mode


def _restriction(base: BaseMotion, free_joints):
    """Basis change and 0/1 mask of ``masked_solve``: the base restricted to ``base``, the joints ``free_joints``
    marks (1) free and the others held."""
    basis = jax.scipy.linalg.block_diag(base.basis, jnp.eye(free_joints.shape[0]))
    return basis, jnp.concatenate([base.allowed, free_joints])


def plane_normal(rail_axis):
    """Normal of the air-table plane: base y unless the rail is along y (then base x)."""
    return jnp.where(jnp.abs(rail_axis[1]) < 0.9, jnp.array([0.0, 1.0, 0.0]), jnp.array([1.0, 0.0, 0.0]))


def plane_locked_joints(robot: Robot, coordinates, rail_axis, tolerance: float = 1e-6) -> tuple[int, ...]:
    """0-based joints that would take the arm out of the air-table plane at joint ``coordinates`` (host side).

    With the base in its rest attitude, a revolute joint keeps every body moving parallel to the plane when
    its axis is the plane normal, a prismatic joint when its axis lies in the plane; every other joint
    (axes in the plane or oblique, prismatic axes across it) is locked. The free joints only turn about the
    normal, so the axes of the joints after them keep their directions relative to the plane, and the
    classification holds throughout the motion.
    """
    rot, _, _ = tree_frames(robot, jnp.asarray(coordinates, dtype=float))
    axes = np.einsum("bij,bj->bi", np.asarray(rot), np.asarray(robot.axis))[1:]
    along_normal = np.abs(axes @ np.asarray(plane_normal(jnp.asarray(rail_axis, dtype=float))))
    revolute = np.asarray(robot.revolute_mask[1:]) > 0
    in_plane = np.where(revolute, along_normal > 1.0 - tolerance, along_normal < tolerance)
    return tuple(int(j) for j in np.flatnonzero(~in_plane))


def _separate(model: EjectionModel, y: EjectionState, mode: EjectionMode) -> EjectionMode:
    separated = model.compression - model.rail_axis @ y.q[:3] <= _SEPARATION_TOL * model.compression
    return eqx.tree_at(lambda m: m.phase, mode, jnp.where((mode.phase == RAIL) & separated, FLIGHT, mode.phase))


def _hit_limits(model: EjectionModel, y: EjectionState, mode: EjectionMode):
    """Per joint: it reached a limit it was not held at (and moves into it or rests there), and which side."""
    theta, rate = y.q[7:], y.v[6:]
    at_lower = jnp.isfinite(model.robot.lower) & (theta - model.robot.lower <= _LIMIT_TOL) & (rate <= 0)
    at_upper = jnp.isfinite(model.robot.upper) & (model.robot.upper - theta <= _LIMIT_TOL) & (rate >= 0)
    hit = model.limited & (mode.stop == 0) & (at_lower | at_upper)
    return hit, jnp.where(at_upper, 1, -1)


def _stop_impacts(model: EjectionModel, y: EjectionState, mode: EjectionMode, hit, side):
    """Impacts at the stops hit: rebound with the restitution, or hold when the rebound is below HOLD_RATE; the
    joint is put at its stop exactly."""

    def one(j, carry):
        y, mode = carry
        rate = y.v[6 + j]
        rebound = -model.stop_restitution * rate
        hold = jnp.abs(rebound) < HOLD_RATE
        new_rate = jnp.where(hold, 0.0, rebound)
        dv, impulse = model.joint_impulse(y.q, mode, j, new_rate - rate)
        v = (y.v + dv).at[6 + j].set(new_rate)  # exact rate
        loss = -0.5 * impulse * (rate + new_rate)  # the impulse's work (module docstring)
        slip = jnp.where(hold, 0, jnp.where(mode.slip[j] != 0, -mode.slip[j], mode.slip[j]))
        if not model.friction.is_hybrid:
            slip = mode.slip[j]
        # at the stop exactly (the event fires _LIMIT_TOL beyond it): the watch on a joint released there starts
        # at +_LIMIT_TOL, not at zero
        q = y.q.at[7 + j].set(jnp.clip(y.q[7 + j], model.robot.lower[j], model.robot.upper[j]))
        impacted = (EjectionState(q, v, y.dissipated, y.stop_loss + loss),
                    eqx.tree_at(lambda m: (m.slip, m.stop), mode,
                                (mode.slip.at[j].set(slip), mode.stop.at[j].set(jnp.where(hold, side[j], 0)))))
        return jax.tree_util.tree_map(lambda a, b: jnp.where(hit[j], a, b), impacted, (y, mode))

    return jax.lax.fori_loop(0, model.robot.n_joints, one, (y, mode))


def _release_stops(model: EjectionModel, y: EjectionState, mode: EjectionMode, inertia) -> EjectionMode:
    """Joints whose holding torque no longer pushes into their stop leave it, at rest (then static friction);
    ``inertia``: ``(H, b)`` at ``y``."""
    _, constraint, _ = jax.lax.stop_gradient(model.dynamics(y.q, y.v, mode, inertia))
    hold = constraint[6:]
    release = (mode.stop != 0) & (-mode.stop * hold <= 1e-9 * (1.0 + jnp.abs(hold)))
    slip = jnp.where(release & model.friction.is_hybrid, 0, mode.slip)
    return eqx.tree_at(lambda m: (m.slip, m.stop), mode, (slip, jnp.where(release, 0, mode.stop)))


def _settle_friction(model: EjectionModel, y: EjectionState, mode: EjectionMode, h):
    """Stick or slip of every joint at rest, chosen consistently (``JointFriction.rest_modes``: one box LCP per
    friction level, stiction preferred). Slipping joints whose rate reached zero (``d * rate <= _RATE_TOL``) are
    first brought exactly to rest by joint impulses (:func:`_halt`, which keeps the momentum; ``h`` the mass
    matrix at ``y``). Joints held at a stop take no part; joints still moving keep their mode."""
    free_of_stops = mode.stop == 0
    stopped = (mode.slip != 0) & (mode.slip * y.v[6:] <= _RATE_TOL) & free_of_stops
    y = _halt(model, y, mode, stopped, h)
    at_rest = ((mode.slip == 0) | stopped) & free_of_stops
    free_accel, delassus = jax.lax.stop_gradient(model.rest_problem(y.q, y.v, mode, at_rest))
    slip, converged = model.friction.rest_modes(delassus, free_accel, at_rest)
    slip = jnp.where(at_rest, slip, mode.slip)
    return y, eqx.tree_at(lambda m: (m.slip, m.consistent), mode, (slip, mode.consistent & converged))


def joint_response(h, basis, mask) -> Float[Array, "n nv"]:
    """Row ``j``: the velocity change of every coordinate per unit impulse on joint ``j`` (equally, the
    acceleration per unit torque) for the mass matrix ``h`` with the coordinates of ``mask`` free, the others
    held (``masked_solve``); symmetric in the joint columns."""
    units = jnp.eye(h.shape[0])[6:]
    return jax.vmap(lambda unit: masked_solve(h, unit, basis, mask)[0])(units)


def _halt(model: EjectionModel, y: EjectionState, mode: EjectionMode, stopped, h) -> EjectionState:
    """Bring the ``stopped`` joints exactly to rest by impulses on them (``K p = -rate`` with ``K`` their
    constrained inverse inertia in ``mode``, from the mass matrix ``h``): the rates left at an event are of the
    order of the root find's accuracy, and an impulse, unlike setting the rates to zero, keeps the momentum the
    dynamics conserves."""
    response = joint_response(h, *model._masking(mode))
    both = stopped[:, None] & stopped[None, :]
    inverse_inertia = jnp.where(both, response[:, 6:], jnp.eye(model.robot.n_joints))
    impulse = spd_solve(inverse_inertia, jnp.where(stopped, -y.v[6:], 0.0))
    v = y.v + impulse @ response
    v = v.at[6:].set(jnp.where(stopped, 0.0, v[6:]))  # exactly at rest
    return EjectionState(y.q, v, y.dissipated, y.stop_loss)


class EjectionRun(eqx.Module):
    """Raw outcome of one ejection simulation (arrays only, so it batches under ``vmap``)."""

    solution: HybridSolution
    initial_mode: EjectionMode
    equivalent_mass: Float[Array, ""]


def equivalent_mass(robot: Robot, rail_axis, q0, free_joints) -> Float[Array, "*k"]:
    r"""Effective mass seen by the spring at rest, $(e^T \bar H^{-1} e)^{-1}$: $\bar H$ the mass matrix of
    ``robot`` at ``q0`` restricted to the base's travel along the unit ``rail_axis`` (base frame, ``e``) and the
    joints ``free_joints`` marks free (1; 0: held). Masks stacked along leading axes give one mass each, from
    one mass matrix."""
    force = jnp.zeros(robot.nv).at[:3].set(rail_axis)
    h, _ = mass_matrix_and_bias(robot, q0, jnp.zeros(robot.nv))

    def one(free):
        accel, _ = masked_solve(h, force, *_restriction(BaseMotion.rail(rail_axis), free))
        return 1.0 / (rail_axis @ accel[:3])

    return jnp.vectorize(one, signature="(n)->()")(jnp.asarray(free_joints, dtype=float))


def simulate_ejection(
    model: EjectionModel,
    joint_angles: Float[Array, " n"],
    t_final: float,
    settings: SolverSettings = SolverSettings(max_steps=20_000),
    solver=None,
    adjoint=None,
) -> EjectionRun:
    """Simulate one ejection from rest at ``joint_angles`` (base at the origin, identity attitude) over
    ``[0, t_final]`` with the solver ``settings``. Pure; jit it."""
    q0 = model.robot.neutral().at[7:].set(joint_angles)
    y0 = EjectionState(q0, jnp.zeros(model.robot.nv), jnp.asarray(0.0), jnp.asarray(0.0))
    solution = hybrid_solve(model, y0, model.initial_mode(), t_final, settings, solver=solver, adjoint=adjoint,
                            initial_transition=True)  # the modes at t = 0 (stick/slip, stops) by a transition
    mode0 = jax.tree_util.tree_map(lambda x: x[0], solution.segment_mode_before)
    free = model.friction.free_mask(mode0.slip)  # the joints free at t = 0
    return EjectionRun(solution, mode0, equivalent_mass(model.robot, model.rail_axis, q0, free))


def rigid_motion(model: EjectionModel, q, v):
    """CoM velocity (world) and angular velocity (world) of the arm moving as one body (all joints stuck)."""
    linear, _ = momentum(model.robot, q, v)
    return linear / model.robot.total_mass, quat_to_rotation(q[3:7]) @ v[3:6]
