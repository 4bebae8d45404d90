"""Free-floating arm driven by joint torques: momentum-conserving motion of the whole system.

With no external wrench the system momentum is constant, so the base moves as the joints move (the
generalised-Jacobian setting): ``H(q) dv/dt + b(q, v) = [0; tau(t)]`` with
``tau_j = A_j sin(2 pi t / T) - c theta_dot_j``. ``diffspace run configs/free_floating.toml``.

Design variables: ``motion.torque_amplitude_N_m[j]``, ``motion.torque_period_s``,
``motion.joint_damping_N_m_s_rad``.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float, Int

from ...core import dynamics
from ...core.restricted import BaseMotion
from ...integrate import SolverSettings, Trajectory, simulate
from ...io.config import Field
from ...io.results import plot_panels, write_timeseries
from ...core.robot import Robot
from ...core.status import ConfigError, Status
from ..base import AbstractOutcome, AbstractParams, AbstractScenario, Parameter
from ..declare import declared
from ..declare import from_config as params_from_config
from ..robot_config import (ROBOT_FIELDS, joint_columns, joint_effort_unit, joint_panels, joint_scales,
                            joint_values_from_config, robot_from_config, simulation_fields, solver_settings)


class FreeFloatingParams(AbstractParams):
    torque_amplitude: Float[Array, " n"]  # N m (N for a prismatic joint): one per joint of the robot
    torque_period: Float[Array, ""] = declared("motion.torque_period_s", 1.0, gt=0.0, design=(1e-2, 1e3), log=True)
    joint_damping: Float[Array, ""] = declared("motion.joint_damping_N_m_s_rad", 0.0, min=0.0, design=(0.0, 1e3))


class FreeFloatingOutcome(AbstractOutcome):
    trajectory: Trajectory
    momentum: Float[Array, "T 6"]  # linear and angular, world
    kinetic_energy: Float[Array, " T"]
    end_effector: Float[Array, "T 3"]
    com: Float[Array, "T 3"]
    status: Int[Array, ""]


SOLVER = SolverSettings(rtol=1e-8, atol=1e-10, n_save=301, max_steps=100_000)
"""Defaults of ``[simulation]``."""


def _config_fields() -> dict:
    return {
        "robot": ROBOT_FIELDS,
        "motion": {
            "initial_attitude": Field("any", None, help="attitude name or joint values [deg; m if prismatic]"),
            "initial_joint_rates_deg_s": Field("floats", None, help="per joint [deg/s; m/s if prismatic]"),
            "initial_base_twist": Field("floats", [0.0] * 6, length=6, help="[v (m/s), w (rad/s)] base frame"),
            "torque_amplitude_N_m": Field("floats", None, help="per joint [N m; N if prismatic]; tau = A sin(2 pi t / T)"),
            "base_motion": Field("str", "free", choices=("free", "planar", "rail", "fixed")),
            "base_axis": Field("floats", [0.0, 1.0, 0.0], length=3, help="planar normal or rail axis"),
            "end_effector": Field("str", None, help="frame whose path is reported"),
        },
        "simulation": simulation_fields(SOLVER, t_final_s=3.0),
    }


def _vector(value, n: int, key: str) -> np.ndarray:
    if value is None:
        return np.zeros(n)
    if len(value) != n:
        raise ConfigError(f"{key}: expected {n} values, got {len(value)}")
    return np.asarray(value, dtype=float)


class FreeFloating(AbstractScenario):
    """A torque-driven arm on a free (or restricted) base."""

    name: ClassVar[str] = "free_floating"
    headline: ClassVar[tuple[str, str]] = ("end_effector_displacement_m", "motion.torque_period_s")
    params: FreeFloatingParams
    robot: Robot
    base_motion: BaseMotion
    q0: Float[Array, " nq"]
    v0: Float[Array, " nv"]
    t_final: Float[Array, ""]
    solver: SolverSettings
    end_effector: str = eqx.field(static=True)
    base_kind: str = eqx.field(static=True)

    @classmethod
    def config_fields(cls) -> dict:
        return _config_fields()

    @classmethod
    def from_config(cls, cfg: dict) -> "FreeFloating":
        robot = robot_from_config(cfg)
        m, sim = cfg["motion"], cfg["simulation"]
        n = robot.n_joints
        angles = np.zeros(n) if m["initial_attitude"] is None else joint_values_from_config(
            robot, m["initial_attitude"], "motion.initial_attitude")
        rates = _vector(m["initial_joint_rates_deg_s"], n, "motion.initial_joint_rates_deg_s") * joint_scales(robot)
        amplitude = _vector(m["torque_amplitude_N_m"], n, "motion.torque_amplitude_N_m")
        ee = m["end_effector"] or robot.frame_names[-1]
        if ee not in robot.frame_names:
            raise ConfigError(f"motion.end_effector: unknown frame '{ee}'")
        if m["base_motion"] in ("planar", "rail") and np.linalg.norm(m["base_axis"]) == 0:
            raise ConfigError("motion.base_axis: must be non-zero")
        params = params_from_config(FreeFloatingParams, cfg, torque_amplitude=jnp.asarray(amplitude))
        return cls(params=params, robot=robot, base_motion=BaseMotion.named(m["base_motion"], m["base_axis"]),
                   q0=robot.neutral().at[7:].set(jnp.asarray(angles)),
                   v0=jnp.concatenate([jnp.asarray(m["initial_base_twist"], float), jnp.asarray(rates)]),
                   t_final=jnp.asarray(sim["t_final_s"], float), solver=solver_settings(sim), end_effector=ee,
                   base_kind=m["base_motion"])

    def simulate(self, params: FreeFloatingParams) -> FreeFloatingOutcome:
        omega = 2 * jnp.pi / params.torque_period

        def torque(t, q, v):
            return params.torque_amplitude * jnp.sin(omega * t) - params.joint_damping * v[6:]

        traj = simulate(self.robot, self.q0, self.v0, self.t_final, torque, self.base_motion, settings=self.solver,
                        adjoint=self.adjoint)
        robot = self.robot
        mom = jax.vmap(lambda q, v: jnp.concatenate(dynamics.momentum(robot, q, v)))(traj.q, traj.v)
        energy = jax.vmap(lambda q, v: dynamics.kinetic_energy(robot, q, v))(traj.q, traj.v)
        ee = jax.vmap(lambda q: dynamics.frame_pose(robot, q, self.end_effector)[1])(traj.q)
        com = jax.vmap(lambda q: dynamics.center_of_mass(robot, q))(traj.q)
        return FreeFloatingOutcome(traj, mom, energy, ee, com, traj.status)

    def design_space(self) -> tuple[Parameter, ...]:
        joints = tuple(Parameter(f"motion.torque_amplitude_N_m[{j}]", -1e3, 1e3, joint_effort_unit(self.robot, j),
                                 "torque_amplitude", index=j, help=f"joint {j + 1} torque (force) amplitude")
                       for j in range(self.robot.n_joints))
        return joints + super().design_space()

    def metrics(self, params: FreeFloatingParams) -> dict:
        out = self.simulate(params)
        traj = out.trajectory
        return {"status": out.status,
                "base_displacement_m": jnp.linalg.norm(traj.q[-1, :3] - traj.q[0, :3]),
                "end_effector_displacement_m": jnp.linalg.norm(out.end_effector[-1] - out.end_effector[0]),
                "kinetic_energy_final_J": out.kinetic_energy[-1]}

    def summary(self, outcome: FreeFloatingOutcome) -> dict:
        traj = outcome.trajectory
        mom = np.asarray(outcome.momentum)
        q = np.asarray(traj.q)
        return {
            "status": Status(int(outcome.status)).label,
            "robot": self.robot.body_names[0],
            "n_joints": self.robot.n_joints,
            "base_motion": self.base_kind,
            "t_final_s": float(traj.ts[-1]),
            "solver_steps": int(traj.num_steps),
            "momentum_drift_kg_m_s": float(np.abs(mom - mom[0]).max()) if self.base_kind == "free" else None,
            "kinetic_energy_final_J": float(outcome.kinetic_energy[-1]),
            "base_displacement_m": float(np.linalg.norm(q[-1, :3] - q[0, :3])),
            "com_displacement_m": float(np.linalg.norm(np.asarray(outcome.com[-1] - outcome.com[0]))),
            "end_effector_displacement_m": float(np.linalg.norm(np.asarray(outcome.end_effector[-1] - outcome.end_effector[0]))),
        }

    def write(self, outcome: FreeFloatingOutcome, out: Path) -> None:
        traj = outcome.trajectory
        ts, q, ee = np.asarray(traj.ts), np.asarray(traj.q), np.asarray(outcome.end_effector)
        joints = joint_columns(self.robot, q[:, 7:], range(self.robot.n_joints))
        columns = {"t_s": ts, **{f"base_{a}_m": q[:, i] for i, a in enumerate("xyz")},
                   **joints,
                   **{f"ee_{a}_m": ee[:, i] for i, a in enumerate("xyz")},
                   "kinetic_energy_J": np.asarray(outcome.kinetic_energy)}
        write_timeseries(out, columns)
        plot_panels(out / "motion.png", ts, joint_panels(self.robot, joints, range(self.robot.n_joints)) + [
            ("base position [m]", {a: q[:, i] for i, a in enumerate("xyz")}),
            (f"{self.end_effector} position [m]", {a: ee[:, i] for i, a in enumerate("xyz")}),
        ], title=f"free floating {self.robot.body_names[0]} ({self.robot.n_joints} joints, {self.base_kind} base): "
                 "joints, base and end effector under the joint torques")

    def diagnose(self, outcome: FreeFloatingOutcome) -> str:
        return (f"phase 'motion': the ODE solver stopped before simulation.t_final_s (simulation.max_steps = "
                f"{self.solver.max_steps} reached or the step size collapsed)")
