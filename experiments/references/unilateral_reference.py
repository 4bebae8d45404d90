"""An independent solution of the unilateral-contact scenario: Pinocchio dynamics, NumPy controller and a
Stewart-Trinkle velocity-level time stepper whose contact problem is solved by enumerating the contact
modes. It shares nothing with diffspace but the robot description and the task read from the same TOML.

* **Dynamics**: a Pinocchio model built here from the config's numbers, with the paper's coordinates as
  joints: prismatic x, prismatic y, revolute z (the base: 1000 kg, ``J0``), then three revolute z joints
  ``l0, l1, l2`` below each other, slender rods ``m l^2 / 12`` with centres at ``l_i / 2``, the tip frame
  ``l3`` below joint 3. So ``q`` and ``u = q'`` are the paper's ``[x0, y0, theta0, theta1..3]`` directly,
  ``M = crba``, ``h = nonLinearEffects`` (no gravity), the tip Jacobian from ``computeFrameJacobian``.
* **Controller**: the task-space law of the scenario written out again from its equations (quintic
  rest-to-rest slide and pressing ramp, tangential PD, pressing force with normal damping, damped
  least-squares null-space posture hold with ``k = k0 (1 - w / w0)^2`` below ``w0``, base PD).
* **Contact** (Stewart & Trinkle 1996; one point, planar, friction directions ``+-t``): with ``u_f = u +
  dt M^-1 (Q - h)``, the impulses ``p = (p_N, p_T)`` make ``u+ = u_f + M^-1 [J_N; J_T]^T p`` satisfy
  ``0 <= p_N _|_ J_N u+ + g / dt >= 0`` and Coulomb's law on ``J_T u+``. Instead of an LCP pivot method the
  four modes are tried in turn, each a linear solve with the 2x2 Delassus matrix ``G``, and the one whose
  inequalities hold is taken: *separated* (``p = 0``, ``J_N u_f + g / dt >= 0``), *stick* (``J u+ = (-g / dt,
  0)``, ``p_N >= 0``, ``|p_T| <= mu p_N``), *slip* ``s = +-1`` (``p_T = -s mu p_N``, ``J_N u+ = -g / dt``,
  ``p_N >= 0``, ``s J_T u+ >= 0``). Then ``q+ = q + dt u+`` (semi-implicit Euler).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import pinocchio as pin

SEPARATED, STICK, SLIP_POSITIVE, SLIP_NEGATIVE = 0, 1, 2, 3  # the scenario's mode codes (sliding along +x: 2)


def read_config(path: Path, overrides: dict) -> dict:
    """The TOML file with ``{"section.key": value}`` overrides applied."""
    cfg = tomllib.loads(path.read_text())
    for key, value in overrides.items():
        section, name = key.split(".")
        cfg[section][name] = value
    return cfg


def build_model(robot: dict):
    """The planar arm as a Pinocchio model (see the module text); returns ``(model, tip frame id)``."""
    masses, lengths = robot["masses_kg"], robot["lengths_m"]
    model = pin.Model()
    model.gravity = pin.Motion.Zero()
    joint = model.addJoint(0, pin.JointModelPX(), pin.SE3.Identity(), "x0")
    joint = model.addJoint(joint, pin.JointModelPY(), pin.SE3.Identity(), "y0")
    joint = model.addJoint(joint, pin.JointModelRZ(), pin.SE3.Identity(), "theta0")
    model.appendBodyToJoint(joint, pin.Inertia(masses[0], np.zeros(3), np.eye(3) * robot["base_inertia_kg_m2"]),
                            pin.SE3.Identity())
    offset = lengths[0]
    for i, (mass, length) in enumerate(zip(masses[1:], lengths[1:]), start=1):
        placement = pin.SE3(np.eye(3), np.array([0.0, -offset, 0.0]))
        joint = model.addJoint(joint, pin.JointModelRZ(), placement, f"theta{i}")
        rod = mass * length**2 / 12.0
        model.appendBodyToJoint(joint, pin.Inertia(mass, np.array([0.0, -length / 2, 0.0]),
                                                   np.diag([rod, 1e-6 * rod, rod])), pin.SE3.Identity())
        offset = length
    tip = model.addFrame(pin.Frame("tip", joint, 0, pin.SE3(np.eye(3), np.array([0.0, -offset, 0.0])),
                                   pin.FrameType.OP_FRAME))
    return model, tip


def quintic(tau: float) -> tuple[float, float]:
    """Rest-to-rest shape ``10 tau^3 - 15 tau^4 + 6 tau^5`` and its derivative, held outside ``[0, 1]``."""
    if tau <= 0.0 or tau >= 1.0:
        return float(tau >= 1.0), 0.0
    return tau**3 * (10 - 15 * tau + 6 * tau**2), 30 * tau**2 * (1 - tau) ** 2


@dataclass
class Controller:
    """The scenario's press-and-slide law (module text), in SI units from ``[controller]``."""

    c: dict
    q0: np.ndarray
    tip_x0: float

    def __call__(self, t, q, u, tip, jac) -> tuple[np.ndarray, float]:
        c = self.c
        shape, slope = quintic((t - c["slide_start_s"]) / c["slide_duration_s"])
        offset, rate = c["slide_m"] * shape, c["slide_m"] * slope / c["slide_duration_s"]
        press = c["press_force_N"] * quintic(t / c["press_ramp_s"])[0]
        velocity = jac @ u
        tangential = c["stiffness_N_m"] * (self.tip_x0 + offset - tip[0]) + c["damping_N_s_m"] * (rate - velocity[0])
        force = np.array([tangential, -press - c["normal_damping_N_s_m"] * velocity[1]])
        arm = jac[:, 3:]
        w = np.sqrt(max(np.linalg.det(arm @ arm.T), 0.0))
        k = c["singular_damping_m2"] * max(1.0 - w / c["singular_manipulability_m2"], 0.0) ** 2
        null = np.eye(3) - arm.T @ np.linalg.solve(arm @ arm.T + k * np.eye(2), arm)
        posture = -c["posture_stiffness_N_m_rad"] * (q[3:] - self.q0[3:]) - c["posture_damping_N_m_s_rad"] * u[3:]
        base = -np.asarray(c["base_stiffness"]) * (q[:3] - self.q0[:3]) - np.asarray(c["base_damping"]) * u[:3]
        return np.concatenate([base, arm.T @ force + null @ posture]), w


def contact_impulses(delassus, v_free, gap, dt, mu) -> tuple[np.ndarray, int]:
    """``(p_N, p_T)`` and the mode of the first consistent contact mode (module text)."""
    tol = 1e-12 * (1.0 + np.abs(v_free).max() + abs(gap) / dt)
    target = -gap / dt - v_free[0]
    if v_free[0] + gap / dt >= -tol:
        return np.zeros(2), SEPARATED
    stick = np.linalg.solve(delassus, np.array([target, -v_free[1]]))
    if stick[0] >= 0.0 and abs(stick[1]) <= mu * stick[0] * (1.0 + 1e-12):
        return stick, STICK
    for sign, mode in ((1.0, SLIP_POSITIVE), (-1.0, SLIP_NEGATIVE)):
        direction = np.array([1.0, -sign * mu])
        p_n = target / (delassus[0] @ direction)
        p = p_n * direction
        if p_n >= 0.0 and sign * (v_free[1] + delassus[1] @ p) >= -tol:
            return p, mode
    raise RuntimeError("no consistent contact mode")


def simulate(cfg: dict) -> dict[str, np.ndarray]:
    """The whole run: states at ``t_k`` (``k = 0..N``); forces ``p / dt``, modes, the closing speed (``-J_N u``
    at the start of a step with ``p_N > 0``, else 0) and the manipulability at the steps."""
    sim, robot = cfg["unilateral"], cfg["robot"]
    model, tip_id = build_model(robot)
    data = model.createData()
    dt, n_steps, mu = sim["dt_s"], int(round(sim["t_final_s"] / sim["dt_s"])), cfg["contact"]["mu"]
    q = np.concatenate([sim["initial_base_m"], np.deg2rad([sim["initial_base_angle_deg"]]),
                        np.deg2rad(sim["initial_joint_angles_deg"])])
    u = np.concatenate([sim["initial_base_velocity_m_s"], np.deg2rad([sim["initial_base_rate_deg_s"]]),
                        np.deg2rad(sim["initial_joint_rates_deg_s"])])
    pin.framesForwardKinematics(model, data, q)
    controller = Controller(cfg["controller"], q.copy(), float(data.oMf[tip_id].translation[0]))
    out = {k: [] for k in ("q", "tip", "normal_force", "tangent_force", "mode", "closing_speed", "manipulability")}
    for k in range(n_steps + 1):
        pin.framesForwardKinematics(model, data, q)
        tip = data.oMf[tip_id].translation[:2].copy()
        out["q"].append(q.copy())
        out["tip"].append(tip)
        if k == n_steps:
            break
        mass = pin.crba(model, data, q)
        mass = np.triu(mass) + np.triu(mass, 1).T
        bias = pin.nonLinearEffects(model, data, q, u)
        point = pin.computeFrameJacobian(model, data, q, tip_id, pin.LOCAL_WORLD_ALIGNED)[:2]  # rows x, y
        inputs, w = controller(k * dt, q, u, tip, point)
        jac = point[[1, 0]]  # rows: normal y, tangent x
        u_free = u + dt * np.linalg.solve(mass, inputs - bias)
        m_inv_jt = np.linalg.solve(mass, jac.T)
        p, mode = contact_impulses(jac @ m_inv_jt, jac @ u_free, tip[1], dt, mu)
        approach = jac[0] @ u
        u = u_free + m_inv_jt @ p
        q = q + dt * u
        out["normal_force"].append(p[0] / dt)
        out["tangent_force"].append(p[1] / dt)
        out["mode"].append(mode)
        out["closing_speed"].append(max(-approach, 0.0) if p[0] > 0.0 else 0.0)  # speed an impulse stops
        out["manipulability"].append(w)
    return {key: np.asarray(value) for key, value in out.items()} | {"t": dt * np.arange(n_steps + 1)}


def mode_intervals(t: np.ndarray, mode: np.ndarray, dt: float) -> list[tuple[int, float, float]]:
    """Maximal runs of one mode: ``[(mode, start, end), ...]``."""
    edges = np.flatnonzero(np.diff(mode)) + 1
    starts, ends = np.concatenate([[0], edges]), np.concatenate([edges, [mode.size]])
    return [(int(mode[a]), float(t[a]), float(t[b - 1] + dt)) for a, b in zip(starts, ends)]


def agreement(run: dict, ref: dict, dt: float) -> dict:
    """Largest differences between a run and the reference (both dicts of arrays like :func:`simulate`'s;
    ``run`` may add ``impact_impulse (N, 2)``, (x, y) impulses at the start of the steps). Forces are compared
    away from the steps next to a mode switch of either run (where a force inside the cone is set differently
    by the two schemes), relative to the reference's peak normal force; the contact impulse history
    ``sum_k dt (lambda_T, lambda_N) + impact impulses`` everywhere, relative to its final normal value."""
    mode, ref_mode = np.asarray(run["mode"]), ref["mode"]
    switch = np.zeros(mode.size, bool)
    for m in (mode, ref_mode):
        change = np.flatnonzero(np.diff(m)) + 1
        for offset in (-1, 0, 1):
            switch[np.clip(change + offset, 0, mode.size - 1)] = True
    peak = np.abs(ref["normal_force"]).max()
    kicks = np.asarray(run.get("impact_impulse", np.zeros((mode.size, 2))))
    history = np.cumsum(dt * np.stack([run["tangent_force"], run["normal_force"]], axis=1) + kicks, axis=0)
    ref_history = np.cumsum(dt * np.stack([ref["tangent_force"], ref["normal_force"]], axis=1), axis=0)
    ours, theirs = mode_intervals(ref["t"][:-1], mode, dt), mode_intervals(ref["t"][:-1], ref_mode, dt)
    same_sequence = [m for m, _, _ in ours] == [m for m, _, _ in theirs]
    return {
        "mode_sequence_equal": same_sequence,
        "mode_steps_different": int(np.sum(mode != ref_mode)),
        "interval_boundary_shift_s": max(abs(a[1] - b[1]) for a, b in zip(ours, theirs)) if same_sequence else None,
        "normal_force_rel": float(np.abs(run["normal_force"] - ref["normal_force"])[~switch].max() / peak),
        "tangent_force_rel": float(np.abs(run["tangent_force"] - ref["tangent_force"])[~switch].max() / peak),
        "impulse_history_rel": float(np.abs(history - ref_history).max() / abs(ref_history[-1, 1])),
        "tip_path_m": float(np.abs(np.asarray(run["tip"]) - ref["tip"]).max()),
    }
