"""Diffrax driver for the floating-base system: state ``(q, v)``, any Diffrax solver, dense time series."""

from __future__ import annotations

from typing import Callable

import diffrax
import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Float, Int

from ..core.dynamics import configuration_derivative
from ..core.restricted import BaseMotion, restricted_dynamics
from ..core.robot import Robot
from ..core.status import SolverFailure, Status, flag
from .settings import SolverSettings
from .smooth import solve_smooth


class Trajectory(eqx.Module):
    """Saved states: ``ts (T,)``, ``q (T, nq)``, ``v (T, nv)``, the solver's step count and the
    :class:`~diffspace.core.status.Status` (``SOLVER_FAILURE`` where the solve did not reach ``t_final``)."""

    ts: Float[Array, " T"]
    q: Float[Array, "T nq"]
    v: Float[Array, "T nv"]
    num_steps: Int[Array, ""]
    status: Int[Array, ""]


def simulate(
    robot: Robot,
    q0: Float[Array, " nq"],
    v0: Float[Array, " nv"],
    t_final: float,
    torque: Callable | None = None,
    base_motion: BaseMotion | None = None,
    solver: diffrax.AbstractSolver | None = None,
    settings: SolverSettings = SolverSettings(n_save=201),
    progress: bool = False,
    adjoint: diffrax.AbstractAdjoint | None = None,
) -> Trajectory:
    """Integrate ``H(q) dv/dt + b(q, v) = [0; tau(t, q, v)]`` with ``dq/dt`` from the free-flyer kinematics.

    ``torque(t, q, v)`` returns the ``n`` joint torques (default zero). ``base_motion`` restricts the base
    (default free). ``settings``: tolerances, saved points and step budget. The default solver is Tsit5 with a
    PID step-size controller (:func:`~diffspace.integrate.smooth.solve_smooth`); the quaternion norm is
    held by the stabilising term of :func:`~diffspace.core.dynamics.configuration_derivative`. Reverse-mode
    gradients go through ``RecursiveCheckpointAdjoint``. An unfinished run has ``status = SOLVER_FAILURE``;
    called outside ``jit`` it raises :class:`~diffspace.core.status.SolverFailure` instead.
    """
    base_motion = BaseMotion.free() if base_motion is None else base_motion
    n = robot.n_joints

    def vector_field(t, state, args):
        q, v = state
        tau_joints = jnp.zeros(n) if torque is None else torque(t, q, v)
        tau = jnp.concatenate([jnp.zeros(6), tau_joints])
        accel, _ = restricted_dynamics(robot, q, v, tau, base_motion)
        return configuration_derivative(q, v), accel

    y0 = (jnp.asarray(q0, dtype=float), base_motion.project(jnp.asarray(v0, dtype=float)))
    sol = solve_smooth(vector_field, y0, t_final, settings, solver=solver, adjoint=adjoint, progress=progress)
    check_result(sol.result, "free-floating motion")
    status = flag(sol.result != diffrax.RESULTS.successful, Status.SOLVER_FAILURE)
    return Trajectory(sol.ts, sol.ys[0], sol.ys[1], sol.stats["num_steps"], status)


def check_result(result, phase: str) -> None:
    """Raise :class:`SolverFailure` naming ``phase`` if a Diffrax result is not successful (no-op under jit)."""
    try:
        ok = bool(result == diffrax.RESULTS.successful)
    except Exception:  # traced: the caller checks after jit
        return
    if not ok:
        raise SolverFailure(f"integration failed in phase '{phase}': {diffrax.RESULTS[result]}")
