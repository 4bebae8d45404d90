"""The ejection scenario (SPEC 5.1) on the scenario protocol: config, parameters, simulation, design space.

Config (public contract)::

    [robot]       path
    [ejection]    mode ("plane" | "space"), attitude (name or degrees), locked_joints (1-based),
                  spring_stiffness_N_m, spring_compression_m, rail_axis, method ("full" | "paper"),
                  limits ("stop" | "flag" | "ignore"), stop_restitution
    [friction]    model ("hybrid" | "smooth" | "none" | "locked"), static_N_m, coulomb_N_m,
                  viscous_N_m_s_rad, smooth_velocity_rad_s
    [simulation]  t_final_s, rtol, atol, n_save, max_steps, max_segments
    [measurement] standard deviations of measured data for ``fit``

Design variables (config keys, config units): ``ejection.attitude[i]`` (joint ``i + 1``, degrees),
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
from ...io.config import Field, Schema
from ...robot import Robot
from ...status import ConfigError
from ..base import AbstractParams, AbstractScenario, FitData, Parameter
from ..robot_config import ROBOT_FIELDS, SIMULATION_FIELDS, joint_angles_from_config, robot_from_config
from . import report
from .model import LIMIT_MODES, EjectionModel, equivalent_mass, simulate_ejection
from .outcome import EjectionOutcome, ejection_outcome

DEFAULT_LOCKED = {"plane": (1, 3, 5, 7), "space": ()}
SCALAR_KEYS = {  # design key -> (EjectionParams field, lower, upper, unit, log)
    "ejection.spring_stiffness_N_m": ("spring_stiffness", 1.0, 1e6, "N/m", True),
    "ejection.spring_compression_m": ("spring_compression", 1e-4, 1.0, "m", True),
    "friction.static_N_m": ("static_torque", 1e-3, 100.0, "N m", True),
    "friction.coulomb_N_m": ("coulomb_torque", 1e-3, 100.0, "N m", True),
    "friction.viscous_N_m_s_rad": ("viscous", 1e-2, 100.0, "N m s/rad", True),
    "friction.smooth_velocity_rad_s": ("smooth_velocity", 1e-6, 1.0, "rad/s", True),
    "ejection.stop_restitution": ("stop_restitution", 0.0, 1.0, "-", False),
}


class EjectionParams(AbstractParams):
    attitude: Float[Array, " n"]  # every joint of the robot [rad]
    spring_stiffness: Float[Array, ""]
    spring_compression: Float[Array, ""]
    static_torque: Float[Array, ""]
    coulomb_torque: Float[Array, ""]
    viscous: Float[Array, ""]
    smooth_velocity: Float[Array, ""]
    stop_restitution: Float[Array, ""]


class Settings(eqx.Module):
    """Integration settings: tolerances and horizon are data (changing them does not recompile)."""

    t_final: Float[Array, ""]
    rtol: Float[Array, ""]
    atol: Float[Array, ""]
    n_save: int = eqx.field(static=True)
    max_steps: int = eqx.field(static=True)
    max_segments: int = eqx.field(static=True)


def _indices_check(value):
    ok = isinstance(value, list) and all(isinstance(x, int) and not isinstance(x, bool) and x >= 1 for x in value)
    return None if ok else "expected a list of 1-based joint indices"


def _schema() -> Schema:
    simulation = dict(SIMULATION_FIELDS)
    simulation["max_segments"] = Field("int", 16, min=2, max=200, help="bound on hybrid events")
    simulation["max_steps"] = Field("int", 20_000, min=10)
    return Schema({
        "robot": ROBOT_FIELDS,
        "ejection": {
            "mode": Field("str", "plane", choices=("plane", "space")),
            "attitude": Field("any", "attitude_1", help="named attitude or joint angles [deg]"),
            "locked_joints": Field("any", None, check=_indices_check),
            "spring_stiffness_N_m": Field("float", 812.7, gt=0.0),
            "spring_compression_m": Field("float", 0.086, gt=0.0),
            "rail_axis": Field("floats", [0.0, 0.0, 1.0], length=3,
                               check=lambda v: None if np.linalg.norm(v) > 0 else "must be non-zero"),
            "method": Field("str", "full", choices=("full", "paper")),
            "limits": Field("str", "stop", choices=LIMIT_MODES,
                            help="joint limits: hard stops, flag the crossing in the status, or ignore them"),
            "stop_restitution": Field("float", 0.0, min=0.0, max=1.0, help="rebound of a joint at its stop"),
        },
        "friction": {
            "model": Field("str", "hybrid", choices=MODELS),
            "static_N_m": Field("float", 4.0, min=0.0),
            "coulomb_N_m": Field("float", 2.0, min=0.0),
            "viscous_N_m_s_rad": Field("float", 5.4, min=0.0),
            "smooth_velocity_rad_s": Field("float", 1e-3, gt=0.0),
        },
        "simulation": simulation,
        "measurement": {
            "velocity_std_m_s": Field("float", 1e-3, gt=0.0, help="noise of measured separation velocities"),
            "angular_rate_std_deg_s": Field("float", 0.1, gt=0.0),
            "angle_std_deg": Field("float", 0.05, gt=0.0, help="encoder noise of joint angle changes"),
        },
    })


class Ejection(AbstractScenario):
    """Spring ejection of a manipulator from its separation device (full hybrid multibody model)."""

    name: ClassVar[str] = "ejection"
    headline: ClassVar[tuple[str, str]] = ("stable_velocity_m_s", "ejection.attitude[3]")
    robot: Robot
    params: EjectionParams
    rail_axis: Float[Array, "3"]
    settings: Settings
    measurement_std: tuple[float, float, float] = eqx.field(static=True)  # velocity, angular rate, angle
    locked: tuple[int, ...] = eqx.field(static=True)  # 0-based
    mode: str = eqx.field(static=True)
    friction_model: str = eqx.field(static=True)
    method: str = eqx.field(static=True)
    limits: str = eqx.field(static=True)

    @classmethod
    def schema(cls) -> Schema:
        return _schema()

    @classmethod
    def from_config(cls, cfg: dict) -> "Ejection":
        robot = robot_from_config(cfg)
        ej, fr, sim = cfg["ejection"], cfg["friction"], cfg["simulation"]
        angles = joint_angles_from_config(robot, ej["attitude"], "ejection.attitude")
        locked = ej["locked_joints"] if ej["locked_joints"] is not None else DEFAULT_LOCKED[ej["mode"]]
        bad = [j for j in locked if not 1 <= j <= robot.n_joints]
        if bad:
            raise ConfigError(f"ejection.locked_joints: indices {bad} out of range 1..{robot.n_joints}")
        if len(set(locked)) == robot.n_joints:
            raise ConfigError("ejection.locked_joints: at least one joint must stay free (use friction.model = 'locked')")
        if fr["model"] == "hybrid" and fr["coulomb_N_m"] > fr["static_N_m"]:
            raise ConfigError("friction.coulomb_N_m: must not exceed friction.static_N_m for the hybrid model")
        scalar = lambda x: jnp.asarray(x, dtype=float)  # noqa: E731
        params = EjectionParams(jnp.asarray(angles, dtype=float), scalar(ej["spring_stiffness_N_m"]),
                                scalar(ej["spring_compression_m"]), scalar(fr["static_N_m"]),
                                scalar(fr["coulomb_N_m"]), scalar(fr["viscous_N_m_s_rad"]),
                                scalar(fr["smooth_velocity_rad_s"]), scalar(ej["stop_restitution"]))
        settings = Settings(scalar(sim["t_final_s"]), scalar(sim["rtol"]), scalar(sim["atol"]), sim["n_save"],
                            sim["max_steps"], sim["max_segments"])
        m = cfg["measurement"]
        std = (m["velocity_std_m_s"], m["angular_rate_std_deg_s"], m["angle_std_deg"])
        return cls(robot=robot, params=params, rail_axis=jnp.asarray(ej["rail_axis"], dtype=float),
                   settings=settings, measurement_std=std, locked=tuple(sorted(j - 1 for j in set(locked))),
                   mode=ej["mode"], friction_model=fr["model"], method=ej["method"], limits=ej["limits"])

    @property
    def free(self) -> list[int]:
        """0-based indices of the joints that are not locked."""
        return [j for j in range(self.robot.n_joints) if j not in self.locked]

    # ------------------------------------------------------------------ model
    def model(self, params: EjectionParams, locked=None, friction_model=None, mode=None):
        """The ejection model (locked joints merged at their angles) and the free joints' angles."""
        locked = self.locked if locked is None else locked
        friction_model = friction_model or self.friction_model
        robot = self.robot.lock(list(locked), params.attitude[jnp.asarray(locked, dtype=int)]) if locked else self.robot
        friction = JointFriction.uniform(robot.n_joints, params.static_torque, params.coulomb_torque, params.viscous,
                                         friction_model, params.smooth_velocity)
        flight = "space" if (mode or self.mode) == "space" else "plane"
        model = EjectionModel.build(robot, friction, params.spring_stiffness, params.spring_compression,
                                    self.rail_axis, flight, self.limits, params.stop_restitution)
        free = [j for j in range(self.robot.n_joints) if j not in locked]
        return model, params.attitude[jnp.asarray(free, dtype=int)]

    def frictionless_equivalent_mass(self, params: EjectionParams, mode: str):
        """Equivalent mass with the mode's default locked joints and every other joint free and frictionless."""
        locked = tuple(j - 1 for j in DEFAULT_LOCKED[mode])
        model, free_angles = self.model(params, locked, "none", mode)
        q0 = model.robot.neutral().at[7:].set(free_angles)
        return equivalent_mass(model, q0, jnp.ones(model.robot.n_joints))

    # ------------------------------------------------------------------ protocol
    def simulate(self, params: EjectionParams) -> EjectionOutcome:
        from .paper import paper_ejection

        model, free_angles = self.model(params)
        s = self.settings
        run = simulate_ejection(model, free_angles, s.t_final, s.n_save, s.rtol, s.atol, s.max_steps, s.max_segments)
        masses = (self.frictionless_equivalent_mass(params, "space"), self.frictionless_equivalent_mass(params, "plane"))
        paper = paper_ejection(model, free_angles) if self.method == "paper" else {}
        return ejection_outcome(model, run, free_angles, masses, paper)

    def with_design(self, params: EjectionParams, values: dict) -> EjectionParams:
        attitude = params.attitude
        replaced = {}
        for key, value in values.items():
            if key.startswith("ejection.attitude["):
                attitude = attitude.at[self._joint_index(key)].set(jnp.deg2rad(value))
            elif key in SCALAR_KEYS:
                replaced[SCALAR_KEYS[key][0]] = jnp.asarray(value, dtype=float)
            else:
                self.parameter(key)  # raises naming the known keys
        return eqx.tree_at(lambda p: [p.attitude] + [getattr(p, f) for f in replaced], params,
                           [attitude] + list(replaced.values()))

    def resolved_config(self, cfg: dict) -> dict:
        ejection = {**cfg["ejection"], "attitude": np.rad2deg(np.asarray(self.params.attitude)).tolist()}
        return {**cfg, "ejection": ejection}

    def _joint_index(self, key: str) -> int:
        index = int(key[len("ejection.attitude["):-1])
        if not 0 <= index < self.robot.n_joints:
            raise ConfigError(f"{key}: joint index out of range 0..{self.robot.n_joints - 1}")
        return index

    def design_space(self) -> tuple[Parameter, ...]:
        lower, upper = np.rad2deg(np.asarray(self.robot.lower)), np.rad2deg(np.asarray(self.robot.upper))
        joints = tuple(Parameter(f"ejection.attitude[{i}]", float(lower[i]) if np.isfinite(lower[i]) else -180.0,
                                 float(upper[i]) if np.isfinite(upper[i]) else 180.0, "deg",
                                 help=f"joint {i + 1} angle") for i in range(self.robot.n_joints))
        scalars = tuple(Parameter(key, lo, hi, unit, log) for key, (_, lo, hi, unit, log) in SCALAR_KEYS.items())
        return joints + scalars

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
        for k, j in enumerate(self.free):
            metrics[f"joint{j + 1}_change_at_separation_deg"] = jnp.rad2deg(outcome.joint_change_at_separation[k])
            metrics[f"joint{j + 1}_change_final_deg"] = jnp.rad2deg(outcome.joint_change_final[k])
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
