"""``diffspace run|optimize|fit|sweep`` for the ejection scenario: config, batched evaluation, reports.

Config (public contract, issue 3)::

    [robot]      path
    [ejection]   mode ("plane" | "space"), attitude (name or degrees), locked_joints (1-based),
                 spring_stiffness_N_m, spring_compression_m, rail_axis, method ("full" | "paper")
    [friction]   model ("hybrid" | "smooth" | "none" | "locked"), static_N_m, coulomb_N_m,
                 viscous_N_m_s_rad, smooth_velocity_rad_s
    [simulation] t_final_s, rtol, atol, n_save, max_steps, max_segments
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ..io.config import Field, Schema
from ..status import ConfigError
from ..actuation.friction import MODELS, JointFriction
from ..io.results import plot_panels, print_summary, write_summary, write_timeseries
from ..status import SolverFailure
from .common import ROBOT_FIELDS, SIMULATION_FIELDS, joint_angles_from_config, robot_from_config
from .ejection import EjectionModel, simulate_ejection
from .ejection_design import DESIGN_SECTIONS, fit, optimize, sweep  # noqa: F401  (CLI entry points)
from .ejection_results import EjectionResult, ejection_result

DEFAULT_LOCKED = {"plane": [1, 3, 5, 7], "space": []}


def _nonneg_list(value):
    return None if value is None or all(isinstance(x, int) and x >= 1 for x in value) else "expected 1-based joint indices"


def schema() -> Schema:

    simulation = dict(SIMULATION_FIELDS)
    simulation["max_segments"] = Field("int", 16, min=2, max=200, help="bound on hybrid events")
    simulation["max_steps"] = Field("int", 20_000, min=10)
    return Schema(
        {
            "robot": ROBOT_FIELDS,
            "ejection": {
                "mode": Field("str", "plane", choices=("plane", "space")),
                "attitude": Field("any", "attitude_1", help="named attitude or joint angles [deg]"),
                "locked_joints": Field("any", None, check=lambda v: _nonneg_list(v) if isinstance(v, list) else "expected a list of 1-based joint indices"),
                "spring_stiffness_N_m": Field("float", 812.7, gt=0.0),
                "spring_compression_m": Field("float", 0.086, gt=0.0),
                "rail_axis": Field("floats", [0.0, 0.0, 1.0], length=3, check=lambda v: None if np.linalg.norm(v) > 0 else "must be non-zero"),
                "method": Field("str", "full", choices=("full", "paper")),
            },
            "friction": {
                "model": Field("str", "hybrid", choices=MODELS),
                "static_N_m": Field("float", 4.0, min=0.0),
                "coulomb_N_m": Field("float", 2.0, min=0.0),
                "viscous_N_m_s_rad": Field("float", 5.4, min=0.0),
                "smooth_velocity_rad_s": Field("float", 1e-3, gt=0.0),
            },
            "simulation": simulation,
            **DESIGN_SECTIONS,
        }
    )


class Case(eqx.Module):
    """Everything one ejection needs, from a validated config: full robot, attitude, parameters."""

    robot: object
    angles: jax.Array  # full-robot joint angles [rad]
    params: jax.Array  # [stiffness, compression, static, coulomb, viscous, smooth_velocity]
    rail_axis: jax.Array
    tolerances: jax.Array  # [t_final, rtol, atol]: data, so changing them does not recompile
    locked: tuple = eqx.field(static=True)
    mode: str = eqx.field(static=True)
    friction_model: str = eqx.field(static=True)
    settings: tuple = eqx.field(static=True)  # (n_save, max_steps, max_segments)

    @property
    def free(self) -> list[int]:
        return [j for j in range(self.robot.n_joints) if j not in self.locked]


def case_from_config(cfg: dict) -> Case:
    robot = robot_from_config(cfg)
    ej, fr, sim = cfg["ejection"], cfg["friction"], cfg["simulation"]
    angles = joint_angles_from_config(robot, ej["attitude"], "ejection.attitude")
    locked = ej["locked_joints"] if ej["locked_joints"] is not None else DEFAULT_LOCKED[ej["mode"]]
    bad = [j for j in locked if not 1 <= j <= robot.n_joints]
    if bad:
        raise ConfigError(f"ejection.locked_joints: indices {bad} out of range 1..{robot.n_joints}")
    if fr["model"] == "hybrid" and fr["coulomb_N_m"] > fr["static_N_m"]:
        raise ConfigError("friction.coulomb_N_m: must not exceed friction.static_N_m for the hybrid model")
    if len(set(locked)) == robot.n_joints:
        raise ConfigError("ejection.locked_joints: at least one joint must stay free (use friction.model = 'locked')")
    params = [ej["spring_stiffness_N_m"], ej["spring_compression_m"], fr["static_N_m"], fr["coulomb_N_m"],
              fr["viscous_N_m_s_rad"], fr["smooth_velocity_rad_s"]]
    tolerances = jnp.array([sim["t_final_s"], sim["rtol"], sim["atol"]])
    settings = (sim["n_save"], sim["max_steps"], sim["max_segments"])
    return Case(robot, jnp.asarray(angles), jnp.asarray(params, dtype=float), jnp.asarray(ej["rail_axis"]),
                tolerances, tuple(sorted(j - 1 for j in set(locked))), ej["mode"], fr["model"], settings)


def model_of(case: Case, angles=None, params=None) -> tuple[EjectionModel, jax.Array]:
    """The ejection model (locked joints merged at their angles) and the free joints' angles."""
    angles = case.angles if angles is None else angles
    params = case.params if params is None else params
    locked = jnp.asarray(case.locked, dtype=int)
    robot = case.robot.lock(list(case.locked), angles[locked]) if case.locked else case.robot
    friction = JointFriction.uniform(robot.n_joints, params[2], params[3], params[4], case.friction_model, params[5])
    flight = "space" if case.mode == "space" else "plane"
    model = EjectionModel.build(robot, friction, params[0], params[1], case.rail_axis, flight)
    return model, angles[jnp.asarray(case.free, dtype=int)]


def evaluate(case: Case, angles=None, params=None) -> tuple[EjectionResult, object]:
    """Simulate one ejection; pure, differentiable in ``angles`` and ``params``. Returns (result, run)."""
    model, free_angles = model_of(case, angles, params)
    t_final, rtol, atol = case.tolerances
    n_save, max_steps, max_segments = case.settings
    run = simulate_ejection(model, free_angles, t_final, n_save, rtol, atol, max_steps, max_segments)
    return ejection_result(model, run, free_angles), run


evaluate_jit = jax.jit(evaluate)


def check_run(result: EjectionResult, label: str) -> None:
    """Raise ``SolverFailure`` naming the phase for failed or incomplete runs (never report such numbers)."""
    status = int(result.status)
    if status == 1:
        raise SolverFailure(f"{label}: the ODE solver failed (max steps or step-size collapse) during the ejection")
    if status == 2:
        raise SolverFailure(f"{label}: more stick/slip events than simulation.max_segments; raise it")
    if not bool(result.separated):
        raise SolverFailure(f"{label}: phase 'rail': separation not reached within simulation.t_final_s")


def summary_of(case: Case, result: EjectionResult) -> dict:
    """JSON-ready summary with the issue's keys (SI units, degrees for angles)."""
    deg = np.rad2deg
    omega = np.asarray(result.stable_angular_velocity)
    stable = bool(result.stable)
    residual = float(result.spring_energy - result.kinetic_energy_final - result.friction_loss)
    return {
        "mode": case.mode,
        "friction_model": case.friction_model,
        "free_joints": [j + 1 for j in case.free],
        "equivalent_mass_kg": float(result.equivalent_mass),
        "separation_time_s": float(result.separation_time),
        "separation_velocity_m_s": float(result.separation_velocity),
        "joint_angle_change_at_separation_deg": deg(np.asarray(result.joint_change_at_separation)).tolist(),
        "stable": stable,
        "stable_time_s": float(result.stable_time) if stable else None,
        "stable_velocity_m_s": float(result.stable_velocity),
        "stable_angular_velocity_deg_s": float(deg(np.linalg.norm(omega))) if stable else None,
        "stable_angular_velocity_vector_deg_s": deg(omega).tolist() if stable else None,
        "joint_angle_change_final_deg": deg(np.asarray(result.joint_change_final)).tolist(),
        "spring_energy_J": float(result.spring_energy),
        "kinetic_energy_final_J": float(result.kinetic_energy_final),
        "friction_loss_J": float(result.friction_loss),
        "energy_residual_J": residual,
    }


def write_run_outputs(case: Case, run, out: Path, tag: str = "") -> None:
    """Time series (base travel/velocity, joint angles, angular rate) and the three-panel plot."""
    sol = run.solution
    q, v, loss = (np.asarray(x) for x in sol.ys)
    ts = np.asarray(sol.ts)
    axis = np.asarray(case.rail_axis) / np.linalg.norm(case.rail_axis)
    free = case.free
    columns = {"t_s": ts, "base_travel_m": q[:, :3] @ axis, "base_velocity_m_s": v[:, :3] @ axis}
    columns.update({f"joint{j + 1}_deg": np.rad2deg(q[:, 7 + k]) for k, j in enumerate(free)})
    columns.update({f"base_omega_{a}_deg_s": np.rad2deg(v[:, 3 + i]) for i, a in enumerate("xyz")})
    columns["friction_loss_J"] = loss
    write_timeseries(out, columns, f"timeseries{tag}")
    plot_panels(
        out / f"ejection{tag}.png",
        ts,
        [
            ("base velocity [m/s]", {"along rail": columns["base_velocity_m_s"]}),
            ("joint angle [deg]", {f"joint {j + 1}": columns[f"joint{j + 1}_deg"] for j in free}),
            ("base angular rate [deg/s]", {a: columns[f"base_omega_{a}_deg_s"] for a in "xyz"}),
        ],
    )


def run(cfg: dict, out: Path) -> dict:
    case = case_from_config(cfg)
    result, sim = evaluate_jit(case, case.angles, case.params)
    check_run(result, "ejection")
    summary = summary_of(case, result)
    if cfg["ejection"]["method"] == "paper":
        summary["paper_method"] = paper_comparison(case, summary)
    write_run_outputs(case, sim, out)
    write_summary(out, summary)
    print_summary(summary, f"ejection ({case.mode}, {case.friction_model} friction)")
    return summary


def paper_comparison(case: Case, full: dict, angles=None) -> dict:
    """The paper's semi-analytic recursion on the same case and its relative difference to the full model."""
    from .ejection_paper import paper_ejection

    model, free_angles = model_of(case, angles)
    paper = {k: (np.asarray(v).tolist() if np.ndim(v) else float(v)) for k, v in jax.jit(paper_ejection)(model, free_angles).items()}
    diff = {}
    for key, value in paper.items():
        ref = full.get(key)
        if isinstance(value, float) and isinstance(ref, float) and ref != 0:
            diff[key] = (value - ref) / abs(ref)
    return {"results": paper, "relative_difference_to_full": diff}


def frictionless_equivalent_mass(case: Case, angles, mode: str) -> jax.Array:
    """Equivalent mass with the mode's default locked joints and all other joints free and frictionless."""
    locked = tuple(j - 1 for j in DEFAULT_LOCKED[mode])
    other = dataclasses.replace(case, locked=locked, mode=mode, friction_model="none")
    from .ejection import equivalent_mass

    model, free_angles = model_of(other, angles)
    q0 = model.robot.neutral().at[7:].set(free_angles)
    return equivalent_mass(model, q0, jnp.ones(model.robot.n_joints))


def run_default(cfg: dict, out: Path) -> dict:
    """The paper's study: every named attitude of the robot, batched in one ``vmap``; prints the table."""
    case = case_from_config(cfg)
    names = [name for name, _ in case.robot.attitudes]
    if not names:
        raise ConfigError("robot.path: the robot defines no [attitudes] for the default study")
    angles = jnp.stack([jnp.asarray(a) for _, a in case.robot.attitudes])
    batched = jax.jit(jax.vmap(lambda a: evaluate(case, a, case.params)))
    results, runs = batched(angles)
    m_space = jax.vmap(lambda a: frictionless_equivalent_mass(case, a, "space"))(angles)
    m_plane = jax.vmap(lambda a: frictionless_equivalent_mass(case, a, "plane"))(angles)
    table = {}
    for k, name in enumerate(names):
        result = jax.tree_util.tree_map(lambda x: x[k], results)
        check_run(result, f"attitude {name}")
        entry = summary_of(case, result)
        entry["equivalent_mass_space_frictionless_kg"] = float(m_space[k])
        entry["equivalent_mass_plane_frictionless_kg"] = float(m_plane[k])
        if cfg["ejection"]["method"] == "paper":
            entry["paper_method"] = paper_comparison(case, entry, angles[k])
        table[name] = entry
        write_run_outputs(case, jax.tree_util.tree_map(lambda x: x[k], runs), out, f"_{name}")
    summary = {"study": "five-attitude ejection (plane mode)", "attitudes": table}
    write_summary(out, summary)
    _plot_study(out, table)
    print_table(table)
    return summary


def print_table(table: dict) -> None:
    header = f"{'attitude':12s} {'m_eq sp':>8s} {'m_eq pl':>8s} {'m_eq(0)':>8s} {'t_r':>7s} {'v_r':>8s} " \
             f"{'v_stable':>8s} {'t_s':>6s} {'w_s':>7s}  joint change at t_r [deg]"
    print("ejection study (masses kg, times s, velocities m/s, w_s deg/s)")
    print(header)
    for name, e in table.items():
        stable_t = f"{e['stable_time_s']:6.3f}" if e["stable"] else "   n/a"
        stable_w = f"{e['stable_angular_velocity_deg_s']:7.3f}" if e["stable"] else "    n/a"
        changes = " ".join(f"{x:6.2f}" for x in e["joint_angle_change_at_separation_deg"])
        print(f"{name:12s} {e['equivalent_mass_space_frictionless_kg']:8.2f} {e['equivalent_mass_plane_frictionless_kg']:8.2f} "
              f"{e['equivalent_mass_kg']:8.2f} {e['separation_time_s']:7.4f} {e['separation_velocity_m_s']:8.5f} "
              f"{e['stable_velocity_m_s']:8.5f} {stable_t} {stable_w}  {changes}")


def _plot_study(out: Path, table: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(table)
    x = np.arange(len(names))
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.4))
    axes[0].bar(x - 0.2, [table[n]["equivalent_mass_space_frictionless_kg"] for n in names], 0.4, label="space")
    axes[0].bar(x + 0.2, [table[n]["equivalent_mass_plane_frictionless_kg"] for n in names], 0.4, label="plane")
    axes[0].set_ylabel("equivalent mass [kg]")
    axes[0].legend()
    axes[1].bar(x, [table[n]["separation_velocity_m_s"] for n in names])
    axes[1].set_ylabel("separation velocity [m/s]")
    axes[2].bar(x, [table[n]["stable_angular_velocity_deg_s"] or 0.0 for n in names])
    axes[2].set_ylabel("stable angular rate [deg/s]")
    for ax in axes:
        ax.set_xticks(x, names, rotation=30, fontsize=8)
        ax.grid(alpha=0.3, axis="y")
    fig.tight_layout()
    fig.savefig(out / "study.png", dpi=110)
    plt.close(fig)
