r"""``diffspace bench --gpu``: throughput against batch size on the default JAX device (a GPU where one is
installed), in one command that fits 10 minutes on one GPU.

Measured, with every compile time reported separately from the run time (``*_compile_s``):

* **Ejection sims/s against batch size**: the bench's in-rail separation (the air-table ejection of
  ``ejection_plane.toml`` with the hybrid stick-slip friction, static = Coulomb, rtol 1e-6: the CPU bench's
  1e-6 accuracy setting) under ``jit(vmap)``, one compile per batch size; ``ok`` counts the cases that separated.
* **Gradients/s**: ``vmap(grad)`` (reverse mode) of the separation velocity with respect to the joint angles,
  the spring stiffness and the viscous coefficient.
* **Forward dynamics ns/sample against batch size**: ``jit(vmap(forward_dynamics))`` (ABA) of the 7-joint
  floating arm ``generic_arm7.urdf`` at random states.
* **A Monte-Carlo campaign end to end**: ``diffspace montecarlo configs/ejection_montecarlo.toml`` in this
  process without the compilation cache (``samples`` and ``chunk_size`` set by the mode), its wall time and
  the campaign's own stage times (simulations with their compile, statistics, nominal run and local
  sensitivities, plots).
* **MuJoCo on this machine's CPU threads** for the ratio: ``mujoco.rollout`` of the same cases (RK4,
  1e-4 s, the CPU bench's choice at 1e-6 accuracy), all threads, and the largest relative difference of the
  separation velocity from ours.

``quick`` (``--gpu --quick``, run on the CPU in CI) keeps the structure with small batches; its numbers
only show that the bench works. Results: ``bench.json`` / ``summary.json`` under ``"device_scaling"`` and
``scaling.png``.
"""

from __future__ import annotations

import dataclasses
import tempfile
import time
from pathlib import Path

import numpy as np

from ...design.timing import time_line
from .common import BenchConfig, Progress, compile_timed, timed

RTOL = 1e-6
MUJOCO_SETTING = ("RK4", 1e-4)


@dataclasses.dataclass(frozen=True)
class ScalingConfig:
    """Sizes of ``--gpu``; :meth:`quick` keeps every part with small batches."""

    ejection_batches: tuple[int, ...] = (2048, 8192, 65536)
    gradient_batch: int = 8192
    fd_batches: tuple[int, ...] = (1024, 16384, 262144, 1048576)
    montecarlo_samples: int = 2048
    montecarlo_chunk: int = 16384
    mujoco_batch: int = 256
    repeats: int = 3
    friction: str = "hybrid"  # the ejection's friction model ("none": frictionless, compiles several times faster)
    montecarlo_sensitivity: tuple[str, ...] = ("local", "sobol")  # the config's own

    @classmethod
    def quick(cls) -> "ScalingConfig":
        return cls(ejection_batches=(4, 16), gradient_batch=4, fd_batches=(16, 256), montecarlo_samples=4,
                   montecarlo_chunk=32, mujoco_batch=4, repeats=1, friction="none", montecarlo_sensitivity=("sobol",))


def _separation(batch: int, friction: str):
    """The bench's batched separation function and its cases (``ejection_cases``) for ``batch`` cases."""
    import jax

    from .ejection import ejection_cases, ejection_separation_fn

    cases = ejection_cases(BenchConfig(ejection_batch=batch, ejection_friction=friction))
    separation = ejection_separation_fn(cases.model, cases.horizon, BenchConfig().ejection_max_segments)
    return cases, separation, jax.vmap(separation, in_axes=(0, 0, None, None))


def bench_ejection_batches(cfg: ScalingConfig) -> dict:
    """Sims/s and compile time per batch size; the largest batch's velocities for the MuJoCo comparison."""
    import jax.numpy as jnp

    rows, velocities = [], None
    for batch in cfg.ejection_batches:
        cases, _, batched = _separation(batch, cfg.friction)
        args = (cases.angles, cases.stiffness, jnp.asarray(cases.viscous), jnp.asarray(RTOL))
        compiled, compile_s = compile_timed(batched, *args)
        run_s = timed(lambda: compiled(*args), cfg.repeats)
        _, v, _, ok = (np.asarray(x) for x in compiled(*args))
        rows.append({"batch": batch, "compile_s": compile_s, "run_s": run_s, "sims_per_s": batch / run_s,
                     "ok": int(ok.sum())})
        velocities = v
    return {"ejection": rows, "_velocities": velocities}


def bench_gradients(cfg: ScalingConfig) -> dict:
    """Reverse-mode gradients of the separation velocity per second (``vmap(grad)``)."""
    import jax
    import jax.numpy as jnp

    cases, separation, _ = _separation(cfg.gradient_batch, cfg.friction)
    grad = jax.vmap(jax.grad(lambda a, k, b, r: separation(a, k, b, r)[1], argnums=(0, 1, 2)),
                    in_axes=(0, 0, None, None))
    args = (cases.angles, cases.stiffness, jnp.asarray(cases.viscous), jnp.asarray(RTOL))
    compiled, compile_s = compile_timed(grad, *args)
    run_s = timed(lambda: compiled(*args), cfg.repeats)
    finite = all(bool(np.all(np.isfinite(np.asarray(g)))) for g in compiled(*args))
    return {"gradient": {"batch": cfg.gradient_batch, "compile_s": compile_s, "run_s": run_s,
                         "gradients_per_s": cfg.gradient_batch / run_s, "finite": finite}}


def bench_forward_dynamics(cfg: ScalingConfig) -> dict:
    """ABA per-sample time of the 7-joint floating arm against batch size."""
    import jax
    import jax.numpy as jnp

    from ... import forward_dynamics, load_robot
    from .kernels import ARM, random_states

    robot = load_robot(ARM)
    rows = []
    fd = jax.vmap(lambda q, v, tau: forward_dynamics(robot, q, v, tau, "aba"))
    for batch in cfg.fd_batches:
        args = tuple(jnp.asarray(x) for x in random_states(robot, batch, 0))
        compiled, compile_s = compile_timed(fd, *args)
        run_s = timed(lambda: compiled(*args), max(cfg.repeats, 3))
        rows.append({"batch": batch, "compile_s": compile_s, "ns_per_sample": 1e9 * run_s / batch})
    return {"forward_dynamics": rows}


def bench_montecarlo(cfg: ScalingConfig) -> dict:
    """``diffspace montecarlo configs/ejection_montecarlo.toml`` end to end, without the compilation cache."""
    import contextlib
    import io
    import json

    from ...io.packaged import packaged_config
    from ..cli import main

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "mc"
        args = ["montecarlo", str(packaged_config("ejection_montecarlo.toml")), "--out", str(out), "--quiet", "--no-cache",
                "--set", f"montecarlo.samples={cfg.montecarlo_samples}",
                "--set", f"montecarlo.chunk_size={cfg.montecarlo_chunk}",
                "--set", f"montecarlo.sensitivity={json.dumps(list(cfg.montecarlo_sensitivity))}"]
        t0 = time.perf_counter()
        console = io.StringIO()  # the campaign's own console lines: kept out of the bench's
        with contextlib.redirect_stdout(console), contextlib.redirect_stderr(console):
            code = main(args)
        wall_s = time.perf_counter() - t0
        summary = json.loads((out / "summary.json").read_text()) if code == 0 else {}
    return {"montecarlo": {"config": "ejection_montecarlo.toml", "exit_code": code, "samples": cfg.montecarlo_samples,
                           "sensitivity": list(cfg.montecarlo_sensitivity),
                           "runs": summary.get("runs"), "failed_runs": summary.get("failed_runs"),
                           "chunk_size": cfg.montecarlo_chunk, "wall_s": wall_s, "time_s": summary.get("time_s"),
                           **({} if code == 0 else {"console": console.getvalue()[-2000:]})}}


def bench_mujoco_threads(cfg: ScalingConfig, ours_v: np.ndarray | None) -> dict:
    """MuJoCo on all CPU threads for the first ``mujoco_batch`` cases of the largest ejection batch."""
    try:
        import mujoco
    except ImportError:
        return {"mujoco": "not installed"}
    import os

    from .common import FRICTION_TORQUE_NM
    from .mujoco_ejection import ejection_mujoco_model, mujoco_separation

    cases, _, _ = _separation(max(cfg.ejection_batches), cfg.friction)
    n = min(cfg.mujoco_batch, len(cases.stiffness))
    angles, stiffness = np.asarray(cases.angles)[:n], np.asarray(cases.stiffness)[:n]
    integrator, dt = MUJOCO_SETTING
    friction = cfg.friction == "hybrid"
    models = []
    for k in stiffness:
        models.append(ejection_mujoco_model(
            cases.robot, stiffness=float(k), compression=cases.compression, frictionloss=FRICTION_TORQUE_NM * friction,
            damping=cases.viscous * friction, timestep=dt, integrator=integrator))
    threads = os.cpu_count() or 1
    datas = [mujoco.MjData(models[0]) for _ in range(threads)]
    run = lambda: mujoco_separation(models, angles, cases.compression, cases.horizon, datas)  # noqa: E731
    run_s = timed(run, cfg.repeats)
    v = run()["v_m_s"]
    row = {"integrator": integrator, "timestep_s": dt, "threads": threads, "batch": n, "sims_per_s": n / run_s}
    if ours_v is not None:
        row["velocity_max_rel_diff_from_ours"] = float(np.max(np.abs(v / ours_v[:n] - 1.0)))
    return {"mujoco": row}


def run_scaling(quick: bool, progress: Progress) -> dict:
    """Every part of ``--gpu`` (module text), in order; the device JAX computed on is recorded."""
    import jax

    cfg = ScalingConfig.quick() if quick else ScalingConfig()
    device = jax.devices()[0]
    res: dict = {"device": f"{device.platform}: {device.device_kind}", "config": dataclasses.asdict(cfg)}
    if device.platform == "cpu":
        progress.write("note: no GPU visible to JAX; the scaling bench runs on the CPU")
    for text, part in (("ejection sims/s against batch size", lambda: bench_ejection_batches(cfg)),
                       ("batched reverse-mode gradients", lambda: bench_gradients(cfg)),
                       ("forward dynamics against batch size", lambda: bench_forward_dynamics(cfg)),
                       ("a Monte-Carlo campaign end to end", lambda: bench_montecarlo(cfg)),
                       ("MuJoCo on the CPU threads", lambda: bench_mujoco_threads(cfg, res.pop("_velocities")))):
        progress.stage(text)
        res.update(part())
        progress.done()
    best = max(res["ejection"], key=lambda r: r["sims_per_s"])
    if isinstance(res.get("mujoco"), dict):
        res["ejection_vs_mujoco_threads"] = best["sims_per_s"] / res["mujoco"]["sims_per_s"]
    return res


def scaling_lines(res: dict) -> list[str]:
    """The console summary of ``--gpu``."""
    lines = [f"  device: {res['device']}"]
    for r in res["ejection"]:
        lines.append(f"  ejection batch {r['batch']:>7d}: {r['sims_per_s']:10.4g} sims/s ({r['ok']} of {r['batch']} "
                     f"separated; compile {r['compile_s']:.1f} s)")
    g = res["gradient"]
    lines.append(f"  gradients batch {g['batch']:>6d}: {g['gradients_per_s']:10.4g} gradients/s (compile "
                 f"{g['compile_s']:.1f} s)")
    lines += [f"  forward dynamics batch {r['batch']:>8d}: {r['ns_per_sample']:8.4g} ns/sample" for r in res["forward_dynamics"]]
    mc = res["montecarlo"]
    stages = time_line(mc["time_s"]) if mc["time_s"] else f"exit code {mc['exit_code']}"
    lines.append(f"  Monte-Carlo {mc['config']} ({mc['runs']} runs): {mc['wall_s']:.1f} s wall; {stages}")
    if isinstance(res.get("mujoco"), dict):
        m = res["mujoco"]
        lines.append(f"  MuJoCo {m['integrator']} {m['timestep_s']:.0e} s on {m['threads']} threads: "
                     f"{m['sims_per_s']:.4g} sims/s; ours/MuJoCo {res['ejection_vs_mujoco_threads']:.3g}; velocity "
                     f"within {m.get('velocity_max_rel_diff_from_ours', float('nan')):.2g} of ours")
    return lines


def plot_scaling(res: dict, path: Path) -> None:
    """``scaling.png``: ejection sims/s and forward-dynamics ns/sample against batch size (log-log), MuJoCo's
    multi-threaded rate as a line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.6), layout="constrained")
    batches = [r["batch"] for r in res["ejection"]]
    left.loglog(batches, [r["sims_per_s"] for r in res["ejection"]], "o-", label="diffspace (jit(vmap))")
    if isinstance(res.get("mujoco"), dict):
        m = res["mujoco"]
        left.axhline(m["sims_per_s"], color="tab:gray", ls="--",
                     label=f"MuJoCo {m['integrator']} {m['timestep_s']:.0e} s, {m['threads']} CPU threads")
    left.set(xlabel="batch size [simulations]", ylabel="ejection simulations per second [1/s]",
             title=f"in-rail ejection ({res['config']['friction']} friction), rtol {RTOL:.0e}")
    left.legend(fontsize=8)
    fd = res["forward_dynamics"]
    right.loglog([r["batch"] for r in fd], [r["ns_per_sample"] for r in fd], "o-", color="tab:green")
    right.set(xlabel="batch size [states]", ylabel="time per sample [ns]", title="forward dynamics (ABA), 7-joint arm")
    for ax in (left, right):
        ax.grid(alpha=0.3, which="both")
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    fig.suptitle(f"diffspace bench --gpu on {res['device']}")
    fig.savefig(path, dpi=110)
    plt.close(fig)
