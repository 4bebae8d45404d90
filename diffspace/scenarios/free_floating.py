"""Free-floating arm driven by joint torques: momentum-conserving motion of the whole system.

With no external wrench the system momentum is constant, so the base moves as the joints move
(the generalised-Jacobian setting). ``diffspace run configs/free_floating.toml``.
"""

from __future__ import annotations

from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from .. import dynamics
from ..io.config import Field, Schema
from ..status import ConfigError
from ..dynamics import BaseMotion
from ..io.results import plot_panels, print_summary, write_summary, write_timeseries
from ..integrate import simulate
from .common import ROBOT_FIELDS, SIMULATION_FIELDS, joint_angles_from_config, robot_from_config


def schema() -> Schema:
    return Schema(
        {
            "robot": ROBOT_FIELDS,
            "motion": {
                "initial_attitude": Field("any", None, help="attitude name or joint angles [deg]"),
                "initial_joint_rates_deg_s": Field("floats", None),
                "initial_base_twist": Field("floats", [0.0] * 6, length=6, help="[v (m/s), w (rad/s)] base frame"),
                "torque_amplitude_N_m": Field("floats", None, help="per joint; tau = A sin(2 pi t / T)"),
                "torque_period_s": Field("float", 1.0, gt=0.0),
                "joint_damping_N_m_s_rad": Field("float", 0.0, min=0.0),
                "base_motion": Field("str", "free", choices=("free", "planar", "rail", "fixed")),
                "base_axis": Field("floats", [0.0, 1.0, 0.0], length=3, help="planar normal or rail axis"),
                "end_effector": Field("str", None, help="frame whose path is reported"),
            },
            "simulation": SIMULATION_FIELDS,
        }
    )


def _vector(value, n: int, key: str, default: float = 0.0) -> np.ndarray:
    if value is None:
        return np.full(n, default)
    if len(value) != n:
        raise ConfigError(f"{key}: expected {n} values, got {len(value)}")
    return np.asarray(value, dtype=float)


def run(cfg: dict, out: Path) -> dict:
    robot = robot_from_config(cfg)
    m, sim = cfg["motion"], cfg["simulation"]
    n = robot.n_joints
    angles = np.zeros(n) if m["initial_attitude"] is None else joint_angles_from_config(
        robot, m["initial_attitude"], "motion.initial_attitude"
    )
    rates = np.deg2rad(_vector(m["initial_joint_rates_deg_s"], n, "motion.initial_joint_rates_deg_s"))
    amplitude = jnp.asarray(_vector(m["torque_amplitude_N_m"], n, "motion.torque_amplitude_N_m"))
    ee = m["end_effector"] or robot.frame_names[-1]
    if ee not in robot.frame_names:
        raise ConfigError(f"motion.end_effector: unknown frame '{ee}'")
    if m["base_motion"] == "planar" or m["base_motion"] == "rail":
        if np.linalg.norm(m["base_axis"]) == 0:
            raise ConfigError("motion.base_axis: must be non-zero")
    base_motion = BaseMotion.named(m["base_motion"], m["base_axis"])
    omega, damping = 2 * np.pi / m["torque_period_s"], m["joint_damping_N_m_s_rad"]

    def torque(t, q, v):
        return amplitude * jnp.sin(omega * t) - damping * v[6:]

    q0 = robot.neutral().at[7:].set(angles)
    v0 = jnp.concatenate([jnp.asarray(m["initial_base_twist"]), jnp.asarray(rates)])
    traj = simulate(
        robot, q0, v0, sim["t_final_s"], torque, base_motion, rtol=sim["rtol"], atol=sim["atol"],
        n_save=sim["n_save"], max_steps=sim["max_steps"], progress=sim["progress"],
    )
    mom = jax.vmap(lambda q, v: jnp.concatenate(dynamics.momentum(robot, q, v)))(traj.q, traj.v)
    energy = jax.vmap(lambda q, v: dynamics.kinetic_energy(robot, q, v))(traj.q, traj.v)
    ee_pos = jax.vmap(lambda q: dynamics.frame_pose(robot, q, ee)[1])(traj.q)
    com = jax.vmap(lambda q: dynamics.center_of_mass(robot, q))(traj.q)
    ts = np.asarray(traj.ts)
    summary = {
        "robot": robot.body_names[0],
        "n_joints": n,
        "base_motion": m["base_motion"],
        "t_final_s": float(ts[-1]),
        "solver_steps": int(traj.num_steps),
        "momentum_drift_kg_m_s": float(jnp.abs(mom - mom[0]).max()) if m["base_motion"] == "free" else None,
        "kinetic_energy_final_J": float(energy[-1]),
        "base_displacement_m": float(jnp.linalg.norm(traj.q[-1, :3] - traj.q[0, :3])),
        "com_displacement_m": float(jnp.linalg.norm(com[-1] - com[0])),
        "end_effector_displacement_m": float(jnp.linalg.norm(ee_pos[-1] - ee_pos[0])),
    }
    columns = {"t_s": ts}
    columns.update({f"base_{a}_m": traj.q[:, i] for i, a in enumerate("xyz")})
    columns.update({f"joint{j + 1}_rad": traj.q[:, 7 + j] for j in range(n)})
    columns.update({f"ee_{a}_m": ee_pos[:, i] for i, a in enumerate("xyz")})
    columns["kinetic_energy_J"] = energy
    write_timeseries(out, columns)
    plot_panels(
        out / "motion.png",
        ts,
        [
            ("joint angle [deg]", {f"q{j + 1}": np.rad2deg(traj.q[:, 7 + j]) for j in range(n)}),
            ("base position [m]", {a: traj.q[:, i] for i, a in enumerate("xyz")}),
            (f"{ee} position [m]", {a: ee_pos[:, i] for i, a in enumerate("xyz")}),
        ],
    )
    write_summary(out, summary)
    print_summary(summary, f"free-floating motion of {cfg['robot']['path'].name}")
    return summary
