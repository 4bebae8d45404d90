r"""Independent model of the snare closing (plain NumPy/SciPy; no diffspace code): planar lumped-mass wire
ropes between a fixed and a rotating ring close on a free grapple shaft (Cai et al. 2021, Aerospace 8:381,
Section 3, Fig. 1, capture step 2). Written from the equations, read from the same TOML as the scenario.

**Rings.** Radius ``R``, ``gamma_0 = asin(d_se(0) / 2R)``. Rope ``k`` (of ``n``) runs from the fixed-ring
point at angle ``-pi/2 - gamma_0 + 2 pi k / n`` to the rotating-ring point at ``-pi/2 + gamma_0 + psi(t) +
2 pi k / n``; ``psi(t) = psi_0 + (psi_1 - psi_0) s(tau)``, ``s = 10 tau^3 - 15 tau^4 + 6 tau^5``, ``tau =
clip((t - t_0) / T, 0, 1)`` (quintic rest-to-rest move). The end nodes move with their rings.

**Ropes** (paper Eqs. (17), (24), (26), (37)-(39)), ``N`` sections of rest length ``l = L / N``, node mass
``m = rho l`` (the prescribed end nodes' masses belong to the rings). The motion is planar (ring plane;
the loads are in it, and for a planar rope the out-of-plane derivatives of the bend angles vanish), so
with section vectors ``d_i = x_{i+1} - x_i``, headings ``phi_i = atan2(d_i)`` and signed node bends
``beta_j = wrap(phi_j - phi_{j-1})``:

.. math:: T_i = k_{tes}(|d_i| - l) + c_{tes}\,\tfrac{d}{dt}|d_i|,\qquad
          M_j = k_{tor}(\beta_j - \beta_0) + c_{tor}\,\dot\beta_j,\qquad
          F_i = T_i\,\hat d_i + (M_i - M_{i+1})\,\frac{(-d_{i,y}, d_{i,x})}{|d_i|^2}

(``M_0 = M_N = 0``: pinned ends), node forces ``f_{i+1} -= F_i``, ``f_i += F_i``; ``k_tes = EA / l``,
``k_tor = EI / l``, ``c_tes = 2 zeta_a sqrt(k_tes m)``, ``c_tor = 2 zeta_b sqrt(k_tor m l^2)``, rest bend
``beta_0 = +beta_tot / (N - 1)`` (outward, counter-clockwise). Axial springs act alike in tension and
compression (the configs' ``compression_ratio = 1``; other values are refused).

**Contact** (frictionless, paper Eqs. (1)-(2) with a fixed reference speed ``v_0``): ``P`` equally spaced
points on every section (its first node included) and the last node, ``x_p = (1 - s) x_i + s x_{i+1}``;
``delta = r_s + r_r - |x_p - p|``, ``delta_dot = -n . (v_p - w)`` with ``n`` the unit vector from the shaft
axis to the point, ``F = max(0, k delta^e (1 + chi delta_dot / v_0))`` for ``delta > 0``, ``chi = 3 (1 - c^2)
exp(2 (1 - c)) / 4``; the point force ``F n`` goes to the two nodes with weights ``1 - s``, ``s``, the shaft
feels minus the sum: ``m_s p'' = -sum F n``.

**Outputs.** Ring torque ``tau = -sum_k e_z . (B_k x f_{B,k})`` with ``f_B`` the rope's internal plus contact
force on the rotating-ring node; drive work ``W' = -sum_k f_{B,k} . v_{B,k}``; contact impulse on the
shaft. Initial shapes: static equilibrium at ``psi(0)`` (experiments/references/rope_reference.py's chain, Newton from the
outward arc). Closing angle: the ring angle at which rope 0's static shape leaves a circle of the shaft's
radius about the axis (axis-to-polyline distance minus the rope radius). Integration: SciPy ``solve_ivp``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from .rope_reference import Chain, RopeStatics, wrap
from scipy.integrate import solve_ivp
from scipy.optimize import brentq
from .unilateral_reference import read_config

FAST_CASE = {"rope.n_sections": 8, "rope.axial_rigidity_N": 5000.0, "drive.start_angle_deg": 40.0,
             "drive.final_angle_deg": 58.0, "drive.duration_s": 0.2, "closing.end_time_s": 0.2,
             "shaft.initial_position_m": [0.0, -0.03], "shaft.initial_velocity_m_s": [0.0, 0.0],
             "simulation.scheme": "tsit5", "simulation.rtol": 1e-10, "simulation.atol": 1e-13, "simulation.n_save": 201}
"""Overrides of configs/snare_closing.toml for a fast case: 8 soft sections, ring 40 -> 58 deg in 0.2 s onto a
shaft at rest 30 mm off the axis towards rope 0 (the ropes strike it at 57.7 N), diffspace's adaptive solve at
rtol 1e-10."""


@dataclass(frozen=True)
class ClosingCase:
    """The closing's numbers (SI, angles in rad) from a snare-closing TOML."""

    ring_radius: float
    open_end_distance: float
    n_ropes: int
    end_time: float
    drive: tuple[float, float, float, float]  # psi_0, psi_1, duration, start time
    length: float
    rope_radius: float
    linear_density: float
    n_sections: int
    axial_rigidity: float
    bending_rigidity: float
    rest_bend_total: float  # signed: + = counter-clockwise = outward
    damping_ratios: tuple[float, float]  # axial, bending
    shaft_radius: float
    shaft_mass: float
    shaft_position: tuple[float, float]
    shaft_velocity: tuple[float, float]
    contact: tuple[float, float, float, float]  # k, exponent, c, v_0
    points_per_section: int

    @classmethod
    def from_config(cls, path: Path, overrides: dict) -> ClosingCase:
        cfg = read_config(Path(path), overrides)
        c, d, r, s, k = cfg["closing"], cfg["drive"], cfg["rope"], cfg["shaft"], cfg["contact"]
        if d["kind"] != "rest_to_rest" or k["law"] != "zhiying_qishao" or r["compression_ratio"] != 1.0:
            raise ValueError("the reference covers rest_to_rest drives, the zhiying_qishao law, compression_ratio 1")
        return cls(c["ring_radius_m"], c["open_end_distance_m"], c["n_ropes"], c["end_time_s"],
                   (np.deg2rad(d["start_angle_deg"]), np.deg2rad(d["final_angle_deg"]), d["duration_s"],
                    d["start_time_s"]), r["length_m"], 0.5 * r["diameter_m"], r["linear_density_kg_m"],
                   r["n_sections"], r["axial_rigidity_N"], r["bending_rigidity_N_m2"],
                   np.deg2rad(r["rest_bend_total_deg"]), (r["axial_damping_ratio"], r["bending_damping_ratio"]),
                   s["radius_m"], s["mass_kg"], tuple(s["initial_position_m"]), tuple(s["initial_velocity_m_s"]),
                   (k["stiffness_N_m_n"], k["exponent"], k["restitution_c"], k["reference_speed_m_s"]),
                   k["points_per_section"])

    # ------------------------------------------------------------------ drive and rings
    def ring_angle(self, t) -> tuple[float, float]:
        """``(psi, psi')`` of the quintic rest-to-rest drive."""
        start, end, duration, t0 = self.drive
        tau = min(max((t - t0) / duration, 0.0), 1.0)
        shape = tau**3 * (10.0 - 15.0 * tau + 6.0 * tau**2)
        return start + (end - start) * shape, (end - start) * 30.0 * tau**2 * (1.0 - tau) ** 2 / duration

    @property
    def gamma0(self) -> float:
        return np.arcsin(self.open_end_distance / (2.0 * self.ring_radius))

    @property
    def turns(self) -> np.ndarray:
        return 2.0 * np.pi * np.arange(self.n_ropes) / self.n_ropes

    def ends(self, t) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Fixed-ring ends ``A (R, 2)``, rotating-ring ends ``B`` and their velocities ``B'``."""
        psi, rate = self.ring_angle(t)
        a = -0.5 * np.pi - self.gamma0 + self.turns
        b = -0.5 * np.pi + self.gamma0 + psi + self.turns
        radius, cos_b, sin_b = self.ring_radius, np.cos(b), np.sin(b)
        on_ring = np.empty((2, self.n_ropes, 2))
        on_ring[0, :, 0], on_ring[0, :, 1] = np.cos(a), np.sin(a)
        on_ring[1, :, 0], on_ring[1, :, 1] = cos_b, sin_b
        on_ring *= radius
        return on_ring[0], on_ring[1], radius * rate * np.stack([-sin_b, cos_b], axis=-1)

    # ------------------------------------------------------------------ rope constants
    @property
    def section(self) -> float:
        return self.length / self.n_sections

    @property
    def node_mass(self) -> float:
        return self.linear_density * self.section

    def rope_constants(self) -> tuple[float, float, float, float, float]:
        """``k_tes, c_tes, k_tor, c_tor, beta_0``."""
        k_tes, k_tor = self.axial_rigidity / self.section, self.bending_rigidity / self.section
        zeta_a, zeta_b = self.damping_ratios
        return (k_tes, 2.0 * zeta_a * np.sqrt(k_tes * self.node_mass), k_tor,
                2.0 * zeta_b * np.sqrt(k_tor * self.node_mass * self.section**2),
                self.rest_bend_total / (self.n_sections - 1))


# ---------------------------------------------------------------------------------------------- forces
def rope_forces(case: ClosingCase, x: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Axial and bending spring-dashpot forces on every node ``(R, N+1, 2)`` (module notes)."""
    k_tes, c_tes, k_tor, c_tor, beta0 = case.rope_constants()
    d, dv = x[:, 1:] - x[:, :-1], v[:, 1:] - v[:, :-1]
    dx, dy, dvx, dvy = d[..., 0], d[..., 1], dv[..., 0], dv[..., 1]
    length2 = dx * dx + dy * dy
    length = np.sqrt(length2)
    tension = (k_tes * (length - case.section) + c_tes * (dx * dvx + dy * dvy) / length) / length  # T_i / |d_i|
    heading = np.arctan2(dy, dx)
    heading_rate = (dx * dvy - dy * dvx) / length2
    moment = np.zeros((x.shape[0], x.shape[1]))  # M_0 = M_N = 0: pinned ends
    moment[:, 1:-1] = (k_tor * (wrap(heading[:, 1:] - heading[:, :-1]) - beta0)
                       + c_tor * (heading_rate[:, 1:] - heading_rate[:, :-1]))
    turning = (moment[:, :-1] - moment[:, 1:]) / length2
    section_force = np.stack([tension * dx - turning * dy, tension * dy + turning * dx], axis=-1)
    f = np.zeros_like(x)
    f[:, 1:] -= section_force
    f[:, :-1] += section_force
    return f


def contact_weights(n_sections: int, per_section: int) -> np.ndarray:
    """Interpolation ``(P N + 1, N + 1)`` from the nodes to the contact points: rows ``(1 - s, s)`` on every
    section for ``s = 0, 1/P, .., (P-1)/P``, then the last node."""
    weights = np.zeros((n_sections * per_section + 1, n_sections + 1))
    s = np.arange(per_section) / per_section
    for i in range(n_sections):
        rows = slice(i * per_section, (i + 1) * per_section)
        weights[rows, i], weights[rows, i + 1] = 1.0 - s, s
    weights[-1, -1] = 1.0
    return weights


def contact_forces(case: ClosingCase, weights, x, v, p, w) -> tuple[np.ndarray, np.ndarray]:
    """Shaft contact forces on the nodes ``(R, N+1, 2)`` and the point force magnitudes ``(R, P N + 1)``
    (``weights``: :func:`contact_weights`)."""
    radial = weights @ x - p
    dist = np.sqrt(np.sum(radial * radial, axis=-1))
    normal = radial / dist[..., None]
    delta = np.maximum(case.shaft_radius + case.rope_radius - dist, 0.0)
    k, exponent, restitution, v0 = case.contact
    chi = 0.75 * (1.0 - restitution**2) * np.exp(2.0 * (1.0 - restitution))
    delta_dot = -np.sum(normal * (weights @ v - w), axis=-1)
    magnitude = np.maximum(k * delta**exponent * (1.0 + chi * delta_dot / v0), 0.0)
    return weights.T @ (magnitude[..., None] * normal), magnitude


# ---------------------------------------------------------------------------------------------- dynamics
class ClosingReference:
    """The closing ODE: state ``[x_free, v_free, p, w, impulse, drive work]`` (flattened)."""

    def __init__(self, case: ClosingCase):
        self.case = case
        self.inner = (case.n_ropes, case.n_sections - 1, 2)
        self.size = int(np.prod(self.inner))
        self.weights = contact_weights(case.n_sections, case.points_per_section)

    def split(self, y):
        n = self.size
        return (y[:n].reshape(self.inner), y[n:2 * n].reshape(self.inner), y[2 * n:2 * n + 2],
                y[2 * n + 2:2 * n + 4])

    def nodes(self, t, x_free, v_free):
        a, b, vb = self.case.ends(t)
        x = np.concatenate([a[:, None], x_free, b[:, None]], axis=1)
        v = np.concatenate([np.zeros_like(a)[:, None], v_free, vb[:, None]], axis=1)
        return x, v, b, vb

    def forces(self, t, y):
        """Node positions, velocities, total and contact forces, point magnitudes and the ring ends."""
        x_free, v_free, p, w = self.split(y)
        x, v, b, vb = self.nodes(t, x_free, v_free)
        f_c, magnitude = contact_forces(self.case, self.weights, x, v, p, w)
        return x, v, rope_forces(self.case, x, v) + f_c, f_c, magnitude, b, vb

    def rhs(self, t, y):
        _, v, f, f_c, _, _, vb = self.forces(t, y)
        shaft = -np.sum(f_c, axis=(0, 1))
        return np.concatenate([v[:, 1:-1].ravel(), (f[:, 1:-1] / self.case.node_mass).ravel(), self.split(y)[3],
                               shaft / self.case.shaft_mass, shaft, [-np.sum(f[:, -1] * vb)]])

    def initial_state(self) -> np.ndarray:
        x = static_shapes(self.case, 0.0)
        z = np.zeros(self.size)
        return np.concatenate([x[:, 1:-1].ravel(), z, self.case.shaft_position, self.case.shaft_velocity, np.zeros(3)])

    def simulate(self, ts, rtol=1e-9, atol=1e-13, method="RK45") -> dict:
        """Solve over ``[0, ts[-1]]`` and sample at ``ts``: shaft ``p``, ``w``, per-rope contact force norms,
        ring torque, impulse, drive work, the initial nodes and the solver's function evaluations."""
        sol = solve_ivp(self.rhs, (0.0, ts[-1]), self.initial_state(), method=method, t_eval=ts, rtol=rtol,
                        atol=atol)
        if not sol.success:
            raise RuntimeError(f"solve_ivp failed: {sol.message}")
        samples = [self.sample(t, y) for t, y in zip(sol.t, sol.y.T)]
        out = {key: np.array([s[key] for s in samples]) for key in samples[0]}
        n = 2 * self.size
        return {**out, "ts": sol.t, "p": sol.y[n:n + 2].T, "w": sol.y[n + 2:n + 4].T, "impulse": sol.y[n + 4:n + 6].T,
                "work_drive": sol.y[n + 6], "nfev": sol.nfev}

    def sample(self, t, y) -> dict:
        x, _, f, f_c, magnitude, b, _ = self.forces(t, y)
        torque = -np.sum(b[:, 0] * f[:, -1, 1] - b[:, 1] * f[:, -1, 0])
        return {"rope_force": np.linalg.norm(np.sum(f_c, axis=1), axis=-1), "ring_torque": torque,
                "point_force": magnitude, "nodes": x}


# ---------------------------------------------------------------------------------------------- statics
def rope_chain(case: ClosingCase, psi: float) -> Chain:
    """Rope 0 at ring angle ``psi`` in its symmetric frame (chord on ``y < 0`` along ``x``)."""
    distance = 2.0 * case.ring_radius * np.sin(case.gamma0 + 0.5 * psi)
    statics = RopeStatics(case.length, case.bending_rigidity, case.axial_rigidity, case.rest_bend_total,
                          case.ring_radius, distance)
    return Chain(statics, case.n_sections)


def rope_zero_shape(case: ClosingCase, psi: float, guess=None) -> np.ndarray:
    """Rope 0's static nodes at ``psi`` in its symmetric frame, Newton from the interior nodes ``guess`` or the
    outward arc (the chain's inward arc mirrored in the chord)."""
    chain = rope_chain(case, psi)
    if guess is None:
        chord_y = chain.rope.ends()[0][1]
        guess = chain.arc_guess() * np.array([1.0, -1.0]) + np.array([0.0, 2.0 * chord_y])
    return chain.equilibrium(guess)


def turn(points: np.ndarray, angle) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return points @ np.array([[c, s], [-s, c]])


def static_shapes(case: ClosingCase, t: float) -> np.ndarray:
    """Every rope's static nodes ``(R, N+1, 2)`` at ``psi(t)``: rope 0 turned from its symmetric frame by
    ``psi / 2``, the others by a further ``2 pi k / n``."""
    psi, _ = case.ring_angle(t)
    x = rope_zero_shape(case, psi)
    return np.stack([turn(x, 0.5 * psi + phi) for phi in case.turns])


def axis_distance(x: np.ndarray) -> float:
    """Distance from the origin to the polyline through ``x (N+1, 2)``."""
    a, d = x[:-1], np.diff(x, axis=0)
    u = np.clip(-np.sum(a * d, axis=1) / np.sum(d * d, axis=1), 0.0, 1.0)
    return float(np.min(np.linalg.norm(a + u[:, None] * d, axis=1)))


def closing_angle(case: ClosingCase, n_grid: int = 61) -> float:
    """Ring angle [rad] at which the static capture zone (axis distance minus rope radius) shrinks to the
    shaft radius: continuation over a grid from ``psi_0`` to ``psi_1``, then Brent's method; NaN if it stays
    wider."""
    start, end = case.drive[:2]
    guess, shapes = None, []
    for psi in np.linspace(start, end, n_grid):
        x = rope_zero_shape(case, psi, guess)
        guess = x[1:-1]
        shapes.append((psi, guess, axis_distance(x) - case.rope_radius - case.shaft_radius))
    closed = [k for k, (_, _, gap) in enumerate(shapes) if gap <= 0.0]
    if not closed:
        return float("nan")
    lo_psi, lo_shape, _ = shapes[closed[0] - 1]

    def gap(psi):
        return axis_distance(rope_zero_shape(case, psi, lo_shape)) - case.rope_radius - case.shaft_radius

    return brentq(gap, lo_psi, shapes[closed[0]][0], xtol=1e-14, rtol=1e-14)


def time_of_angle(case: ClosingCase, psi: float) -> float:
    """Time [s] at which the drive reaches ``psi`` (monotone move)."""
    _, _, duration, t0 = case.drive
    return brentq(lambda t: case.ring_angle(t)[0] - psi, t0, t0 + duration, xtol=1e-15, rtol=1e-15)


# ---------------------------------------------------------------------------------------------- diffspace side
def diffspace_closing(config: Path, overrides: dict) -> dict:
    """What diffspace computes for the comparison, through its public scenario API (imported here so that the
    model above shares nothing with it): the saved times, shaft path, per-rope contact force norms, ring
    torque, impulse, drive work, initial nodes, the summary's closing angle/time, final offset and headline
    peaks, the solver steps and the status."""
    import equinox as eqx

    from diffspace.scenarios import load_scenario

    scenario = load_scenario(config, [f"{key}={json.dumps(value)}" for key, value in overrides.items()])
    out = eqx.filter_jit(lambda s, params: s.simulate(params))(scenario, scenario.params)
    summary = scenario.summary(out)
    ys, samples = out.ys, out.samples
    return {"ts": np.asarray(out.ts), "p": np.asarray(ys.p)[:, :2], "w": np.asarray(ys.w)[:, :2],
            "rope_force": np.asarray(samples.rope_force_norm), "ring_torque": np.asarray(samples.ring_torque),
            "impulse": np.asarray(ys.impulse)[:, :2], "work_drive": np.asarray(ys.work_drive),
            "initial_nodes": np.asarray(samples.nodes)[0, :, :, :2],
            "max_out_of_plane_m": float(np.abs(np.asarray(samples.nodes)[..., 2]).max()), "summary": summary}


def compare(ours: dict, ref: dict, case: ClosingCase) -> dict:
    """Largest deviations of diffspace's run from the reference on the same saved times, and the reference's
    headline numbers: initial shapes, shaft path and velocity, per-rope contact force norms, the largest of
    them and its time, ring torque, impulse, drive work, the static closing angle and time, the final offset."""
    psi_c = closing_angle(case)
    t_c = time_of_angle(case, psi_c)
    force, force_ref = ours["rope_force"].max(axis=1), ref["rope_force"].max(axis=1)
    summary, ts = ours["summary"], ref["ts"]
    return {
        "initial_shape_m": float(np.abs(ours["initial_nodes"] - ref["nodes"][0]).max()),
        "shaft_path_m": float(np.linalg.norm(ours["p"] - ref["p"], axis=1).max()),
        "shaft_velocity_m_s": float(np.linalg.norm(ours["w"] - ref["w"], axis=1).max()),
        "contact_force_N": float(np.abs(ours["rope_force"] - ref["rope_force"]).max()),
        "peak_contact_force_N": float(force.max() - force_ref.max()),
        "peak_time_s": float(ts[np.argmax(force)] - ts[np.argmax(force_ref)]),
        "ring_torque_N_m": float(np.abs(ours["ring_torque"] - ref["ring_torque"]).max()),
        "impulse_N_s": float(np.linalg.norm(ours["impulse"] - ref["impulse"], axis=1).max()),
        "drive_work_J": float(np.abs(ours["work_drive"] - ref["work_drive"]).max()),
        "closing_angle_rad": float(np.deg2rad(summary["closing_angle_deg"]) - psi_c),
        "closing_time_s": float(summary["closing_time_s"] - t_c),
        "final_offset_m": float(summary["final_offset_m"] - np.linalg.norm(ref["p"][-1])),
        "reference": {"peak_contact_force_N": float(force_ref.max()), "peak_time_s": float(ts[np.argmax(force_ref)]),
                      "peak_ring_torque_N_m": float(np.abs(ref["ring_torque"]).max()),
                      "shaft_travel_m": float(np.linalg.norm(ref["p"] - ref["p"][0], axis=1).max()),
                      "impulse_N_s": float(np.linalg.norm(ref["impulse"][-1])),
                      "drive_work_J": float(ref["work_drive"][-1]), "closing_angle_deg": float(np.rad2deg(psi_c)),
                      "closing_time_s": t_c, "final_offset_m": float(np.linalg.norm(ref["p"][-1])),
                      "function_evaluations": int(ref["nfev"])},
    }
