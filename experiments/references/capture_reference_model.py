r"""Independent reference integration of the capture scenario: Pinocchio arm, NumPy target, SciPy events.

Shares nothing with diffspace but the robot description (the URDF twin of the config's TOML robot, whose
``[attitudes]`` and joint list it also reads) and the resolved config values (a plain dict).

**Arm** (free-flyer root, Pinocchio): ``a = ABA(q, v, tau)`` with ``tau = J^T (F n)``, ``J`` the linear
rows of the rod-tip frame Jacobian in world axes (``LOCAL_WORLD_ALIGNED``), no gravity. Held joints are
locked by ``buildReducedModel`` at their attitude angles (the same motion as ideal holding constraints).
``dq/dt``: base position ``R_B v_B``, base quaternion ``1/2 q (x) [w_B, 0]``, joint rates.

**Target** (rigid body, mass ``m_T``, CoM ``c`` and CoM inertia ``I`` in its own frame, attitude ``R``):
``m_T dv_T/dt = -F n``, ``I dw/dt + w x I w = R^T ((p - x_T) x (-F n))`` with ``w`` in body axes, ``p`` the
rod-tip point (the force line passes through ``p`` and the contact point, both on the radial normal).

**Contact**: rod tip = sphere of radius ``r`` centred at ``p``; grapple shaft = cylinder of radius ``r_s``
whose axis runs from ``a`` along ``u`` (target frame). With ``s = R^T (p - x_T) + c``, ``w = s - a``,
``rho = |w - (w.u) u|``: indentation ``delta = r - (rho - r_s)``, outward normal ``n = R (w - (w.u)u)/rho``,
rate ``delta_dot = -n . (p_dot - v_T - (R w) x (p - x_T))``. Force (Cai et al. 2021, Aerospace 8:381,
eq. 1): ``F = k delta^n + lambda delta^n delta_dot`` with ``lambda = chi k / v0`` (``v0`` = ``delta_dot``
at first touch; eq. 2 gives ``chi`` for Zhiying-Qishao, :data:`CHI` the other laws), ``F = max(F, 0)``.

**Phases**: free flight until ``delta`` rises through 0 (touch), contact until ``delta`` falls through 0 or
the force factor ``1 + chi delta_dot / v0`` falls through 0 (separation), then free flight again (a new
touch starts another contact) until ``t_final``. Each phase is one ``solve_ivp`` (DOP853) ended by
terminal events; the impulse is the quadrature of ``F`` carried in the state; the peak force is the
maximum of ``F`` on the dense output (bounded Brent around the largest step value).

**Placement** (the scenario's definition): the aim point's surface normal ``n0`` is turned onto the
reverse of the rod axis (``orientation = "rod_axis"``) or of the arm-CoM-to-tip line by the smallest
rotation (antiparallel: a half turn about the unit ``n0 x e_x``, or ``n0 x e_y`` when ``|n0_x| >= 0.9``);
the sphere starts ``initial_gap`` off the surface along ``n0``; the relative approach velocity is
``v R d``, ``d = normalise(-n0 + tan(a1) t1 + tan(a2) t2)``, ``t1 = u``, ``t2 = n0 x t1``.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pinocchio as pin
from scipy.integrate import solve_ivp
from scipy.optimize import minimize_scalar

CHI = {  # chi = lambda v0 / k as a function of the input restitution c
    "hertz": lambda c: 0.0,
    "hunt_crossley": lambda c: 1.5 * (1.0 - c),  # Hunt & Crossley 1975
    "lankarani_nikravesh": lambda c: 0.75 * (1.0 - c * c),  # Lankarani & Nikravesh 1990
    "flores": lambda c: 1.6 * (1.0 - c) / c,  # Flores et al. 2011
    "gonthier": lambda c: (1.0 - c * c) / c,  # Gonthier et al. 2004
    "zhiying_qishao": lambda c: 0.75 * (1.0 - c * c) * np.exp(2.0 * (1.0 - c)),  # Cai et al. eq. 2
}
LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED


def unit(v) -> np.ndarray:
    v = np.asarray(v, float)
    return v / np.linalg.norm(v)


def rotation(quat) -> np.ndarray:
    """Rotation matrix of a quaternion ``[x, y, z, w]`` (normalised first)."""
    x, y, z, w = unit(quat)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def quat_rate(quat, omega_body) -> np.ndarray:
    """``1/2 q (x) [w, 0]`` for ``q = [x, y, z, w]``."""
    vec, w = quat[:3], quat[3]
    return 0.5 * np.concatenate([w * omega_body + np.cross(vec, omega_body), [-vec @ omega_body]])


def smallest_rotation(a, b) -> np.ndarray:
    """Rotation by the smallest angle taking unit ``a`` onto unit ``b`` (axis-angle, Rodrigues)."""
    axis = np.cross(a, b)
    s, c = np.linalg.norm(axis), float(a @ b)
    if s < 1e-12 and c > 0:
        return np.eye(3)
    if s < 1e-12:
        axis = unit(np.cross(a, [1.0, 0, 0] if abs(a[0]) < 0.9 else [0, 1.0, 0]))
    else:
        axis = axis / s
    k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    angle = np.arctan2(s, c)
    return np.eye(3) + np.sin(angle) * k + (1 - np.cos(angle)) * k @ k


@dataclass
class ReferenceResult:
    """Contact bookkeeping (SI) and the state at the first separation (world axes, rad/s)."""

    contacts: int
    contact_start_time: float
    closing_speed: float
    peak_force: float
    impulse: float
    duration: float
    release_time: float
    separation_speed: float
    target_velocity: np.ndarray
    target_angular_velocity: np.ndarray
    tip_velocity: np.ndarray
    base_velocity: np.ndarray
    base_angular_velocity: np.ndarray
    axial_range: tuple[float, float]  # contact point's axial coordinate on the shaft at touch / separation
    evaluations: int


class CaptureReference:
    """The capture system of a resolved config ``cfg`` (dict of plain values, as the config file gives)."""

    def __init__(self, cfg: dict):
        arm, t, cap, con, sim = cfg["arm"], cfg["target"], cfg["capture"], cfg["contact"], cfg["simulation"]
        if arm["base"] != "free" or t["surface"] != "shaft" or con["stiffness_source"] != "value":
            raise ValueError("the reference covers a free base, a grapple shaft and a given stiffness")
        self._build_arm(Path(cfg["robot"]["path"]), arm)
        self.tip_radius = float(arm["tip_radius_m"])
        self.mass, self.com = float(t["mass_kg"]), np.asarray(t["com_m"], float)
        ixx, iyy, izz, ixy, iyz, izx = t["inertia_kg_m2"]
        s = 1.0 if t["product_convention"] == "tensor" else -1.0
        self.inertia = np.array([[ixx, s * ixy, s * izx], [s * ixy, iyy, s * iyz], [s * izx, s * iyz, izz]])
        self.axis_point, self.axis = np.asarray(t["surface_point_m"], float), unit(t["surface_direction"])
        self.shaft_radius, self.extent = float(t["shaft_radius_m"]), float(t["extent_m"])
        self.k, self.n = float(con["stiffness_N_m_n"]), float(con["exponent"])
        self.chi = float(CHI[con["law"]](float(con["restitution_c"])))
        self.t_final, self.gap0 = float(sim["t_final_s"]), float(cap["initial_gap_m"])
        self._place_target(t, cap)

    # ------------------------------------------------------------------ setup
    def _build_arm(self, robot_path: Path, arm: dict):
        description = tomllib.loads(robot_path.read_text())
        names = [j["name"] for j in description["joints"] if j["type"] != "fixed"]
        attitude = arm["attitude"]
        degrees = description["attitudes"][attitude] if isinstance(attitude, str) else attitude
        spec = arm["joints"]
        free = [spec == "free" or (isinstance(spec, list) and i + 1 in spec) for i in range(len(names))]
        full = pin.buildModelFromUrdf(str(robot_path.with_suffix(".urdf")), pin.JointModelFreeFlyer())
        q_full = pin.neutral(full)
        for name, angle in zip(names, np.deg2rad(degrees)):
            q_full[full.joints[full.getJointId(name)].idx_q] = angle
        locked = [full.getJointId(name) for name, f in zip(names, free) if not f]
        self.model = pin.buildReducedModel(full, locked, q_full) if locked else full
        self.model.gravity = pin.Motion.Zero()
        self.data = self.model.createData()
        self.tip = self.model.getFrameId(arm["tip_frame"])
        self.q0 = pin.neutral(self.model)
        for name, angle in zip(names, np.deg2rad(degrees)):
            if self.model.existJointName(name):
                self.q0[self.model.joints[self.model.getJointId(name)].idx_q] = angle
        self.nq, self.nv = self.model.nq, self.model.nv

    def _place_target(self, t: dict, cap: dict):
        pin.forwardKinematics(self.model, self.data, self.q0)
        tip = pin.updateFramePlacement(self.model, self.data, self.tip)
        tip_rot, tip_pos = tip.rotation.copy(), tip.translation.copy()
        central = t["aim_point_m"] == "central"
        w = (self.com if central else np.asarray(t["aim_point_m"], float)) - self.axis_point
        radial = unit(w - (w @ self.axis) * self.axis)
        n0 = -radial if central else radial
        point = self.axis_point + (w @ self.axis) * self.axis + self.shaft_radius * n0
        self.basis = np.stack([n0, self.axis, np.cross(n0, self.axis)], axis=1)
        orientation = t["orientation"]
        if isinstance(orientation, list):
            self.rot0 = rotation(orientation)
        else:
            arm_com = pin.centerOfMass(self.model, self.data, self.q0)
            toward = tip_rot[:, 2] if orientation == "rod_axis" else unit(tip_pos - arm_com)
            self.rot0 = smallest_rotation(n0, -toward)
        standoff = point + (self.tip_radius + self.gap0) * n0
        self.x0 = tip_pos - self.rot0 @ standoff + self.rot0 @ self.com
        a1, a2 = np.deg2rad(cap["approach_angles_deg"])
        d = unit(-n0 + np.tan(a1) * self.basis[:, 1] + np.tan(a2) * self.basis[:, 2])
        v_rel = cap["approach_speed_m_s"] * (self.rot0 @ d)
        self.v_arm0 = v_rel if cap["moving"] == "arm" else np.zeros(3)
        self.v_target0 = -v_rel if cap["moving"] == "target" else np.zeros(3)

    def initial_state(self) -> np.ndarray:
        v = np.zeros(self.nv)
        v[:3] = self.v_arm0  # base frame = world at t = 0
        quat0 = pin.SE3ToXYZQUAT(pin.SE3(self.rot0, np.zeros(3)))[3:]
        return np.concatenate([self.q0, v, self.x0, quat0, self.v_target0, np.zeros(3), [0.0]])

    # ------------------------------------------------------------------ dynamics
    def _split(self, y):
        nq, nv = self.nq, self.nv
        q = y[:nq].copy()
        q[3:7] = unit(q[3:7])
        o = nq + nv
        return q, y[nq:o], y[o:o + 3], unit(y[o + 3:o + 7]), y[o + 7:o + 10], y[o + 10:o + 13]

    def contact_state(self, y):
        """``(delta, delta_dot, n (world), tip, tip velocity, axial coordinate)`` at state ``y``."""
        q, v, x, quat, vel, omega = self._split(y)
        pin.forwardKinematics(self.model, self.data, q, v)
        tip = pin.updateFramePlacement(self.model, self.data, self.tip).translation.copy()
        tip_vel = pin.getFrameVelocity(self.model, self.data, self.tip, LWA).linear.copy()
        rot = rotation(quat)
        w = rot.T @ (tip - x) + self.com - self.axis_point
        axial = w @ self.axis
        radial = w - axial * self.axis
        rho = np.linalg.norm(radial)
        normal = rot @ (radial / rho)
        rate = -normal @ (tip_vel - vel - np.cross(rot @ omega, tip - x))
        return self.tip_radius - (rho - self.shaft_radius), rate, normal, tip, tip_vel, axial

    def force(self, delta, rate, v0) -> float:
        """Cai et al. eq. (1) with ``lambda = chi k / v0``, never adhesive."""
        if delta <= 0.0:
            return 0.0
        return max(self.k * delta**self.n * (1.0 + self.chi * rate / v0), 0.0)

    def derivative(self, y, v0=None):
        """``dy/dt`` for ``y = [q, v, x_T, quat_T, v_T, w_T (body), impulse]``; ``v0 = None``: free flight."""
        q, v, x, quat, vel, omega = self._split(y)
        tau, push = np.zeros(self.nv), np.zeros(3)
        delta, rate, normal, tip, _, _ = self.contact_state(y)
        f = 0.0 if v0 is None else self.force(delta, rate, v0)
        if f > 0.0:
            push = f * normal  # on the rod tip; the target gets -push on the same line
            jac = pin.computeFrameJacobian(self.model, self.data, q, self.tip, LWA)[:3]
            tau = jac.T @ push
        accel = pin.aba(self.model, self.data, q, v, tau)
        rot_b = rotation(q[3:7])
        q_dot = np.concatenate([rot_b @ v[:3], quat_rate(q[3:7], v[3:6]), v[6:]])
        torque = rotation(quat).T @ np.cross(tip - x, -push)
        omega_dot = np.linalg.solve(self.inertia, torque - np.cross(omega, self.inertia @ omega))
        return np.concatenate([q_dot, accel, vel, quat_rate(quat, omega), -push / self.mass, omega_dot, [f]])

    # ------------------------------------------------------------------ hybrid integration
    def _event(self, fn, direction):
        def event(t, y):
            return fn(y)
        event.terminal, event.direction = True, direction
        return event

    def _phase(self, t0, y0, v0, rtol, atol):
        def gap(y):
            return self.contact_state(y)[0]

        if v0 is None:
            events = [self._event(gap, 1.0)]
            max_step = 0.25 * self.gap0 / np.linalg.norm(self.v_arm0 - self.v_target0)
        else:
            events = [self._event(gap, -1.0), self._event(lambda y: 1.0 + self.chi * self.contact_state(y)[1] / v0, -1.0)]
            max_step = np.inf
        sol = solve_ivp(lambda t, y: self.derivative(y, v0), (t0, self.t_final), y0, method="DOP853", rtol=rtol,
                        atol=atol, events=events, dense_output=v0 is not None, max_step=max_step)
        if sol.status < 0:
            raise RuntimeError(f"solve_ivp failed at t = {sol.t[-1]:.6g} s: {sol.message}")
        hits = [(te[0], ye[0]) for te, ye in zip(sol.t_events, sol.y_events) if len(te)]
        return sol, (min(hits, key=lambda h: h[0]) if hits else None)

    def _peak(self, sol, v0) -> float:
        def force_at(t):
            delta, rate, *_ = self.contact_state(sol.sol(t))
            return self.force(delta, rate, v0)

        values = [force_at(t) for t in sol.t]
        i = int(np.argmax(values))
        lo, hi = sol.t[max(i - 1, 0)], sol.t[min(i + 1, len(sol.t) - 1)]
        best = minimize_scalar(lambda t: -force_at(t), bounds=(lo, hi), method="bounded",
                               options={"xatol": 1e-15 * max(hi, 1.0)})
        return max(-best.fun, values[i])

    def simulate(self, rtol=1e-12, atol=1e-14) -> ReferenceResult:
        """All phases up to ``t_final``; raises if a contact does not separate by then."""
        t, y, contacts, evaluations, first = 0.0, self.initial_state(), [], 0, None
        while True:
            sol, touch = self._phase(t, y, None, rtol, atol)
            evaluations += sol.nfev
            if touch is None:
                y = sol.y[:, -1]
                break
            t, y = touch
            _, v0, _, _, _, axial_in = self.contact_state(y)
            sol, separation = self._phase(t, y, v0, rtol, atol)
            evaluations += sol.nfev
            if separation is None:
                raise RuntimeError(f"the contact that started at t = {t:.6g} s has not separated by t_final")
            t_touch, (t, y) = t, separation
            contacts.append((t_touch, t, v0, self._peak(sol, v0), axial_in, self.contact_state(y)[5]))
            first = y if first is None else first
        if not contacts:
            raise RuntimeError("the rod tip never touches the target before t_final")
        return self._result(contacts, first, y, evaluations)

    def _result(self, contacts, y_sep, y_end, evaluations) -> ReferenceResult:
        q, v, _, quat, vel, omega = self._split(y_sep)
        _, rate, _, _, tip_vel, _ = self.contact_state(y_sep)
        rot_b = rotation(q[3:7])
        axial = [a for c in contacts for a in c[4:]]
        return ReferenceResult(
            contacts=len(contacts), contact_start_time=contacts[0][0], closing_speed=contacts[0][2],
            peak_force=max(c[3] for c in contacts), impulse=float(y_end[-1]),
            duration=sum(c[1] - c[0] for c in contacts), release_time=contacts[0][1], separation_speed=-rate,
            target_velocity=vel.copy(), target_angular_velocity=rotation(quat) @ omega, tip_velocity=tip_vel,
            base_velocity=rot_b @ v[:3], base_angular_velocity=rot_b @ v[3:6],
            axial_range=(min(axial), max(axial)), evaluations=evaluations)
