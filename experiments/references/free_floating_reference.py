r"""Independent free-floating arm: Pinocchio's dynamics on the same URDF, integrated by SciPy (no diffspace
code). Shares nothing with diffspace but the URDF and the numbers read from the same TOML.

**Model.** ``pinocchio.buildModelFromUrdf(path, JointModelFreeFlyer())``, no gravity. Configuration ``q =
[p_B, quat_B (x, y, z, w), theta]`` (base position and attitude in the world), velocity ``v = [v_B, w_B,
theta_dot]`` (base twist in base axes): Pinocchio's free-flyer conventions. With no external wrench

.. math:: \dot v = \mathrm{ABA}(q, v, [0_6; \tau]),\qquad \tau_j = A_j \sin(2\pi t / T) - c\,\dot\theta_j,

``dp_B/dt = R_B v_B``, ``dquat/dt = 1/2 quat (x) [w_B, 0]``, ``dtheta/dt = theta_dot``
(experiments/references/capture_reference_model.py's quaternion helpers). Integrated by ``solve_ivp`` (DOP853); the
quaternion is normalised where it is used (the integrated one stays unit to the solver's tolerance).
End effector: ``oMf`` of the configured frame after ``framesForwardKinematics``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pinocchio as pin
from .capture_reference_model import quat_rate, rotation, unit
from scipy.integrate import solve_ivp
from .unilateral_reference import read_config


@dataclass(frozen=True)
class FloatingCase:
    """The free-floating run of a TOML (revolute joints; angles in rad)."""

    urdf: Path
    q0: np.ndarray
    v0: np.ndarray
    amplitude: np.ndarray
    period: float
    damping: float
    t_final: float
    end_effector: str

    @classmethod
    def from_config(cls, path: Path, overrides: dict) -> FloatingCase:
        cfg = read_config(Path(path), overrides)
        m = cfg["motion"]
        if m["base_motion"] != "free" or isinstance(m["initial_attitude"], str):
            raise ValueError("the reference covers a free base and an attitude given as joint angles")
        angles = np.deg2rad(m["initial_attitude"])
        rates = np.deg2rad(m.get("initial_joint_rates_deg_s", np.zeros(angles.size)))
        q0 = np.concatenate([np.zeros(3), [0.0, 0.0, 0.0, 1.0], angles])
        v0 = np.concatenate([m.get("initial_base_twist", np.zeros(6)), rates])
        return cls(Path(path).parent / cfg["robot"]["path"], q0, v0, np.asarray(m["torque_amplitude_N_m"], float),
                   m["torque_period_s"], m["joint_damping_N_m_s_rad"], cfg["simulation"]["t_final_s"],
                   m["end_effector"])


class FloatingReference:
    """Pinocchio model of the case's URDF on a free flyer, zero gravity."""

    def __init__(self, case: FloatingCase):
        self.case = case
        self.model = pin.buildModelFromUrdf(str(case.urdf), pin.JointModelFreeFlyer())
        self.model.gravity.linear[:] = 0.0
        self.data = self.model.createData()
        self.frame = self.model.getFrameId(case.end_effector)

    @property
    def joint_names(self) -> list[str]:
        return list(self.model.names[2:])  # universe, root free flyer, then the arm's joints

    def torque(self, t, v) -> np.ndarray:
        case = self.case
        return np.concatenate([np.zeros(6), case.amplitude * np.sin(2.0 * np.pi * t / case.period)
                               - case.damping * v[6:]])

    def rhs(self, t, y):
        nq = self.model.nq
        q, v = y[:nq].copy(), y[nq:]
        q[3:7] = unit(q[3:7])
        accel = pin.aba(self.model, self.data, q, v, self.torque(t, v))
        q_dot = np.concatenate([rotation(q[3:7]) @ v[:3], quat_rate(q[3:7], v[3:6]), v[6:]])
        return np.concatenate([q_dot, accel])

    def end_effector(self, q) -> np.ndarray:
        q = q.copy()
        q[3:7] = unit(q[3:7])
        pin.framesForwardKinematics(self.model, self.data, q)
        return self.data.oMf[self.frame].translation.copy()

    def simulate(self, ts, rtol=1e-11, atol=1e-12) -> dict:
        """``q``, ``v`` and the end-effector position at ``ts`` (DOP853)."""
        y0 = np.concatenate([self.case.q0, self.case.v0])
        sol = solve_ivp(self.rhs, (0.0, ts[-1]), y0, method="DOP853", t_eval=ts, rtol=rtol, atol=atol)
        if not sol.success:
            raise RuntimeError(f"solve_ivp failed: {sol.message}")
        nq = self.model.nq
        q, v = sol.y[:nq].T, sol.y[nq:].T
        return {"ts": sol.t, "q": q, "v": v, "end_effector": np.array([self.end_effector(qi) for qi in q]),
                "nfev": sol.nfev}


def attitude_error(quat_a, quat_b) -> np.ndarray:
    """Rotation angle [rad] between the attitudes of two quaternion series ``(T, 4)`` (xyzw): the angle of
    ``R_a^T R_b`` from its skew part and trace (accurate for small angles)."""
    def angle(a, b):
        rel = rotation(a).T @ rotation(b)
        skew = np.array([rel[2, 1] - rel[1, 2], rel[0, 2] - rel[2, 0], rel[1, 0] - rel[0, 1]])
        return np.arctan2(0.5 * np.linalg.norm(skew), 0.5 * (np.trace(rel) - 1.0))

    return np.array([angle(a, b) for a, b in zip(quat_a, quat_b)])


def compare(ours: dict, ref: dict) -> dict:
    """Largest deviations over the run: base position [m], attitude [rad], joint angles [rad], base twist and
    joint rates [m/s, rad/s], end effector [m]; and the motion's scale (largest end-effector excursion)."""
    q, r, path = ours["q"], ref["q"], ref["end_effector"]
    return {"base_position_m": float(np.abs(q[:, :3] - r[:, :3]).max()),
            "base_attitude_rad": float(attitude_error(q[:, 3:7], r[:, 3:7]).max()),
            "joint_angles_rad": float(np.abs(q[:, 7:] - r[:, 7:]).max()),
            "velocities": float(np.abs(ours["v"] - ref["v"]).max()),
            "end_effector_m": float(np.linalg.norm(ours["end_effector"] - ref["end_effector"], axis=1).max()),
            "end_effector_excursion_m": float(np.linalg.norm(path - path[0], axis=1).max()),
            "base_excursion_m": float(np.linalg.norm(r[:, :3] - r[0, :3], axis=1).max())}


# ---------------------------------------------------------------------------------------------- diffspace side
def diffspace_floating(config: Path, overrides: dict) -> dict:
    """diffspace's run through the scenario API (imported here): times, ``q``, ``v``, end effector, joint
    names, solver steps."""
    import equinox as eqx

    from diffspace.scenarios import load_scenario

    scenario = load_scenario(config, [f"{key}={json.dumps(value)}" for key, value in overrides.items()])
    out = eqx.filter_jit(lambda s, params: s.simulate(params))(scenario, scenario.params)
    traj = out.trajectory
    return {"ts": np.asarray(traj.ts), "q": np.asarray(traj.q), "v": np.asarray(traj.v),
            "end_effector": np.asarray(out.end_effector), "joint_names": list(scenario.robot.joint_names),
            "steps": int(traj.num_steps), "status": int(out.status)}
