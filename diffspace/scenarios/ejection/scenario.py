"""The ejection scenario on the scenario protocol: config, parameters, simulation, design space.

Config (public contract)::

    [robot]       path
    [ejection]    mode ("plane" | "space"), attitude (name or degrees), locked_joints (1-based),
                  spring_stiffness_N_m, spring_compression_m, rail_axis, method ("full" | "paper"),
                  limits ("stop" | "flag" | "ignore"), stop_restitution
    [friction]    model ("hybrid" | "smooth" | "none" | "locked"), static_N_m, coulomb_N_m,
                  viscous_N_m_s_rad, smooth_velocity_rad_s
    [simulation]  t_final_s, rtol, atol, n_save, max_steps, max_segments
    [measurement] standard deviations of measured data for ``fit``

Joint lists (``attitude``) are in degrees for revolute joints and metres for prismatic ones.
``locked_joints`` defaults to none in space; on the air table (``plane``) to every joint that would move the
arm out of the plane (read from the kinematics at the attitude: axes not normal to the plane).

Design variables (config keys, config units): ``ejection.attitude[i]`` (joint ``i + 1``, degrees or metres),
``ejection.spring_stiffness_N_m``, ``ejection.spring_compression_m``, ``friction.static_N_m``,
``friction.coulomb_N_m``, ``friction.viscous_N_m_s_rad``, ``friction.smooth_velocity_rad_s``.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from ...actuation.friction import MODELS, JointFriction
from ...io.config import Field
from ...core.robot import Robot
from ...core.status import ConfigError
from ...integrate import SolverSettings
from ..base import AbstractParams, AbstractScenario, FitData, Parameter
from ..declare import declared
from ..declare import from_config as params_from_config
from ..robot_config import (ROBOT_FIELDS, joint_column, joint_scales, joint_unit, joint_values_from_config,
                            joint_values_to_config, robot_from_config, simulation_fields, solver_settings)
from . import report
from .model import LIMIT_MODES, EjectionModel, equivalent_mass, plane_locked_joints, simulate_ejection
from .outcome import EjectionOutcome, ejection_outcome
from .paper import paper_ejection

UNLIMITED_BOUNDS = {"deg": 180.0, "m": 1.0}  # design bounds of a joint without limits, +-, config units


class EjectionParams(AbstractParams):
    attitude: Float[Array, " n"]  # every joint of the robot [rad or m], from the named or given attitude
    spring_stiffness: Float[Array, ""] = declared("ejection.spring_stiffness_N_m", 812.7, gt=0.0, design=(1.0, 1e6),
                                                  log=True)
    spring_compression: Float[Array, ""] = declared("ejection.spring_compression_m", 0.086, gt=0.0,
                                                    design=(1e-4, 1.0), log=True)
    static_torque: Float[Array, ""] = declared("friction.static_N_m", 4.0, min=0.0, design=(1e-3, 100.0), log=True)
    coulomb_torque: Float[Array, ""] = declared("friction.coulomb_N_m", 2.0, min=0.0, design=(1e-3, 100.0), log=True)
    viscous: Float[Array, ""] = declared("friction.viscous_N_m_s_rad", 5.4, min=0.0, design=(1e-2, 100.0), log=True)
    smooth_velocity: Float[Array, ""] = declared("friction.smooth_velocity_rad_s", 1e-3, gt=0.0, design=(1e-6, 1.0),
                                                 log=True)
    stop_restitution: Float[Array, ""] = declared("ejection.stop_restitution", 0.0, min=0.0, max=1.0,
                                                  design=(0.0, 1.0), help="rebound of a joint at its stop")


SOLVER = SolverSettings(rtol=1e-8, atol=1e-10, n_save=301, max_steps=20_000, max_segments=16)
"""Defaults of ``[simulation]``."""


def _indices_check(value):
    ok = isinstance(value, list) and all(isinstance(x, int) and not isinstance(x, bool) and x >= 1 for x in value)
    return None if ok else "expected a list of 1-based joint indices"


def _config_fields() -> dict:
    return {
        "robot": ROBOT_FIELDS,
        "ejection": {
            "mode": Field("str", "plane", choices=("plane", "space")),
            "attitude": Field("any", "attitude_1", help="named attitude or joint angles [deg]"),
            "locked_joints": Field("any", None, check=_indices_check),
            "rail_axis": Field("floats", [0.0, 0.0, 1.0], length=3,
                               check=lambda v: None if np.linalg.norm(v) > 0 else "must be non-zero"),
            "method": Field("str", "full", choices=("full", "paper")),
            "limits": Field("str", "stop", choices=LIMIT_MODES,
                            help="joint limits: hard stops, flag the crossing in the status, or ignore them"),
        },
        "friction": {
            "model": Field("str", "hybrid", choices=MODELS),
        },
        "simulation": simulation_fields(SOLVER, t_final_s=3.0, segments=True),
        "measurement": {
            "velocity_std_m_s": Field("float", 1e-3, gt=0.0, help="noise of measured separation velocities"),
            "angular_rate_std_deg_s": Field("float", 0.1, gt=0.0),
            "angle_std_deg": Field("float", 0.05, gt=0.0, help="encoder noise of revolute joint angle changes"),
            "travel_std_m": Field("float", 1e-4, gt=0.0, help="encoder noise of prismatic joint changes"),
        },
    }


class Ejection(AbstractScenario):
    """Spring ejection of a manipulator from its separation device (full hybrid multibody model)."""

    name: ClassVar[str] = "ejection"
    headline: ClassVar[tuple[str, str]] = ("stable_velocity_m_s", "ejection.attitude[3]")
    robot: Robot
    params: EjectionParams
    rail_axis: Float[Array, "3"]
    t_final: Float[Array, ""]  # horizon [s]
    solver: SolverSettings
    measurement_std: tuple[float, ...] = eqx.field(static=True)  # velocity, angular rate, angle, travel
    locked: tuple[int, ...] = eqx.field(static=True)  # 0-based
    plane_default_locked: tuple[int, ...] = eqx.field(static=True)  # 0-based: joints leaving the air-table plane
    joint_bounds: tuple[tuple[float, float], ...] = eqx.field(static=True)  # design bounds, config units (host
    # data: design_space() runs while a batched scenario's robot arrays are traced)
    mode: str = eqx.field(static=True)
    friction_model: str = eqx.field(static=True)
    method: str = eqx.field(static=True)
    limits: str = eqx.field(static=True)

    @classmethod
    def config_fields(cls) -> dict:
        return _config_fields()

    @classmethod
    def from_config(cls, cfg: dict) -> "Ejection":
        robot = robot_from_config(cfg)
        ej, fr, sim = cfg["ejection"], cfg["friction"], cfg["simulation"]
        coordinates = joint_values_from_config(robot, ej["attitude"], "ejection.attitude")
        plane_default = plane_locked_joints(robot, coordinates, ej["rail_axis"])
        locked = _locked_joints(ej, robot.n_joints, plane_default)
        if fr["model"] == "hybrid" and fr["coulomb_N_m"] > fr["static_N_m"]:
            raise ConfigError("friction.coulomb_N_m: must not exceed friction.static_N_m for the hybrid model")
        params = params_from_config(EjectionParams, cfg, attitude=jnp.asarray(coordinates, dtype=float))
        m = cfg["measurement"]
        std = (m["velocity_std_m_s"], m["angular_rate_std_deg_s"], m["angle_std_deg"], m["travel_std_m"])
        return cls(robot=robot, params=params, rail_axis=jnp.asarray(ej["rail_axis"], dtype=float),
                   t_final=jnp.asarray(sim["t_final_s"], dtype=float), solver=solver_settings(sim),
                   measurement_std=std, locked=locked,
                   plane_default_locked=plane_default, joint_bounds=_joint_bounds(robot),
                   mode=ej["mode"], friction_model=fr["model"], method=ej["method"], limits=ej["limits"])

    @property
    def free(self) -> list[int]:
        """0-based indices of the joints that are not locked."""
        return [j for j in range(self.robot.n_joints) if j not in self.locked]

    # ------------------------------------------------------------------ model
    def _locked_arm(self, params: EjectionParams, locked: tuple[int, ...]) -> tuple[Robot, Array]:
        """The robot with the joints ``locked`` merged at their angles, and the other joints' angles."""
        robot = self.robot.lock(list(locked), params.attitude[jnp.asarray(locked, dtype=int)]) if locked else self.robot
        free = [j for j in range(self.robot.n_joints) if j not in locked]
        return robot, params.attitude[jnp.asarray(free, dtype=int)]

    def model_of(self, params: EjectionParams) -> tuple[EjectionModel, Array]:
        """The ejection model (this run's locked joints merged at their angles) and the free joints' angles."""
        robot, free_angles = self._locked_arm(params, self.locked)
        friction = JointFriction.uniform(robot.n_joints, params.static_torque, params.coulomb_torque, params.viscous,
                                         self.friction_model, params.smooth_velocity)
        flight = "space" if self.mode == "space" else "plane"
        model = EjectionModel.build(robot, friction, params.spring_stiffness, params.spring_compression,
                                    self.rail_axis, flight, self.limits, params.stop_restitution)
        return model, free_angles

    def locked_in(self, mode: str) -> tuple[int, ...]:
        """0-based joints locked in ``mode``: this run's set in its own mode; otherwise that mode's default (none
        in space; on the air table the joints that would leave the plane)."""
        if mode == self.mode:
            return self.locked
        return () if mode == "space" else self.plane_default_locked

    def frictionless_equivalent_masses(self, params: EjectionParams, rail_axis) -> Array:
        """Equivalent masses on the rail in space and on the air table (``(2,)``): the joints locked in each mode
        (:meth:`locked_in`) held at their angles, every other joint free and frictionless; from one mass matrix
        of the whole robot (holding a joint is merging it, ``Robot.lock``)."""
        q0 = self.robot.neutral().at[7:].set(params.attitude)
        free = [[j not in self.locked_in(mode) for j in range(self.robot.n_joints)] for mode in ("space", "plane")]
        return equivalent_mass(self.robot, rail_axis, q0, np.asarray(free, dtype=float))

    # ------------------------------------------------------------------ protocol
    def simulate(self, params: EjectionParams) -> EjectionOutcome:
        model, free_angles = self.model_of(params)
        run = simulate_ejection(model, free_angles, self.t_final, self.solver, adjoint=self.adjoint)
        masses = self.frictionless_equivalent_masses(params, model.rail_axis)
        paper = paper_ejection(model, free_angles) if self.method == "paper" else None
        return ejection_outcome(model, run, free_angles, masses, paper)

    def design_space(self) -> tuple[Parameter, ...]:
        robot = self.robot
        joints = tuple(Parameter(f"ejection.attitude[{i}]", lower, upper, joint_unit(robot, i), "attitude", index=i,
                                 help=f"joint {i + 1} ({robot.joint_names[i]})")
                       for i, (lower, upper) in enumerate(self.joint_bounds))
        return joints + super().design_space()

    def metrics(self, params: EjectionParams) -> dict:
        outcome = self.simulate(params)
        metrics = {
            "status": outcome.status,
            "equivalent_mass_kg": outcome.equivalent_mass,
            "separation_time_s": outcome.separation_time,
            "separation_velocity_m_s": outcome.separation_velocity,
            "stable_time_s": outcome.stable_time,
            "stable_velocity_m_s": outcome.stable_velocity,
            "stable_angular_velocity_deg_s": jnp.rad2deg(outcome.tumbling_rate),
            "friction_loss_J": outcome.friction_loss,
        }
        scale = joint_scales(self.robot)
        for k, j in enumerate(self.free):
            metrics[joint_column(self.robot, j, "_change_at_separation")] = outcome.joint_change_at_separation[k] / scale[j]
            metrics[joint_column(self.robot, j, "_change_final")] = outcome.joint_change_final[k] / scale[j]
        return metrics

    def summary(self, outcome: EjectionOutcome) -> dict:
        return report.summary(self, outcome)

    def write(self, outcome: EjectionOutcome, out: Path) -> None:
        report.write(self, outcome, out)

    def diagnose(self, outcome: EjectionOutcome) -> str:
        return report.diagnose(self, outcome)

    def read_data(self, path: Path) -> FitData:
        from .data import read_ejection_data

        return read_ejection_data(self, path)


def _joint_bounds(robot) -> tuple[tuple[float, float], ...]:
    """Each joint's design bounds in config units: its limits, or +-180 deg / +-1 m where it has none."""
    lower, upper = joint_values_to_config(robot, robot.lower), joint_values_to_config(robot, robot.upper)
    bounds = []
    for i in range(robot.n_joints):
        unlimited = UNLIMITED_BOUNDS[joint_unit(robot, i)]
        bounds.append((float(lower[i]) if np.isfinite(lower[i]) else -unlimited,
                       float(upper[i]) if np.isfinite(upper[i]) else unlimited))
    return tuple(bounds)


def _locked_joints(ejection: dict, n_joints: int, plane_default: tuple[int, ...]) -> tuple[int, ...]:
    """0-based locked joints: ``ejection.locked_joints`` (1-based) checked against the robot, else the mode's
    default (none in space, the joints leaving the plane on the air table)."""
    given = ejection["locked_joints"]
    if given is None:
        return () if ejection["mode"] == "space" else plane_default
    bad = [j for j in given if not 1 <= j <= n_joints]
    if bad:
        raise ConfigError(f"ejection.locked_joints: indices {bad} out of range 1..{n_joints}")
    return tuple(sorted(j - 1 for j in set(given)))
