"""Snare capture: a grapple shaft strikes one flexible wire rope of a space snare (SPEC 5.2; seed: Cai et al.
2021, Aerospace 8:381, Sections 3 and 4.2). Physics in :mod:`diffspace.contact.rope` and
:mod:`diffspace.scenarios.snare_design`; this module is the config/CLI layer.

``run``: initial static shape, the paper's virtual spring at the contact node (static pressing curve,
polynomial fit F_c(delta_v) and the surface F_c(delta_v, d_se), Eqs. (40)-(43)), the virtual-spring impact, the
full dynamic rope impact, and the linearised stiffness k_v(0) at every node. ``optimize``: fastest approach
speed per contact node (vmapped over nodes) keeping the peak force under a limit, by Optax on gradients
through the impact events, then checked with the full dynamic model. ``fit``: identify the bending
stiffness k_tor from measured peak forces (CSV ``node, speed_m_s, peak_force_N``).

Striking mass (``strike.mass_source = "arm"``): the reference arm ``esd_arm7`` on the air table at the paper's
joint angles (joints 2, 4, 6 = 0.8727, 1.7453, 0.8727 rad, free and frictionless; 1, 3, 5, 7 locked), effective
mass at ``rod_tip`` normal to the rod in the table plane, ``1 / (J H^-1 J^T)`` = 1.870 kg, in series with the
41.7 kg target (Table 4): 1.790 kg. (All joints locked it would be 75.9 kg: a servo-stiff arm would hit ~6x
harder at the same speed; along the rod axis 22.8 kg free / 36.9 kg locked.)

End condition (``rope.end_condition``): ``"pinned"`` (the paper's model, schema default) or ``"clamped"`` (each
end held in a ring fitting by one more k_tor spring, fittings along the installed end sections: see
:mod:`diffspace.scenarios.snare_design`). The shipped config uses ``"clamped"``: with k_tor identified from
node 16 for each, only clamped ends reproduce the paper's "nodes 5 and 25 larger than 10 and 20" at 0.06 m/s;
neither reaches the measured 2.66-6.22 N (``experiments/snare_comparison.py``).

Parameters the paper does not give, and how they are set: k_tor is identified from the three measured
node-16 peaks (``fit``; clamped 1.553 N m/rad, pinned 2.09; the paper's Eq. (46) slope gives 2.34 pinned);
damping ratios of 0.2 for the node-scale axial and bending modes; the shaft-node contact is the library's
Zhiying-Qishao law with k = 1e7 N/m^1.5 (peaks change by a few % for 1e6 / 1e8); EA = 5e4 N (see the
config). The rotating ring may turn during a dynamic impact (``snare.ring_rate_deg_s``; the clamped fitting
turns with it); the virtual spring uses d_se at t = 0.
"""

from __future__ import annotations

from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from ..io.config import Field, Schema
from ..status import ConfigError
from ..contact import LAWS, ContactLaw
from ..bodies.rope import END_CONDITIONS, Rope, Shaft
from ..io.results import print_summary, write_summary, write_timeseries
from ..status import SolverFailure
from . import snare_design as sd
from .snare_design import snare_contact
from .snare_mass import arm_effective_mass

PAPER_NODE16 = {"speeds_m_s": [0.06, 0.08, 0.10], "peaks_N": [2.76, 3.77, 5.23]}


def _node_check(value):
    return None if value >= 2 else "must be an interior node (>= 2; node 1 is the fixed-ring end)"


def schema() -> Schema:
    pos = dict(gt=0.0)
    return Schema({
        "snare": {
            "ring_radius_m": Field("float", 0.15, **pos, help="R_cm of both rings (2R = largest d_se)"),
            "end_distance_m": Field("float", 0.26, **pos, help="d_se at the impact"),
            "ring_rate_deg_s": Field("float", 0.0, help="rotating-ring drive rate during the impact"),
            "approach": Field("str", "against_bow", choices=sd.APPROACHES),
        },
        "rope": {
            "length_m": Field("float", 0.30, **pos),
            "diameter_m": Field("float", 0.003, **pos),
            "linear_density_kg_m": Field("float", 0.0365, **pos),
            "n_sections": Field("int", 30, min=3, max=400),
            "axial_rigidity_N": Field("float", 5.0e4, **pos, help="EA; k_tes = EA / section length"),
            "compression_ratio": Field("float", 1.0, min=0.0, max=1.0, help="0 = tension-only (paper)"),
            "bending_stiffness_N_m_rad": Field("float", 2.0, **pos, help="k_tor per interior node"),
            "end_condition": Field("str", "pinned", choices=END_CONDITIONS,
                                   help="pinned (paper) or clamped: a k_tor spring at each end fitting"),
            "rest_bend_total_deg": Field("float", 26.0, min=0.0, max=180.0),
            "axial_damping_ratio": Field("float", 0.2, min=0.0, help="of one section's axial mode"),
            "bending_damping_ratio": Field("float", 0.2, min=0.0, help="of one node's bending mode"),
        },
        "shaft": {"radius_m": Field("float", 0.01, **pos), "axis": Field("floats", [0.0, 0.0, 1.0], length=3)},
        "contact": {
            "law": Field("str", "zhiying_qishao", choices=LAWS),
            "stiffness_N_m_n": Field("float", 1.0e7, **pos),
            "exponent": Field("float", 1.5, gt=1.0, max=3.0),
            "restitution_c": Field("float", 0.55, gt=0.0, max=1.0),
        },
        "strike": {
            "node": Field("int", 16, check=_node_check, help="1-based contact node (paper: 16 = middle)"),
            "approach_speed_m_s": Field("float", 0.06, **pos),
            "mass_source": Field("str", "arm", choices=("arm", "value")),
            "mass_kg": Field("float", 1.79, **pos, help="striking mass with mass_source = 'value'"),
            "target_mass_kg": Field("float", 41.7, **pos, help="in series with the arm (paper Table 4)"),
            "initial_gap_m": Field("float", 0.0, min=0.0),
        },
        "arm": {
            "robot": Field("path", "robots/esd_arm7.toml"),
            "free_joints": Field("any", [2, 4, 6]),
            "free_joint_angles_rad": Field("floats", [0.8727, 1.7453, 0.8727]),
            "frame": Field("str", "rod_tip"),
            "direction": Field("str", "rod_normal", choices=("rod_normal", "rod_axis")),
        },
        "virtual_spring": {
            "max_depth_m": Field("float", 0.03, **pos, help="range of the static pressing solves"),
            "n_depths": Field("int", 60, min=4, max=400),
            "max_force_N": Field("float", 8.0, **pos, help="F_A: the polynomial fits F_c in [0, F_A]"),
            "degree": Field("int", 6, min=1, max=8),
            "damping_N_s_m": Field("float", 0.0, min=0.0, help="c_v of Eq. (43)"),
            "end_distances_m": Field("floats", [0.24, 0.25, 0.26, 0.27, 0.28], help="d_se grid of the surface fit"),
        },
        "simulation": {
            "rtol": Field("float", 1e-6, gt=0.0, max=1e-2),
            "atol": Field("float", 1e-9, gt=0.0, max=1e-2),
            "n_save": Field("int", 600, min=10, max=100_000),
            "max_steps": Field("int", 400_000, min=100),
            "horizon_factor": Field("float", 1.5, min=1.0, help="x the virtual-spring contact duration"),
        },
        "optimize": {
            "force_limit_N": Field("float", 4.0, **pos),
            "nodes": Field("any", [3, 5, 8, 10, 13, 16, 20, 25]),
            "speed_bounds_m_s": Field("floats", [0.01, 0.3], length=2, gt=0.0),
            "start_speed_m_s": Field("float", 0.05, **pos),
            "steps": Field("int", 80, min=1),
            "learning_rate": Field("float", 0.1, **pos),
            "penalty": Field("float", 200.0, **pos),
            "verify_dynamic": Field("bool", True),
        },
        "fit": {"max_iter": Field("int", 20, min=1), "method": Field("str", "dynamic", choices=("dynamic", "virtual"))},
    })


def ring_problems(end_distance: float, ring_radius: float, length: float, end_key: str, radius_key: str) -> list[str]:
    """Rope-on-ring geometry: a slack rope (``d_se < length``) whose ends fit on the ring (``d_se <= 2 R``)."""
    problems = []
    if end_distance >= length:
        problems.append(f"{end_key}: must be < rope.length_m = {length:g} (a slack rope)")
    if end_distance > 2.0 * ring_radius:
        problems.append(f"{end_key}: must be <= 2 * {radius_key} = {2 * ring_radius:g}")
    return problems


def check_config(cfg: dict) -> None:
    """Cross-key checks the field ranges cannot express; raises ConfigError naming the key."""
    s, r, i, a = cfg["snare"], cfg["rope"], cfg["strike"], cfg["arm"]
    problems = ring_problems(s["end_distance_m"], s["ring_radius_m"], r["length_m"], "snare.end_distance_m",
                             "snare.ring_radius_m")
    if not 2 <= i["node"] <= r["n_sections"]:
        problems.append(f"strike.node: {i['node']} out of range 2..{r['n_sections']} (interior nodes, 1-based)")
    nodes = cfg["optimize"]["nodes"]
    if not isinstance(nodes, list) or not nodes or not all(isinstance(n, int) and 2 <= n <= r["n_sections"] for n in nodes):
        problems.append(f"optimize.nodes: expected a list of interior nodes in 2..{r['n_sections']}")
    lo, hi = cfg["optimize"]["speed_bounds_m_s"]
    if not lo < hi:
        problems.append("optimize.speed_bounds_m_s: lower bound must be < upper bound")
    free = a["free_joints"]
    if not isinstance(free, list) or not all(isinstance(j, int) for j in free) or len(free) != len(a["free_joint_angles_rad"]):
        problems.append("arm.free_joints: expected a list of 1-based joints, one per arm.free_joint_angles_rad")
    if problems:
        raise ConfigError("\n".join(problems))


def striking_mass(cfg: dict) -> dict:
    """Effective striking mass [kg] (arm in series with the target) and its ingredients."""
    imp = cfg["strike"]
    if imp["mass_source"] == "value":
        return {"striking_mass_kg": imp["mass_kg"]}
    from .common import robot_from_config

    arm = cfg["arm"]
    robot = robot_from_config({"robot": {"path": arm["robot"]}})
    bad = [j for j in arm["free_joints"] if not 1 <= j <= robot.n_joints]
    if bad:
        raise ConfigError(f"arm.free_joints: joints {bad} out of range 1..{robot.n_joints}")
    angles = np.zeros(robot.n_joints)
    angles[np.asarray(arm["free_joints"]) - 1] = arm["free_joint_angles_rad"]
    try:
        masses = arm_effective_mass(robot, angles, [j - 1 for j in arm["free_joints"]], arm["frame"], arm["direction"])
    except KeyError as err:
        raise ConfigError(f"arm.frame: {err}") from None
    m_arm, m_t = masses["selected"], imp["target_mass_kg"]
    return {"striking_mass_kg": m_arm * m_t / (m_arm + m_t), "arm_effective_mass_kg": m_arm,
            **{f"arm_mass_{k}_kg": v for k, v in masses.items() if k != "selected"}}


def build_model(cfg: dict, mass: float, bending_stiffness=None) -> sd.SnareModel:
    """The :class:`SnareModel` of a validated config (``bending_stiffness`` may be a traced array)."""
    r, s, vs = cfg["rope"], cfg["snare"], cfg["virtual_spring"]
    k_tor = r["bending_stiffness_N_m_rad"] if bending_stiffness is None else bending_stiffness
    l0 = r["length_m"] / r["n_sections"]
    m_node = r["linear_density_kg_m"] * l0
    k_tes = r["axial_rigidity_N"] / l0
    rope = Rope.uniform(
        r["length_m"], r["n_sections"], r["linear_density_kg_m"], r["axial_rigidity_N"], k_tor,
        rest_bend_total=-np.deg2rad(r["rest_bend_total_deg"]), plane_normal=(0.0, 0.0, 1.0),
        axial_damping=2.0 * r["axial_damping_ratio"] * np.sqrt(k_tes * m_node),
        bending_damping=2.0 * r["bending_damping_ratio"] * jnp.sqrt(k_tor * m_node * l0**2),
        compression_ratio=r["compression_ratio"], radius=0.5 * r["diameter_m"], end_condition=r["end_condition"])
    c = cfg["contact"]
    law = ContactLaw(c["stiffness_N_m_n"], c["exponent"], c["restitution_c"], mass=mass, law=c["law"]).canonical()
    depths = jnp.linspace(0.0, vs["max_depth_m"], vs["n_depths"] + 1)[1:]
    model = sd.SnareModel(rope, sd.Snare(s["ring_radius_m"], s["end_distance_m"], np.deg2rad(s["ring_rate_deg_s"])),
                          Shaft(cfg["shaft"]["radius_m"], cfg["shaft"]["axis"]), law, jnp.asarray(mass, float),
                          jnp.asarray(vs["damping_N_s_m"], float), depths, jnp.asarray(vs["max_force_N"], float),
                          r["length_m"], vs["degree"], s["approach"])
    return sd.install_clamps(model)  # clamped: fittings along the installed (pinned) end sections


def _settings(cfg: dict) -> dict:
    sim = cfg["simulation"]
    return {"rtol": sim["rtol"], "atol": sim["atol"], "max_steps": sim["max_steps"]}


def run(cfg: dict, out: Path) -> dict:
    """Initial shape, virtual spring, virtual and full dynamic impact at the configured node and speed."""
    from .snare_results import analyse, write_plots

    check_config(cfg)
    mass = striking_mass(cfg)
    model = build_model(cfg, mass["striking_mass_kg"])
    res = analyse(model, cfg)
    summary = {**res["summary"], **mass}
    write_summary(out, summary)
    write_timeseries(out, res["dynamic_series"])
    write_timeseries(out, res["virtual_series"], name="virtual_timeseries")
    write_timeseries(out, res["pressing"], name="pressing_curve")
    write_plots(out, res)
    print_summary(summary, f"snare impact at node {cfg['strike']['node']}")
    return summary


def node_table(model: sd.SnareModel, nodes) -> tuple:
    """Virtual-spring polynomial and fitted depth range of each 1-based node, from the one initial shape and
    one vmapped set of static solves: ``(coefficients (K, degree), fit_limit (K,) [m], converged)``."""
    x_eq, ok_shape = sd.initial_shape(model)

    def one(node):
        coef, _, limit, ok = sd.virtual_spring(model, x_eq, node - 1)
        return coef, limit, ok

    coef, limit, ok = jax.jit(jax.vmap(one))(jnp.asarray(nodes))
    return coef, limit, bool(ok_shape) and bool(jnp.all(ok))


def optimize(cfg: dict, out: Path) -> dict:
    """Largest approach speed per node with peak force <= limit (Optax on the virtual-spring impact, whose
    touch/release events are differentiable), nodes batched by ``vmap``; best node checked with the full
    dynamic model. Loss ``-v / v_max + penalty * relu(F_peak / F_limit - 1)^2`` over ``v`` in the bounds
    (sigmoid map). Adam ends near the boundary ``F_peak = F_limit``; Newton steps on
    ``log F_peak(log v) = log F_limit`` (slope by autodiff) then put it on the boundary. With
    ``verify_dynamic`` the best node is re-run with the full rope dynamics and its speed moved onto the
    dynamic model's limit by two secant steps (``best_node_dynamic_speed_m_s``)."""
    import optax

    from .snare_results import optimize_report

    check_config(cfg)
    mass = striking_mass(cfg)
    model = build_model(cfg, mass["striking_mass_kg"])
    opt = cfg["optimize"]
    nodes = jnp.asarray(opt["nodes"])
    coefs, _, ok = node_table(model, nodes)
    if not ok:
        raise SolverFailure("optimize: static pressing solves did not converge at some node")
    lo, hi = opt["speed_bounds_m_s"]
    limit, rho = opt["force_limit_N"], opt["penalty"]

    def speed_of(z):
        return lo + (hi - lo) * jax.nn.sigmoid(z)

    def loss(z, coef):
        res = sd.virtual_impact(model, coef, speed_of(z))
        return -speed_of(z) / hi + rho * jax.nn.relu(res["peak_force_N"] / limit - 1.0) ** 2

    v0 = min(max(opt["start_speed_m_s"], lo + 1e-6 * (hi - lo)), hi - 1e-6 * (hi - lo))
    z = jnp.full(nodes.shape, np.log((v0 - lo) / (hi - v0)))
    step_fn = jax.jit(jax.vmap(jax.value_and_grad(loss)))
    optimizer = optax.adam(opt["learning_rate"])
    state = optimizer.init(z)
    history = []
    for _ in range(opt["steps"]):
        _, grads = step_fn(z, coefs)
        history.append(np.asarray(speed_of(z)))
        updates, state = optimizer.update(grads, state)
        z = optax.apply_updates(z, updates)
    history.append(np.asarray(speed_of(z)))
    log_peak = jax.jit(jax.vmap(jax.value_and_grad(
        lambda log_v, c: jnp.log(sd.virtual_impact(model, c, jnp.exp(log_v))["peak_force_N"]))))
    speeds = np.asarray(speed_of(z))
    adam_peaks = np.exp(np.asarray(log_peak(jnp.log(speeds), coefs)[0]))
    for _ in range(6):  # Newton on log F_peak(log v) = log F_limit, slopes by autodiff through the events
        value, slope = (np.asarray(a) for a in log_peak(jnp.log(speeds), coefs))
        speeds = np.clip(speeds * np.exp((np.log(limit) - value) / np.maximum(slope, 0.1)), lo, hi)
    slope = np.asarray(log_peak(jnp.log(speeds), coefs)[1])
    final = jax.jit(jax.vmap(lambda n, v: sd.snare_contact(model, n, v, "virtual")))(nodes, jnp.asarray(speeds))
    summary = optimize_report(cfg, model, mass, nodes, speeds, final, np.asarray(history), out, _settings(cfg),
                              {"adam_speed_m_s": history[-1], "adam_peak_force_N": adam_peaks, "log_slope": slope})
    print_summary(summary, "snare optimize")
    return summary


def fit(cfg: dict, data_path: Path, out: Path) -> dict:
    """Identify k_tor from measured peaks (CSV columns ``node, speed_m_s, peak_force_N``); writes fitted.toml."""
    from .snare_results import fit_bending_stiffness

    check_config(cfg)
    return fit_bending_stiffness(cfg, Path(data_path), out)


__all__ = ["schema", "run", "optimize", "fit", "build_model", "striking_mass", "check_config", "snare_contact", "node_table",
           "ring_problems"]
