r"""Spring ejection of a manipulator from its emergency separation device (ESD), SPEC 5.1.

Seed: Cai, Wang, Deng, Yang (2023), *Emergency ejection characteristics of space manipulator multi-body
system* (``ejection_space_manipulator.txt``). The full multibody model replaces the paper's reduced one:

* **Phase 1, in the rail** (paper eqs. 9-13): the movable base translates along the rail axis only
  (``BaseMotion.rail``), pushed by the separation springs :math:`F = k(l - s)` for :math:`s < l`. The
  equations are :math:`H\dot v + b = [F e_{rail}; 0; \tau_f] + Q_c` with the rail reaction and the holding
  torques of stuck joints in :math:`Q_c` (one masked KKT solve, ``dynamics.restricted_dynamics``).
* **Zero-force separation** at :math:`s = l` (time :math:`t_r`): a Diffrax event; the state carries over.
* **Phase 2, free flight**: base ``free`` (mode ``space``) or ``planar`` (mode ``plane``: the air table,
  base moving in its x-z plane and turning about y, paper eq. 31, with joints 1, 3, 5, 7 merged by
  ``Robot.lock``).
* **Joints**: unpowered with hybrid stick-slip friction (``friction.JointFriction``); each transition is an
  event and the integration restarts inside a bounded ``lax.scan`` (``simulate.hybrid_solve``).
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
from jaxtyping import Array, Float

from ...dynamics import BaseMotion, configuration_derivative, momentum, restricted_dynamics
from ...actuation.friction import JointFriction
from ...robot import Robot
from ...integrate import HybridSolution, hybrid_solve
from ...spatial import quat_to_rotation

RAIL, FLIGHT = 0.0, 1.0
_SEPARATION_TOL = 1e-9  # relative to the compression: the root find locates s = l far tighter
_RATE_TOL = 1e-8  # rad/s: a slipping joint whose rate reached this is at its zero crossing


class EjectionModel(eqx.Module):
    """Ejection of ``robot`` (locked joints already merged) from a rail along ``rail_axis`` (base frame)."""

    robot: Robot
    friction: JointFriction
    stiffness: Float[Array, ""]
    compression: Float[Array, ""]
    rail: BaseMotion
    flight: BaseMotion
    rail_axis: Float[Array, "3"]

    @classmethod
    def build(cls, robot: Robot, friction: JointFriction, stiffness, compression, rail_axis, flight: str):
        axis = jnp.asarray(rail_axis, dtype=float)
        axis = axis / jnp.linalg.norm(axis)
        flight_motion = BaseMotion.free() if flight == "space" else BaseMotion.planar(_plane_normal(axis))
        return cls(robot, friction, jnp.asarray(stiffness, float), jnp.asarray(compression, float),
                   BaseMotion.rail(axis), flight_motion, axis)

    def base_motion(self, phase) -> BaseMotion:
        in_rail = phase == RAIL
        return BaseMotion(
            jnp.where(in_rail, self.rail.basis, self.flight.basis), jnp.where(in_rail, self.rail.allowed, self.flight.allowed)
        )

    def spring_force(self, q, phase):
        travel = self.rail_axis @ q[:3]
        return jnp.where(phase == RAIL, self.stiffness * (self.compression - travel), 0.0)

    def dynamics(self, q, v, mode):
        """Accelerations, constraint forces (rail reaction, holding torques) and joint friction torques."""
        phase, slip_dir = mode
        tau_friction = self.friction.torque(v[6:], slip_dir)
        tau = jnp.concatenate([self.spring_force(q, phase) * self.rail_axis, jnp.zeros(3), tau_friction])
        accel, constraint = restricted_dynamics(
            self.robot, q, v, tau, self.base_motion(phase), self.friction.free_mask(slip_dir)
        )
        return accel, constraint, tau_friction


def _plane_normal(rail_axis):
    """Normal of the air-table plane: base y unless the rail is along y (then base x)."""
    return jnp.where(jnp.abs(rail_axis[1]) < 0.9, jnp.array([0.0, 1.0, 0.0]), jnp.array([1.0, 0.0, 0.0]))


def _vector_field(model: EjectionModel):
    def field(t, y, mode):
        q, v, _ = y
        accel, _, tau_friction = model.dynamics(q, v, mode)
        dissipated = -jnp.sum(model.friction.free_mask(mode[1]) * tau_friction * v[6:])
        return configuration_derivative(q, v), accel, dissipated

    return field


def _conditions(model: EjectionModel) -> list:
    """``[separation, breakaway, slip_1..slip_n]``: each positive while the current mode holds.

    Only the breakaway condition (the smallest static-friction margin over the stuck joints) needs the
    holding torques, so the constrained dynamics is evaluated once per check; the others are cheap.
    """

    def separation(t, y, mode):
        return jnp.where(mode[0] == RAIL, model.compression - model.rail_axis @ y[0][:3], 1.0)

    if not model.friction.is_hybrid:
        return [separation]

    def breakaway(t, y, mode):
        q, v, _ = y
        _, constraint, _ = model.dynamics(q, v, mode)
        stuck = mode[1] == 0
        margins = model.friction.stick_margin(constraint[6:], v[6:], mode[1])
        return jnp.where(jnp.any(stuck), jnp.min(jnp.where(stuck, margins, jnp.inf)), 1.0)

    def slip(j):
        return lambda t, y, mode: jnp.where(mode[1][j] != 0, mode[1][j] * y[1][6 + j], 1.0)

    return [separation, breakaway] + [slip(j) for j in range(model.robot.n_joints)]


def settle(model: EjectionModel, y, mode):
    """Resolve the modes at an event: separation, slipping joints that stopped, stuck joints that break loose.

    Slipping joints whose rate reached zero stick (rate set to exactly zero). Then a consistent mode set is
    found by single pivots, each recomputing the constrained dynamics: a joint at rest marked slipping whose
    acceleration opposes its slip direction sticks again; otherwise the stuck joint exceeding its static
    torque by the most breaks loose, opposite to its holding torque. (Releasing one joint changes the others'
    loads, so a joint released earlier may have to stick again: the set MuJoCo's friction solver finds.)
    """
    q, v, loss = y
    phase, slip_dir = mode
    separated = model.compression - model.rail_axis @ q[:3] <= _SEPARATION_TOL * model.compression
    phase = jnp.where((phase == RAIL) & separated, FLIGHT, phase)
    if not model.friction.is_hybrid:
        return y, (phase, slip_dir)
    stopped = (slip_dir != 0) & (slip_dir * v[6:] <= _RATE_TOL)
    slip_dir = jnp.where(stopped, 0.0, slip_dir)
    v = v.at[6:].set(jnp.where(stopped, 0.0, v[6:]))
    static = model.friction.static_torque
    at_rest = v[6:] == 0.0

    def pivot(_, slip):
        accel, constraint, _ = jax.lax.stop_gradient(model.dynamics(q, v, (phase, slip)))
        holding = constraint[6:]
        wrong_way = jnp.where((slip != 0) & at_rest, -slip * accel[6:], -jnp.inf)
        excess = jnp.where(slip == 0, jnp.abs(holding) - static * (1 - _SEPARATION_TOL), -jnp.inf)
        restick, release = jnp.argmax(wrong_way), jnp.argmax(excess)
        slip_restuck = slip.at[restick].set(0.0)
        slip_released = slip.at[release].set(jnp.where(excess[release] > 0, -jnp.sign(holding[release]), slip[release]))
        return jnp.where(wrong_way[restick] > 0, slip_restuck, slip_released)

    slip_dir = jax.lax.fori_loop(0, 2 * model.robot.n_joints + 1, pivot, slip_dir)
    return (q, v, loss), (phase, slip_dir)


class EjectionRun(eqx.Module):
    """Raw outcome of one ejection simulation (arrays only, so it batches under ``vmap``)."""

    solution: HybridSolution
    initial_mode: tuple
    equivalent_mass: Float[Array, ""]


def equivalent_mass(model: EjectionModel, q0, slip_dir) -> Float[Array, ""]:
    """Effective mass seen by the spring at rest: ``1 / (e^T Hbar^{-1} e)`` over the rail and the free joints."""
    v0 = jnp.zeros(model.robot.nv)
    force = jnp.zeros(model.robot.nv).at[:3].set(model.rail_axis)
    base = model.rail
    accel, _ = restricted_dynamics(model.robot, q0, v0, force, base, model.friction.free_mask(slip_dir))
    return 1.0 / (model.rail_axis @ accel[:3])


def simulate_ejection(
    model: EjectionModel,
    joint_angles: Float[Array, " n"],
    t_final: float,
    n_save: int = 301,
    rtol: float = 1e-8,
    atol: float = 1e-10,
    max_steps: int = 20_000,
    max_segments: int = 16,
    solver=None,
) -> EjectionRun:
    """Simulate one ejection from rest at ``joint_angles`` (base at the origin, identity attitude). Pure; jit it."""
    robot = model.robot
    q0 = robot.neutral().at[7:].set(joint_angles)
    y0 = (q0, jnp.zeros(robot.nv), jnp.asarray(0.0))
    n = robot.n_joints
    start_dir = jnp.ones(n) if model.friction.model == "none" else jnp.zeros(n)
    y0, mode0 = settle(model, y0, (jnp.asarray(RAIL), start_dir))
    solution = hybrid_solve(
        _vector_field(model), _conditions(model), lambda t, y, mode: settle(model, y, mode), y0, mode0, t_final,
        n_save=n_save, rtol=rtol, atol=atol, max_steps=max_steps,
        max_segments=max_segments, solver=solver,
    )
    return EjectionRun(solution, mode0, equivalent_mass(model, q0, mode0[1]))


def rigid_motion(model: EjectionModel, q, v):
    """CoM velocity (world) and angular velocity (world) of the arm moving as one body (all joints stuck)."""
    linear, _ = momentum(model.robot, q, v)
    return linear / model.robot.total_mass, quat_to_rotation(q[3:7]) @ v[3:6]
