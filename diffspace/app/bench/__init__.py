r"""``diffspace bench``: speed against Pinocchio and MuJoCo on the same CPU, in the same process (SPEC 6).

Two parts, each skipped with a message when its reference engine is not installed:

**Rigid-body dynamics** (7-DOF floating arm ``configs/robots/generic_arm7.urdf``): ``jit(vmap(...))`` of
:func:`~diffspace.dynamics.forward_dynamics` and :func:`~diffspace.dynamics.mass_matrix` over a batch of
random states, per-sample time, against Pinocchio's ``aba`` and ``crba`` called once per state from
Python (Pinocchio is single-threaded; its per-call time includes the Python binding call, about what a
user pays). The single (un-batched) jitted call is timed too. Compile time is reported separately.

**Ejection** (SPEC 5.1, the in-rail phase of ``esd_arm7`` in plane mode: joints 1, 3, 5, 7 locked,
joints 2, 4, 6 with friction, spring ``k``/``l`` from the paper): simulations per second of our hybrid
model, one at a time (``jit``) and batched (``jit(vmap)`` over attitudes and spring stiffness), against
MuJoCo stepping the same model (slide joint + spring, ``frictionloss`` + ``damping``, see
:mod:`diffspace.io.mjcf`) with ``mujoco.rollout`` on one thread. Both run *to the same accuracy*: the
separation velocity of every case must be within ``accuracy`` (relative) of the engine's own converged
result (ours at ``rtol = 1e-11``, MuJoCo RK4 at a tiny timestep); the loosest ``rtol`` of ours and the
cheapest MuJoCo (integrator, timestep) meeting it are selected from ladders and then timed. The
agreement of the two converged results (the SPEC 5.1 cross-check on every batch case) is reported as
``ejection_vs_mujoco_*``. Both simulate the same
horizon (5 % past the slowest possible separation). The gradient (reverse mode, ``jax.grad`` of the
separation velocity w.r.t. the joint angles, the viscous coefficient ``B`` and the stiffness) is timed
against the forward simulation. Only reverse mode is used: ``jacfwd`` of batched Cholesky solves under
``vmap`` can deadlock XLA's CPU runtime (SPEC 7).

Results go to ``OUT/bench.json`` and ``OUT/summary.json`` (same content; times in seconds, ``_s``
suffix; ratios ``ours / reference`` are unitless). Timings are medians over repeats and indicative only
on a shared machine. ``quick`` uses small batches, few repeats, the frictionless ejection model (the
hybrid stick-slip model compiles several times slower) and skips the gradient (its compilation alone
takes longer than the rest of the quick run).
"""

from __future__ import annotations

import copy
import json
import math
import os
import platform
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from ...io.packaged import ROBOTS_DIR

ROBOTS = ROBOTS_DIR
FD_ROBOT = ROBOTS / "generic_arm7.urdf"
EJECTION_ROBOT = ROBOTS / "esd_arm7.toml"

# SPEC 5.1 ejection parameters; static = Coulomb friction because MuJoCo has one friction level
STIFFNESS_N_M = 812.7
COMPRESSION_M = 0.086
FRICTION_TORQUE_NM = 2.0
VISCOUS_NMS = 5.4
PLANE_LOCKED = (0, 2, 4, 6)  # joints 1, 3, 5, 7
PLANE_FREE = (1, 3, 5)  # joints 2, 4, 6


@dataclass
class BenchConfig:
    """Sizes of the benchmark; :meth:`quick` is the ``--quick`` preset, the defaults the full run."""

    fd_batch: int = 1024
    fd_repeats: int = 20
    pin_calls: int = 5000
    ejection: bool = True
    ejection_friction: str = "hybrid"  # "hybrid" (stick-slip) or "none"
    ejection_batch: int = 64
    ejection_repeats: int = 5
    ejection_max_segments: int = 8
    accuracy: float = 1e-6  # relative error of the separation velocity both engines must reach
    rtol_ladder: tuple = (1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9)
    mujoco_ladder: tuple = (
        ("implicitfast", 1e-3), ("RK4", 2e-3), ("RK4", 1e-3), ("implicitfast", 2e-4), ("RK4", 5e-4),
        ("implicitfast", 1e-4), ("RK4", 2e-4), ("RK4", 1e-4),
    )
    mujoco_reference_dt: float = 5e-5  # RK4; MuJoCo's converged result
    gradient: bool = True
    scenarios: bool = True  # first-call compile of every scenario (bench_scenarios; minutes on 2 cores)
    seed: int = 0
    extra: dict = field(default_factory=dict)

    @classmethod
    def quick(cls) -> "BenchConfig":
        return cls(
            fd_batch=256, fd_repeats=5, pin_calls=1000, ejection_friction="none", ejection_batch=8,
            ejection_repeats=3, ejection_max_segments=3, rtol_ladder=(1e-5, 1e-6, 1e-7, 1e-8), gradient=False,
            scenarios=False,
            mujoco_reference_dt=1e-4,
        )


# ----------------------------------------------------------------------------- helpers
class _Progress:
    """tqdm bar over the benchmark stages when tqdm is installed, plain lines otherwise."""

    def __init__(self, total: int, enabled: bool = True):
        self.bar = None
        self.enabled = enabled
        if enabled:
            try:
                from tqdm import tqdm

                self.bar = tqdm(total=total, desc="bench", unit="stage", file=sys.stderr, leave=False)
            except ImportError:
                pass

    def stage(self, text: str) -> None:
        if self.bar is not None:
            self.bar.set_postfix_str(text)
        elif self.enabled:
            print(f"  ... {text}", file=sys.stderr, flush=True)

    def done(self) -> None:
        if self.bar is not None:
            self.bar.update(1)

    def write(self, text: str) -> None:
        if self.bar is not None:
            self.bar.write(text)
        else:
            print(text, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _timed(fn: Callable, repeats: int) -> float:
    """Median wall time of ``fn()`` (blocking on JAX results) over ``repeats`` calls after one warm-up call."""
    return _timed_together([fn], repeats)[0]


def _timed_together(fns: list[Callable], repeats: int) -> list[float]:
    """Median wall times of several functions called in turn (interleaved, so a load change on the machine
    affects all alike: the right way to measure a cost ratio), after one warm-up call of each."""
    import jax

    for fn in fns:
        jax.block_until_ready(fn())
    times = [[] for _ in fns]
    for _ in range(max(1, repeats)):
        for fn, log in zip(fns, times):
            t0 = time.perf_counter()
            jax.block_until_ready(fn())
            log.append(time.perf_counter() - t0)
    return [float(np.median(t)) for t in times]


def _compile(fn, *args):
    """AOT-compile ``jit(fn)`` for ``args``; returns the compiled callable and the trace+compile time."""
    import jax

    t0 = time.perf_counter()
    compiled = jax.jit(fn).lower(*args).compile()
    return compiled, time.perf_counter() - t0


def _random_states(robot, batch: int, rng: np.random.Generator):
    n = robot.n_joints
    quat = rng.normal(size=(batch, 4))
    quat /= np.linalg.norm(quat, axis=1, keepdims=True)
    q = np.concatenate([rng.normal(size=(batch, 3)), quat, rng.uniform(-np.pi, np.pi, (batch, n))], axis=1)
    v = rng.normal(size=(batch, 6 + n))
    tau = rng.normal(size=(batch, 6 + n)) * 5.0
    return q, v, tau


# ----------------------------------------------------------------------------- rigid-body dynamics
def bench_dynamics(cfg: BenchConfig, progress: _Progress) -> dict:
    """Batched forward dynamics and mass matrix vs Pinocchio ``aba``/``crba`` (7-DOF floating arm)."""
    import jax
    import jax.numpy as jnp

    from ... import forward_dynamics, load_robot, mass_matrix

    robot = load_robot(FD_ROBOT)
    rng = np.random.default_rng(cfg.seed)
    q, v, tau = _random_states(robot, cfg.fd_batch, rng)
    qj, vj, tj = jnp.asarray(q), jnp.asarray(v), jnp.asarray(tau)
    res: dict = {"fd_robot": FD_ROBOT.name, "fd_batch_size": cfg.fd_batch, "fd_nv": robot.nv}

    progress.stage("compile batched forward dynamics")
    fd_batched = jax.vmap(forward_dynamics, in_axes=(None, 0, 0, 0))
    fd_c, res["forward_dynamics_compile_s"] = _compile(fd_batched, robot, qj, vj, tj)
    mm_c, res["mass_matrix_compile_s"] = _compile(jax.vmap(mass_matrix, in_axes=(None, 0)), robot, qj)
    fd1_c, res["forward_dynamics_single_compile_s"] = _compile(forward_dynamics, robot, qj[0], vj[0], tj[0])
    progress.done()

    progress.stage(f"time batched forward dynamics (batch {cfg.fd_batch})")
    res["forward_dynamics_batch_s"] = _timed(lambda: fd_c(robot, qj, vj, tj), cfg.fd_repeats)
    res["forward_dynamics_per_sample_s"] = res["forward_dynamics_batch_s"] / cfg.fd_batch
    res["mass_matrix_batch_s"] = _timed(lambda: mm_c(robot, qj), cfg.fd_repeats)
    res["mass_matrix_per_sample_s"] = res["mass_matrix_batch_s"] / cfg.fd_batch
    res["forward_dynamics_single_call_s"] = _timed(
        lambda: fd1_c(robot, qj[0], vj[0], tj[0]), 10 * cfg.fd_repeats
    )
    accel = np.asarray(fd_c(robot, qj, vj, tj))
    progress.done()

    progress.stage("time Pinocchio aba/crba")
    try:
        import pinocchio  # noqa: F401
    except ImportError:
        progress.write("pinocchio not installed: skipping the Pinocchio comparison (pip install pin)")
        res["pinocchio"] = "not installed"
        progress.done()
        return res
    from ...io.pinocchio import PinocchioModel

    ref = PinocchioModel(FD_ROBOT, robot)
    pin, model, data = ref.pin, ref.model, ref.data
    calls = min(cfg.pin_calls, cfg.fd_batch)
    qs = [ref.q(q[i]) for i in range(calls)]
    vs = [ref.v(v[i]) for i in range(calls)]
    ts = [ref.v(tau[i]) for i in range(calls)]
    diff = max(
        float(np.max(np.abs(pin.aba(model, data, qs[i], vs[i], ts[i])[ref.v_perm] - accel[i])))
        for i in range(min(calls, 20))
    )
    res["forward_dynamics_max_abs_diff_vs_pinocchio"] = diff
    repeats = max(3, cfg.pin_calls // calls)

    def loop_aba():
        for i in range(calls):
            pin.aba(model, data, qs[i], vs[i], ts[i])

    def loop_crba():
        for i in range(calls):
            pin.crba(model, data, qs[i])

    res["pinocchio_aba_per_call_s"] = _timed(loop_aba, repeats) / calls
    res["pinocchio_crba_per_call_s"] = _timed(loop_crba, repeats) / calls
    res["pinocchio_version"] = pin.__version__
    aba, crba = res["pinocchio_aba_per_call_s"], res["pinocchio_crba_per_call_s"]
    res["forward_dynamics_per_sample_vs_pinocchio_aba"] = res["forward_dynamics_per_sample_s"] / aba
    res["mass_matrix_per_sample_vs_pinocchio_crba"] = res["mass_matrix_per_sample_s"] / crba
    res["forward_dynamics_single_call_vs_pinocchio_aba"] = res["forward_dynamics_single_call_s"] / aba
    progress.done()
    return res


# ----------------------------------------------------------------------------- ejection
def _ejection_cases(cfg: BenchConfig):
    """The locked plane-mode robot, the hybrid model and a batch of (joint angles, stiffness) cases."""
    import jax.numpy as jnp

    from ...actuation.friction import JointFriction
    from ...io import load_robot
    from ...scenarios.ejection import EjectionModel

    full = load_robot(EJECTION_ROBOT)
    names = [name for name, _ in full.attitudes]
    atts = np.stack([np.asarray(full.attitude(name)) for name in names])
    locked = np.array(PLANE_LOCKED)
    if not np.allclose(atts[:, locked], atts[0, locked]):
        raise ValueError("bench: the ejection attitudes must share the locked joints' angles (plane mode)")
    robot = full.lock(list(PLANE_LOCKED), atts[0, locked])
    free_atts = atts[:, np.array(PLANE_FREE)]
    friction = JointFriction.uniform(
        robot.n_joints, FRICTION_TORQUE_NM, FRICTION_TORQUE_NM, VISCOUS_NMS, cfg.ejection_friction
    )
    model = EjectionModel.build(robot, friction, STIFFNESS_N_M, COMPRESSION_M, [0.0, 0.0, 1.0], "plane")
    rng = np.random.default_rng(cfg.seed)
    n = cfg.ejection_batch
    angles = free_atts[np.arange(n) % len(free_atts)] + np.deg2rad(rng.uniform(-10.0, 10.0, (n, robot.n_joints)))
    angles[: min(n, len(free_atts))] = free_atts[: min(n, len(free_atts))]  # the named attitudes themselves
    stiffness = STIFFNESS_N_M * rng.uniform(0.85, 1.15, n)
    stiffness[: min(n, len(free_atts))] = STIFFNESS_N_M
    mass = float(robot.total_mass)
    horizon = 1.05 * 0.5 * math.pi * math.sqrt(mass / stiffness.min())  # past the slowest separation
    return robot, model, jnp.asarray(angles), jnp.asarray(stiffness), horizon, names


def ejection_separation_fn(model, horizon: float, max_segments: int):
    """``f(angles, stiffness, viscous, rtol) -> (t_sep, v_sep, theta_sep, ok)`` of our hybrid ejection model.

    Pure and jit/vmap/grad-compatible: separation is the first event where the phase goes rail -> flight.
    """
    import equinox as eqx
    import jax.numpy as jnp

    from ...scenarios.ejection import FLIGHT, RAIL, simulate_ejection

    n = model.robot.n_joints

    def separation(angles, stiffness, viscous, rtol):
        m = eqx.tree_at(
            lambda mm: (mm.stiffness, mm.friction.viscous), model, (stiffness, jnp.broadcast_to(viscous, (n,)))
        )
        sol = simulate_ejection(
            m, angles, horizon, n_save=2, rtol=rtol, atol=rtol * 1e-2, max_segments=max_segments
        ).solution
        hit = (sol.segment_mode_before[0] == RAIL) & (sol.segment_mode_after[0] == FLIGHT) & sol.segment_event
        i = jnp.argmax(hit)
        ok = jnp.any(hit) & (sol.status != 1)
        q, v = sol.segment_y[0][i], sol.segment_y[1][i]
        return sol.segment_end[i], model.rail_axis @ v[:3], q[7:], ok

    return separation


def bench_ejection(cfg: BenchConfig, progress: _Progress) -> dict:
    """Ejection sims/s (single and batched) ours vs MuJoCo at equal accuracy, and the gradient cost."""
    import jax
    import jax.numpy as jnp

    res: dict = {}
    robot, model, angles, stiffness, horizon, names = _ejection_cases(cfg)
    n = angles.shape[0]
    viscous = jnp.asarray(VISCOUS_NMS)
    res.update(
        ejection_robot=EJECTION_ROBOT.name, ejection_friction_model=cfg.ejection_friction, ejection_batch_size=n,
        ejection_horizon_s=horizon, ejection_accuracy_target=cfg.accuracy,
        ejection_stiffness_min_N_m=float(stiffness.min()), ejection_stiffness_max_N_m=float(stiffness.max()),
    )
    sep = ejection_separation_fn(model, horizon, cfg.ejection_max_segments)
    batched = jax.vmap(sep, in_axes=(0, 0, None, None))

    progress.stage("compile ejection (single, batched)")
    rtol0 = jnp.asarray(1e-8)
    single_c, res["ejection_compile_single_s"] = _compile(sep, angles[0], stiffness[0], viscous, rtol0)
    batch_c, res["ejection_compile_batched_s"] = _compile(batched, angles, stiffness, viscous, rtol0)
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
    t_single = _timed(lambda: single_c(angles[0], stiffness[0], viscous, rt), cfg.ejection_repeats * 2)
    t_batch = _timed(lambda: batch_c(angles, stiffness, viscous, rt), cfg.ejection_repeats)
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
        grad_c, res["ejection_gradient_compile_s"] = _compile(grad_fn, angles[0], stiffness[0], viscous, rt)
        t_fwd, t_grad = _timed_together([lambda: single_c(angles[0], stiffness[0], viscous, rt),
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
    res.update(_bench_mujoco_ejection(cfg, robot, np.asarray(angles), np.asarray(stiffness), horizon, v_ref, th_ref))
    res["mujoco_version"] = mujoco.__version__
    res["ejection_single_vs_mujoco"] = res["ejection_single_sims_per_s"] / res["mujoco_single_sims_per_s"]
    res["ejection_batched_vs_mujoco"] = res["ejection_batched_sims_per_s"] / res["mujoco_batched_sims_per_s"]
    progress.done()
    return res


def _bench_mujoco_ejection(cfg, robot, angles, stiffness, horizon, v_ref, th_ref) -> dict:
    """MuJoCo at the cheapest (integrator, timestep) within ``cfg.accuracy`` of its converged result, timed.

    Each engine's accuracy is measured against its own converged solution (ours: rtol 1e-11; MuJoCo: RK4
    at ``cfg.mujoco_reference_dt``), so a modelling difference between the engines cannot make the
    ladder fail; that difference is reported separately (``ejection_vs_mujoco_*``).
    """
    import mujoco

    from ...io.mjcf import ejection_mujoco_model, mujoco_separation

    friction = cfg.ejection_friction == "hybrid"

    def models(integrator, dt):
        base = ejection_mujoco_model(
            robot, stiffness=STIFFNESS_N_M, compression=COMPRESSION_M, frictionloss=FRICTION_TORQUE_NM * friction,
            damping=VISCOUS_NMS * friction, timestep=dt, integrator=integrator,
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
    reference = mujoco_separation(models("RK4", cfg.mujoco_reference_dt), angles, COMPRESSION_M, horizon)
    v_mj = reference["v_m_s"]
    res["mujoco_reference_timestep_s"] = cfg.mujoco_reference_dt
    # cross-engine agreement of the two converged solutions (SPEC 5.1 asks 1 % / 2 % or 0.2 deg)
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
        err = rel_error(mujoco_separation(ms, angles, COMPRESSION_M, horizon)["v_m_s"], v_mj)
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
    t_single = _timed(
        lambda: mujoco_separation(ms[0], angles[:1], COMPRESSION_M, horizon, data), 2 * cfg.ejection_repeats
    )
    t_batch = _timed(lambda: mujoco_separation(ms, angles, COMPRESSION_M, horizon, data), cfg.ejection_repeats)
    res["mujoco_single_sim_s"] = t_single
    res["mujoco_single_sims_per_s"] = 1.0 / t_single
    res["mujoco_batched_s"] = t_batch
    res["mujoco_batched_sims_per_s"] = len(angles) / t_batch
    res["mujoco_steps_per_sim"] = int(math.ceil(horizon / dt))
    threads = os.cpu_count() or 1
    if threads > 1:
        datas = [mujoco.MjData(ms[0]) for _ in range(threads)]
        t_mt = _timed(lambda: mujoco_separation(ms, angles, COMPRESSION_M, horizon, datas), cfg.ejection_repeats)
        res["mujoco_batched_threads"] = threads
        res["mujoco_batched_multithread_sims_per_s"] = len(angles) / t_mt
    return res


# ----------------------------------------------------------------------------- entry point
def _summary_lines(res: dict) -> list[str]:
    f = lambda key, scale=1e6, unit="us": (  # noqa: E731
        f"{res[key] * scale:.3g} {unit}" if isinstance(res.get(key), (int, float)) else "n/a"
    )
    lines = ["", "diffspace bench" + (" (quick)" if res.get("quick") else "")]
    if "forward_dynamics_per_sample_s" in res:
        lines += [
            f"  compile: forward dynamics {f('forward_dynamics_compile_s', 1, 's')}, mass matrix "
            f"{f('mass_matrix_compile_s', 1, 's')}",
            f"  forward dynamics, batch {res['fd_batch_size']}: {f('forward_dynamics_per_sample_s')}/sample; "
            f"single jitted call {f('forward_dynamics_single_call_s')}; "
            f"Pinocchio aba {f('pinocchio_aba_per_call_s')}/call",
            f"  mass matrix, batch {res['fd_batch_size']}: {f('mass_matrix_per_sample_s')}/sample; Pinocchio crba "
            f"{f('pinocchio_crba_per_call_s')}/call "
            f"(ratio {res.get('mass_matrix_per_sample_vs_pinocchio_crba', float('nan')):.3g})",
        ]
    if "ejection_single_sims_per_s" in res:
        lines += [
            f"  ejection ({res['ejection_friction_model']} friction) compile: "
            f"single {f('ejection_compile_single_s', 1, 's')}, "
            f"batched {f('ejection_compile_batched_s', 1, 's')}, gradient {f('ejection_gradient_compile_s', 1, 's')}",
            f"  ejection to {res['ejection_accuracy_target']:.0e} separation-velocity accuracy: ours rtol "
            f"{res['ejection_rtol']:.0e}: {res['ejection_single_sims_per_s']:.3g} sims/s single, "
            f"{res['ejection_batched_sims_per_s']:.3g} sims/s batched ({res['ejection_batch_size']})",
        ]
        if "mujoco_single_sims_per_s" in res:
            lines.append(
                f"  MuJoCo {res['mujoco_integrator']} dt {res['mujoco_timestep_s']:.0e} s: "
                f"{res['mujoco_single_sims_per_s']:.3g} sims/s single, {res['mujoco_batched_sims_per_s']:.3g} sims/s "
                f"batched (1 thread); ours/MuJoCo batched {res['ejection_batched_vs_mujoco']:.3g}"
            )
        if "mujoco_batched_multithread_sims_per_s" in res:
            lines.append(
                f"  MuJoCo batched on {res['mujoco_batched_threads']} threads: "
                f"{res['mujoco_batched_multithread_sims_per_s']:.3g} sims/s"
            )
        if "ejection_vs_mujoco_velocity_max_rel_diff" in res:
            lines.append(
                f"  ours vs MuJoCo (converged): separation velocity max rel. diff "
                f"{res['ejection_vs_mujoco_velocity_max_rel_diff']:.2g}, joint angles "
                f"{res['ejection_vs_mujoco_joint_angle_max_abs_diff_deg']:.2g} deg, "
                f"{res['ejection_vs_mujoco_cases_differing']} of {res['ejection_batch_size']} cases differ"
            )
        if "ejection_gradient_vs_forward" in res:
            lines.append(f"  gradient / forward cost: {res['ejection_gradient_vs_forward']:.3g}")
    if "forward_dynamics_per_sample_vs_pinocchio_aba" in res:
        lines.append(
            f"  forward dynamics per sample / Pinocchio aba: {res['forward_dynamics_per_sample_vs_pinocchio_aba']:.3g}"
        )
    if "scenario_compile" in res:
        from .scenarios import summary_lines

        lines += summary_lines(res["scenario_compile"])
    return lines


def run_bench(quick: bool = False, out: Path | str = Path("runs/bench"), config: BenchConfig | None = None,
              progress: bool = True) -> dict:
    """Run the benchmark, write ``out/bench.json`` and ``out/summary.json``, print a summary; return the dict."""
    import jax

    cfg = config or (BenchConfig.quick() if quick else BenchConfig())
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    res: dict = {
        "quick": bool(quick),
        "jax_version": jax.__version__,
        "jax_backend": jax.default_backend(),
        "cpu_count": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "x64": bool(jax.config.jax_enable_x64),
        "config": {k: v for k, v in asdict(cfg).items() if k != "extra"},
    }
    from .scenarios import PROBES, scenario_compile_times

    stages = 3 + (4 + int(cfg.gradient) if cfg.ejection else 0) + (len(PROBES) if cfg.scenarios else 0)
    bar = _Progress(stages, enabled=progress)
    t0 = time.perf_counter()
    try:
        res.update(bench_dynamics(cfg, bar))
        if cfg.ejection:
            res.update(bench_ejection(cfg, bar))
        if cfg.scenarios:
            res["scenario_compile"] = scenario_compile_times(cfg.gradient, bar)
    finally:
        bar.close()
    res["total_wall_s"] = time.perf_counter() - t0
    text = json.dumps(_jsonable(res), indent=2)
    (out / "bench.json").write_text(text)
    (out / "summary.json").write_text(text)
    try:
        _plot(res, out / "bench.png")
    except Exception as err:  # a plot must never lose the measurements
        print(f"warning: bench plot not written ({err})", file=sys.stderr)
    for line in _summary_lines(res):
        print(line)
    print(f"results written to {out}/bench.json")
    if "forward_dynamics_per_sample_vs_pinocchio_aba" in res:
        ratio = res["forward_dynamics_per_sample_vs_pinocchio_aba"]
        print(f"forward_dynamics_per_sample_vs_pinocchio_aba = {ratio:.3f}")
    return res


def _plot(res: dict, path: Path) -> None:
    """Bar charts: per-sample dynamics times (ours vs Pinocchio) and ejection sims/s (ours vs MuJoCo)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker  # noqa: F401

    panels = [
        ("time per sample [us]", 1e6, [
            ("FD ours (vmap)", "forward_dynamics_per_sample_s"), ("Pinocchio aba", "pinocchio_aba_per_call_s"),
            ("H ours (vmap)", "mass_matrix_per_sample_s"), ("Pinocchio crba", "pinocchio_crba_per_call_s"),
        ]),
        ("ejection simulations per second", 1.0, [
            ("ours single", "ejection_single_sims_per_s"), ("ours batched", "ejection_batched_sims_per_s"),
            ("MuJoCo single", "mujoco_single_sims_per_s"), ("MuJoCo batched", "mujoco_batched_sims_per_s"),
        ]),
    ]
    panels = [
        (title, scale, [(lab, res[k] * scale) for lab, k in bars if isinstance(res.get(k), (int, float))])
        for title, scale, bars in panels
    ]
    panels = [p for p in panels if p[2]]
    fig, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 3), squeeze=False)
    for ax, (title, _, bars) in zip(axes[0], panels):
        labels, values = zip(*bars)
        ax.barh(labels, values, color=["tab:blue" if "ours" in lab else "tab:gray" for lab in labels])
        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        for y, value in enumerate(values):
            ax.text(value, y, f" {value:.3g}", va="center", fontsize=8)
        ax.set_xlim(min(values) / 2, max(values) * 4)
        ax.set_xlabel(title)
        ax.grid(alpha=0.3, axis="x")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _jsonable(x):
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, (np.floating, np.integer, np.bool_)):
        return x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return None if math.isnan(x) else ("inf" if x > 0 else "-inf")
    return x
