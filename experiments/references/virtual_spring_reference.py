r"""Independent virtual-spring impact and fit (plain NumPy/SciPy; no diffspace code): the capture arm strikes one
snare rope through the rope's virtual spring (Cai et al. 2021, Aerospace 8:381, Section 3.2, Eqs. (40)-(43)).

**Impact.** Two bodies on the contact normal: the arm's effective mass ``m_1`` at the closing speed ``v``,
the target's ``m_2`` at rest, first touch at ``t = 0``. With the indentation ``delta = x_1 - x_2``

.. math:: m_1 \ddot x_1 = -F,\quad m_2 \ddot x_2 = F,\qquad
          F = \max\big(0,\ \textstyle\sum_{j=1}^{p} a_j \delta^j + c_v \dot\delta\big)\ (\delta > 0),

integrated by ``solve_ivp`` (DOP853) with the impulse ``int F dt`` in the state and events: the release
(``delta`` or the law's force falling through zero, terminal), the maximum indentation (``delta_dot = 0``) and
the force maximum (``dF/dt = k_t(delta) delta_dot + c_v delta_ddot = 0``). The two bodies are integrated
separately, so the masses-in-series reduction is part of what is checked.

**Elastic closed forms** (``c_v = 0``): energy ``P(delta_m) = m v^2 / 2`` with ``P = sum a_j delta^(j+1) /
(j+1)`` and ``m = m_1 m_2 / (m_1 + m_2)`` gives the maximum indentation (Brent), the peak force ``F(delta_m)``
(for a force rising with depth), the impulse ``2 m v``, restitution 1 and the duration
``2 int_0^delta_m d delta / sqrt(v^2 - 2 P / m)``, evaluated with ``delta = delta_m (1 - u^2)`` (which removes
the square-root end singularity) by Gauss-Kronrod quadrature.

**Fit** (Section 3.2, step (1)): static pressing forces ``F_c`` at depths ``delta_k`` (experiments/references/rope_reference.py's
chain), the points up to the first one above ``F_A`` (and at least ``p + 1`` points), least squares
``F_c = sum_j a_j delta^j`` without constant term (columns scaled to unit maximum).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from .rope_reference import Chain, RopeStatics, chain_direction
from scipy.integrate import quad, solve_ivp
from scipy.optimize import brentq
from .unilateral_reference import read_config

SMALL_SNARE = {"strike.mass_source": "value", "strike.node": 3, "rope.n_sections": 6, "rope.axial_rigidity_N": 5e3,
               "virtual_spring.n_depths": 8, "virtual_spring.max_depth_m": 0.02, "virtual_spring.degree": 3}
"""Overrides of configs/snare_capture.toml for fast checks: a 6-section rope, 8 pressing depths to 20 mm, cubic."""


@dataclass(frozen=True)
class VirtualImpact:
    """Polynomial ``coefficients`` ``a_1 .. a_p`` [N/m^j], damping ``c_v`` [N s/m], masses [kg], speed [m/s]."""

    coefficients: np.ndarray
    damping: float
    arm_mass: float
    target_mass: float
    speed: float

    @property
    def mass(self) -> float:
        return self.arm_mass * self.target_mass / (self.arm_mass + self.target_mass)

    def elastic(self, delta) -> float:
        return float(np.polynomial.polynomial.polyval(delta, np.concatenate([[0.0], self.coefficients])))

    def tangent(self, delta) -> float:
        orders = np.arange(1, self.coefficients.size + 1)
        return float(np.polynomial.polynomial.polyval(delta, orders * self.coefficients))

    def potential(self, delta) -> float:
        orders = np.arange(1, self.coefficients.size + 1)
        coefficients = np.concatenate([[0.0, 0.0], self.coefficients / (orders + 1)])
        return float(np.polynomial.polynomial.polyval(delta, coefficients))

    def unclamped(self, y) -> float:
        return self.elastic(y[0] - y[2]) + self.damping * (y[1] - y[3])

    def rhs(self, t, y):
        force = max(self.unclamped(y), 0.0) if y[0] - y[2] > 0.0 else 0.0
        return [y[1], -force / self.arm_mass, y[3], force / self.target_mass, force]

    def simulate(self, rtol=1e-12, atol=1e-16) -> dict:
        """Peak force and its time, impulse, contact duration, maximum indentation, restitution."""
        t_linear = np.pi * np.sqrt(self.mass / self.coefficients[0])

        def release(t, y):
            return min(y[0] - y[2], self.unclamped(y)) if t > 0.0 else 1.0

        def max_indentation(t, y):
            return y[1] - y[3]

        def force_rate(t, y):
            accel = self.rhs(t, y)
            rate = y[1] - y[3]
            return self.tangent(y[0] - y[2]) * rate + self.damping * (accel[1] - accel[3])

        release.terminal, release.direction = True, -1.0
        max_indentation.direction = force_rate.direction = -1.0
        sol = solve_ivp(self.rhs, (0.0, 50.0 * t_linear), [0.0, self.speed, 0.0, 0.0, 0.0], method="DOP853",
                        rtol=rtol, atol=atol, events=[release, max_indentation, force_rate], first_step=1e-6 * t_linear)
        if sol.status != 1:
            raise RuntimeError("the bodies did not separate")
        end = sol.y_events[0][0]
        peaks = [(max(self.unclamped(y), 0.0), t) for y, t in zip(sol.y_events[2], sol.t_events[2])]
        peak, peak_time = max(peaks + [(self.damping * self.speed, 0.0)])
        return {"peak_force_N": peak, "peak_force_time_s": float(peak_time), "impulse_N_s": float(end[4]),
                "contact_duration_s": float(sol.t_events[0][0]),
                "max_indentation_m": float(max(y[0] - y[2] for y in sol.y_events[1])),
                "restitution": float(-(end[1] - end[3]) / self.speed), "nfev": sol.nfev}

    def closed_form(self) -> dict:
        """The elastic impact by energy conservation (``c_v = 0``; module notes)."""
        if self.damping != 0.0:
            raise ValueError("the closed forms hold for c_v = 0")
        energy = 0.5 * self.mass * self.speed**2
        upper = 1e-6
        while self.potential(upper) < energy:
            upper *= 2.0
        delta_m = brentq(lambda d: self.potential(d) - energy, 0.0, upper, xtol=1e-18, rtol=1e-15)

        def integrand(u):  # its limit at u = 0: sqrt(2 delta_m m / F(delta_m))
            if u == 0.0:
                return np.sqrt(2.0 * delta_m * self.mass / self.elastic(delta_m))
            rest = self.speed**2 - 2.0 * self.potential(delta_m * (1.0 - u * u)) / self.mass
            return 2.0 * delta_m * u / np.sqrt(max(rest, 0.0))

        half, _ = quad(integrand, 0.0, 1.0, epsabs=0.0, epsrel=1e-13, limit=200)
        return {"peak_force_N": self.elastic(delta_m), "impulse_N_s": 2.0 * self.mass * self.speed,
                "contact_duration_s": 2.0 * half, "max_indentation_m": delta_m, "restitution": 1.0}


def fit_polynomial(depths, forces, degree: int, max_force: float) -> tuple[np.ndarray, float]:
    """Least-squares ``a_1 .. a_degree`` over the points up to the first force above ``max_force`` (at least
    ``degree + 1`` points), and the deepest fitted depth."""
    keep = np.cumprod(forces <= max_force).astype(bool)
    keep[:degree + 1] = True
    basis = np.stack([depths[keep] ** j for j in range(1, degree + 1)], axis=1)
    scale = np.abs(basis).max(axis=0)
    coefficients, *_ = np.linalg.lstsq(basis / scale, forces[keep], rcond=None)
    return coefficients / scale, float(depths[keep].max())


def snare_fit(snare_cfg: dict, node: int) -> dict:
    """The virtual spring of 1-based ``node`` from the independent chain (experiments/references/rope_reference.py) of a snare
    config's rope (``k_tor`` per node, so ``EI = k_tor l``; rest bend towards the ring centre; clamps along the
    pinned end sections if clamped): pressing forces along the outward normal at the configured depths and
    their polynomial (:func:`fit_polynomial`)."""
    r, s, vs = snare_cfg["rope"], snare_cfg["snare"], snare_cfg["virtual_spring"]
    if s["approach"] != "against_bow" or r["compression_ratio"] != 1.0:
        raise ValueError("the chain covers the against_bow approach and compression_ratio 1")
    statics = RopeStatics(r["length_m"], r["bending_stiffness_N_m_rad"] * r["length_m"] / r["n_sections"],
                          r["axial_rigidity_N"], -np.deg2rad(r["rest_bend_total_deg"]), s["ring_radius_m"],
                          s["end_distance_m"])
    chain = Chain(statics, r["n_sections"])
    chain = chain.installed() if r["end_condition"] == "clamped" else chain
    x = chain.equilibrium()
    depths = np.linspace(0.0, vs["max_depth_m"], vs["n_depths"] + 1)[1:]
    forces, _ = chain.pressing_curve(x, node - 1, chain_direction(x, node - 1), depths)
    coefficients, limit = fit_polynomial(depths, forces, vs["degree"], vs["max_force_N"])
    return {"depths": depths, "forces": forces, "coefficients": coefficients, "fit_limit": limit,
            "damping": vs["damping_N_s_m"]}


def closing_speed(capture_cfg: dict) -> float:
    """Normal closing speed ``v d . (-n_0) = v / sqrt(1 + tan^2 a_1 + tan^2 a_2)`` of the ``[capture]`` approach."""
    c = capture_cfg["capture"]
    tangents = np.tan(np.deg2rad(c.get("approach_angles_deg", [0.0, 0.0])))
    return c["approach_speed_m_s"] / np.sqrt(1.0 + tangents @ tangents)


IMPACT_KEYS = ("peak_force_N", "peak_force_time_s", "impulse_N_s", "contact_duration_s", "max_indentation_m",
               "restitution")


def strike_deviations(ours: dict, snare: dict | None) -> list[dict]:
    """For every strike of :func:`diffspace_strikes`: the two-body integration with the scenario's polynomial,
    diffspace's relative deviations from it, its deviations from the closed forms (``c_v = 0``) and, with the
    snare config ``snare``, the independently fitted polynomial (its fitted depth range and peak force against
    diffspace's)."""
    rows = []
    for row in ours["strikes"]:
        masses = (ours["arm_mass"], ours["target_mass"], row["closing_speed"])
        impact = VirtualImpact(row["coefficients"], ours["damping"], *masses)
        ref = impact.simulate()
        out = {"node": row["node"], "speed_m_s": row["speed"], "status": row["status"], "reference": ref,
               "diffspace_vs_reference": {key: row[key] / ref[key] - 1.0 for key in IMPACT_KEYS}}
        if ours["damping"] == 0.0:
            closed = impact.closed_form()
            out["reference_vs_closed_form"] = {key: ref[key] / value - 1.0 for key, value in closed.items()}
        if snare is not None:
            fit = snare_fit(snare, row["node"])
            peak = VirtualImpact(fit["coefficients"], fit["damping"], *masses).simulate()["peak_force_N"]
            relative = np.abs(fit["coefficients"] / row["coefficients"] - 1.0)
            out["fit"] = {"fit_limit_m": fit["fit_limit"], "diffspace_fit_limit_m": row["fit_limit"],
                          "peak_force_vs_diffspace": peak / row["peak_force_N"] - 1.0,
                          "coefficients_max_rel": float(relative.max())}
        rows.append(out)
    return rows


# ---------------------------------------------------------------------------------------------- diffspace side
def write_configs(folder: Path, capture_config: Path, capture_overrides: dict, snare_overrides: dict):
    """``capture_config`` with ``capture_overrides`` (without ``[optimize]``), its snare config with
    ``snare_overrides``, both written to ``folder`` with absolute robot paths. Returns ``(path, capture dict,
    snare dict)``."""
    from diffspace.io.tables import dump_toml

    capture = {k: v for k, v in read_config(capture_config, capture_overrides).items() if k != "optimize"}
    snare_path = capture_config.parent / capture["snare_strike"]["config"]
    snare = {k: v for k, v in read_config(snare_path, snare_overrides).items() if k not in ("optimize", "fit")}
    capture["robot"]["path"] = str(capture_config.parent / capture["robot"]["path"])
    snare["arm"]["robot"] = str(snare_path.parent / snare["arm"]["robot"])
    capture["snare_strike"]["config"] = "snare.toml"
    (folder / "snare.toml").write_text(dump_toml(snare))
    (folder / "capture_snare.toml").write_text(dump_toml(capture))
    return folder / "capture_snare.toml", capture, snare


def diffspace_strikes(config: Path, nodes, speeds) -> dict:
    """diffspace's virtual-spring impacts (scenario API, imported here) for every ``(node, speed)``: the node's
    polynomial and fit limit, the masses and closing speed, and the impact's numbers and status."""
    import equinox as eqx
    import jax

    from diffspace.scenarios import load_scenario

    scenario = load_scenario(config)
    simulate = eqx.filter_jit(lambda s, p: s.simulate(p))
    rows = []
    for node in nodes:
        for speed in speeds:
            design = {"snare_strike.node": node, "capture.approach_speed_m_s": speed}
            params = scenario.with_design(scenario.params, design)
            out = jax.tree.map(np.asarray, simulate(scenario, params))
            impact = out.impact
            rows.append({"node": node, "speed": speed, "closing_speed": float(out.closing_speed),
                         "coefficients": np.asarray(scenario.coefficients[node - 2]), "fit_limit": float(out.fit_limit),
                         "peak_force_N": float(impact.peak_force), "peak_force_time_s": float(impact.peak_force_time),
                         "impulse_N_s": float(impact.impulse), "contact_duration_s": float(impact.contact_duration),
                         "max_indentation_m": float(impact.max_indentation),
                         "restitution": float(impact.restitution), "status": int(out.status)})
    return {"arm_mass": float(scenario.arm_mass), "target_mass": float(scenario.target_mass),
            "mass": float(scenario.model.mass), "damping": float(scenario.model.virtual_damping), "strikes": rows}
