"""``diffspace bench``, ejection: simulations per second of the hybrid model vs MuJoCo at the same accuracy,
and the reverse-mode gradient against the forward simulation."""

from __future__ import annotations

import copy
import math
import os

import numpy as np

from typing import NamedTuple

from .common import FRICTION_TORQUE_NM, BenchConfig, Progress, compile_timed, timed, timed_together


class EjectionCases(NamedTuple):
    """The benchmark's ejection batch, from the shipped air-table config."""

    robot: object  # the robot with the air table's locked joints merged
    model: object  # EjectionModel
    angles: object  # (batch, free joints) start angles [rad]
    stiffness: object  # (batch,) spring stiffness [N/m]
    horizon: float  # [s], past the slowest separation
    names: list  # the named attitudes (the first cases)
    compression: float  # [m]
    friction_torque: float  # [N m]: static = Coulomb (MuJoCo has one friction level)
    viscous: float  # [N m s/rad]


def ejection_cases(cfg: BenchConfig) -> EjectionCases:
    """The shipped air-table ejection (``ejection_plane.toml``; static = Coulomb friction, because MuJoCo has one
    friction level) for every named attitude of its robot, then random attitudes around them with dispersed
    spring stiffness."""
    import jax.numpy as jnp

    from ...io.packaged import packaged_config
    from ...scenarios import load_scenario

    scenario = load_scenario(packaged_config("ejection_plane.toml"), [
        f'friction.model="{cfg.ejection_friction}"', f"friction.static_N_m={FRICTION_TORQUE_NM}",
        f"friction.coulomb_N_m={FRICTION_TORQUE_NM}"])
    model, _ = scenario.model_of(scenario.params)
    full, locked, free = scenario.robot, np.asarray(scenario.locked, dtype=int), np.asarray(scenario.free)
    names = [name for name, _ in full.attitudes]
    atts = np.stack([np.asarray(full.attitude(name)) for name in names])
    if not np.allclose(atts[:, locked], np.asarray(scenario.params.attitude)[locked]):
        raise ValueError("bench: the ejection attitudes must share the locked joints' angles (plane mode)")
    free_atts = atts[:, free]
    rng = np.random.default_rng(cfg.seed)
    n = cfg.ejection_batch
    angles = free_atts[np.arange(n) % len(free_atts)] + np.deg2rad(rng.uniform(-10.0, 10.0, (n, len(free))))
    angles[: min(n, len(free_atts))] = free_atts[: min(n, len(free_atts))]  # the named attitudes themselves
    nominal = float(scenario.params.spring_stiffness)
    stiffness = nominal * rng.uniform(0.85, 1.15, n)
    stiffness[: min(n, len(free_atts))] = nominal
    horizon = 1.05 * 0.5 * math.pi * math.sqrt(float(model.robot.total_mass) / stiffness.min())
    return EjectionCases(robot=model.robot, model=model, angles=jnp.asarray(angles), stiffness=jnp.asarray(stiffness),
                         horizon=horizon, names=names, compression=float(scenario.params.spring_compression),
                         friction_torque=FRICTION_TORQUE_NM, viscous=float(scenario.params.viscous))


def ejection_separation_fn(model, horizon: float, max_segments: int):
    """``f(angles, stiffness, viscous, rtol) -> (t_sep, v_sep, theta_sep, ok)`` of our hybrid ejection model.

    Pure and jit/vmap/grad-compatible: separation is the first event where the phase goes rail -> flight.
    """
    import equinox as eqx
    import jax.numpy as jnp

    from ...integrate import SolverSettings
    from ...scenarios.ejection import FLIGHT, RAIL, simulate_ejection

    n = model.robot.n_joints

    def separation(angles, stiffness, viscous, rtol):
        m = eqx.tree_at(
            lambda mm: (mm.stiffness, mm.friction.viscous), model, (stiffness, jnp.broadcast_to(viscous, (n,)))
        )
        settings = SolverSettings(rtol=rtol, atol=rtol * 1e-2, n_save=2, max_steps=20_000, max_segments=max_segments)
        sol = simulate_ejection(m, angles, horizon, settings).solution
        hit = (sol.segment_mode_before.phase == RAIL) & (sol.segment_mode_after.phase == FLIGHT) & sol.segment_event
        i = jnp.argmax(hit)
        ok = jnp.any(hit) & (sol.status != 1)
        q, v = sol.segment_y.q[i], sol.segment_y.v[i]
        return sol.segment_end[i], model.rail_axis @ v[:3], q[7:], ok

    return separation


def bench_ejection(cfg: BenchConfig, progress: Progress) -> dict:
    """Ejection sims/s (single and batched) ours vs MuJoCo at equal accuracy, and the gradient cost."""
    import jax
    import jax.numpy as jnp

    res: dict = {}
    cases = ejection_cases(cfg)
    model, angles, stiffness, horizon = cases.model, cases.angles, cases.stiffness, cases.horizon
    n = angles.shape[0]
    viscous = jnp.asarray(cases.viscous)
    res.update(
        ejection_config="ejection_plane.toml", ejection_friction_model=cfg.ejection_friction, ejection_batch_size=n,
        ejection_horizon_s=horizon, ejection_accuracy_target=cfg.accuracy,
        ejection_stiffness_min_N_m=float(stiffness.min()), ejection_stiffness_max_N_m=float(stiffness.max()),
    )
    sep = ejection_separation_fn(model, horizon, cfg.ejection_max_segments)
    batched = jax.vmap(sep, in_axes=(0, 0, None, None))

    progress.stage("compile ejection (single, batched)")
    rtol0 = jnp.asarray(1e-8)
    single_c, res["ejection_compile_single_s"] = compile_timed(sep, angles[0], stiffness[0], viscous, rtol0)
    batch_c, res["ejection_compile_batched_s"] = compile_timed(batched, angles, stiffness, viscous, rtol0)
    progress.done()

    progress.stage("ejection reference and accuracy ladder")
    t_ref, v_ref, th_ref, ok_ref = (np.asarray(x) for x in batch_c(angles, stiffness, viscous, jnp.asarray(1e-11)))
    res["ejection_reference_failures"] = int(np.sum(~ok_ref))
    chosen_rtol, ladder = None, {}
    for rtol in cfg.rtol_ladder:
        _, v_b, _, ok_b = (np.asarray(x) for x in batch_c(angles, stiffness, viscous, jnp.asarray(rtol)))
        err = float(np.max(np.abs(v_b / v_ref - 1.0))) if ok_b.all() else float("inf")
        ladder[f"{rtol:.0e}"] = err
        if err <= cfg.accuracy:
            chosen_rtol = rtol
            break
    chosen_rtol = chosen_rtol or min(cfg.rtol_ladder)
    res["ejection_rtol"] = chosen_rtol
    res["ejection_velocity_rel_error_by_rtol"] = ladder
    res["ejection_velocity_rel_error"] = ladder.get(f"{chosen_rtol:.0e}", float("nan"))
    progress.done()

    progress.stage("time ejection (ours)")
    rt = jnp.asarray(chosen_rtol)
    t_single = timed(lambda: single_c(angles[0], stiffness[0], viscous, rt), cfg.ejection_repeats * 2)
    t_batch = timed(lambda: batch_c(angles, stiffness, viscous, rt), cfg.ejection_repeats)
    res["ejection_single_sim_s"] = t_single
    res["ejection_single_sims_per_s"] = 1.0 / t_single
    res["ejection_batched_s"] = t_batch
    res["ejection_batched_sims_per_s"] = n / t_batch
    progress.done()

    if not cfg.gradient:
        progress.write("gradient benchmark skipped (--quick); run `diffspace bench` for the gradient/forward ratio")
    else:
        progress.stage("compile and time the reverse-mode gradient")
        grad_fn = jax.grad(lambda a, k, b, r: sep(a, k, b, r)[1], argnums=(0, 1, 2))
        grad_c, res["ejection_gradient_compile_s"] = compile_timed(grad_fn, angles[0], stiffness[0], viscous, rt)
        t_fwd, t_grad = timed_together([lambda: single_c(angles[0], stiffness[0], viscous, rt),
                                         lambda: grad_c(angles[0], stiffness[0], viscous, rt)], cfg.ejection_repeats * 4)
        g = grad_c(angles[0], stiffness[0], viscous, rt)
        res["ejection_gradient_s"] = t_grad
        res["ejection_gradient_vs_forward"] = t_grad / t_fwd
        res["ejection_gradient_finite"] = bool(all(np.all(np.isfinite(np.asarray(x))) for x in g))
        res["ejection_gradient_dv_dtheta_m_s"] = np.asarray(g[0]).tolist()
        res["ejection_gradient_dv_dB"] = float(g[2])
        progress.done()

    progress.stage("MuJoCo ejection")
    try:
        import mujoco
    except ImportError:
        progress.write("mujoco not installed: skipping the MuJoCo ejection comparison (pip install mujoco)")
        res["mujoco"] = "not installed"
        progress.done()
        return res
    res.update(_bench_mujoco_ejection(cfg, cases, v_ref, th_ref))
    res["mujoco_version"] = mujoco.__version__
    res["ejection_single_vs_mujoco"] = res["ejection_single_sims_per_s"] / res["mujoco_single_sims_per_s"]
    res["ejection_batched_vs_mujoco"] = res["ejection_batched_sims_per_s"] / res["mujoco_batched_sims_per_s"]
    progress.done()
    return res


def _bench_mujoco_ejection(cfg, cases: EjectionCases, v_ref, th_ref) -> dict:
    """MuJoCo at the cheapest (integrator, timestep) within ``cfg.accuracy`` of its converged result, timed.

    Each engine's accuracy is measured against its own converged solution (ours: rtol 1e-11; MuJoCo: RK4
    at ``cfg.mujoco_reference_dt``), so a modelling difference between the engines cannot make the
    ladder fail; that difference is reported separately (``ejection_vs_mujoco_*``).
    """
    import mujoco

    from .mujoco_ejection import ejection_mujoco_model, mujoco_separation

    friction = cfg.ejection_friction == "hybrid"
    angles, stiffness = np.asarray(cases.angles), np.asarray(cases.stiffness)
    horizon, compression = cases.horizon, cases.compression

    def models(integrator, dt):
        base = ejection_mujoco_model(
            cases.robot, stiffness=float(stiffness[0]), compression=compression,
            frictionloss=cases.friction_torque * friction, damping=cases.viscous * friction, timestep=dt,
            integrator=integrator,
        )
        out = []
        for k in stiffness:
            model = copy.copy(base)  # MjModel's copy is a deep copy
            model.jnt_stiffness[0] = k
            out.append(model)
        return out

    def rel_error(v, ref):
        return float(np.max(np.abs(v / ref - 1.0))) if np.all(np.isfinite(v)) else float("inf")

    res: dict = {}
    reference = mujoco_separation(models("RK4", cfg.mujoco_reference_dt), angles, compression, horizon)
    v_mj = reference["v_m_s"]
    res["mujoco_reference_timestep_s"] = cfg.mujoco_reference_dt
    # cross-engine agreement of the two converged solutions (acceptance: velocity within 1 %,
    # joint-angle changes within 2 % or 0.2 deg)
    diff_v = np.abs(v_mj / v_ref - 1.0)
    diff_th = np.rad2deg(np.abs(reference["theta_rad"] - th_ref)).max(axis=1)
    named = min(len(angles), 5)
    res["ejection_vs_mujoco_velocity_max_rel_diff"] = float(np.max(diff_v))
    res["ejection_vs_mujoco_joint_angle_max_abs_diff_deg"] = float(np.max(diff_th))
    res["ejection_vs_mujoco_named_attitudes_velocity_max_rel_diff"] = float(np.max(diff_v[:named]))
    res["ejection_vs_mujoco_cases_differing"] = int(np.sum((diff_v > 1e-4) | (diff_th > 0.01)))
    res["ejection_vs_mujoco_worst_case"] = int(np.argmax(diff_v))

    cost = lambda item: (4 if item[0] == "RK4" else 1) / item[1]  # noqa: E731  (stages per simulated second)
    ladder, chosen = {}, None
    for integrator, dt in sorted(cfg.mujoco_ladder, key=cost):
        ms = models(integrator, dt)
        err = rel_error(mujoco_separation(ms, angles, compression, horizon)["v_m_s"], v_mj)
        ladder[f"{integrator}_{dt:.0e}"] = err
        if err <= cfg.accuracy:
            chosen = (integrator, dt, ms)
            break
    res["mujoco_velocity_rel_error_by_setting"] = ladder
    res["mujoco_accuracy_reached"] = chosen is not None
    if chosen is None:  # time the reference setting itself
        chosen = ("RK4", cfg.mujoco_reference_dt, models("RK4", cfg.mujoco_reference_dt))
        ladder[f"RK4_{cfg.mujoco_reference_dt:.0e}"] = 0.0
    integrator, dt, ms = chosen
    res["mujoco_integrator"] = integrator
    res["mujoco_timestep_s"] = dt
    res["mujoco_velocity_rel_error"] = ladder[f"{integrator}_{dt:.0e}"]
    data = mujoco.MjData(ms[0])
    t_single = timed(
        lambda: mujoco_separation(ms[0], angles[:1], compression, horizon, data), 2 * cfg.ejection_repeats
    )
    t_batch = timed(lambda: mujoco_separation(ms, angles, compression, horizon, data), cfg.ejection_repeats)
    res["mujoco_single_sim_s"] = t_single
    res["mujoco_single_sims_per_s"] = 1.0 / t_single
    res["mujoco_batched_s"] = t_batch
    res["mujoco_batched_sims_per_s"] = len(angles) / t_batch
    res["mujoco_steps_per_sim"] = int(math.ceil(horizon / dt))
    threads = os.cpu_count() or 1
    if threads > 1:
        datas = [mujoco.MjData(ms[0]) for _ in range(threads)]
        t_mt = timed(lambda: mujoco_separation(ms, angles, compression, horizon, datas), cfg.ejection_repeats)
        res["mujoco_batched_threads"] = threads
        res["mujoco_batched_multithread_sims_per_s"] = len(angles) / t_mt
    return res
