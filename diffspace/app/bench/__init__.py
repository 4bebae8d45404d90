r"""``diffspace bench``: speed against Pinocchio and MuJoCo on the same CPU, in the same process.

Two parts, each skipped with a message when its reference engine is not installed:

**Rigid-body dynamics** (7-DOF floating arm ``configs/robots/generic_arm7.urdf``, :mod:`.dynamics` and
:mod:`.kernels`): ``jit(vmap(...))`` of every kernel of :func:`~diffspace.core.dynamics.forward_dynamics` and
:func:`~diffspace.core.dynamics.mass_matrix` over a batch of random states, per-sample time, against Pinocchio's
``aba`` and ``crba`` called once per state from Python (Pinocchio is single-threaded; its per-call time
includes the Python binding call, about what a user pays), all timed interleaved in one process; the
single call ``diffspace.forward_dynamics(robot, q, v, tau)`` from a Python loop; in the full run the
per-sample cost vs batch size and joint count (``kernels.png``) and a FLOP report. Compile time is reported
separately. The warm-start part runs ``diffspace run`` twice in fresh processes (:mod:`.warm`).

**Ejection** (the in-rail phase of ``esd_arm7`` in plane mode: joints 1, 3, 5, 7 locked,
joints 2, 4, 6 with friction, spring ``k``/``l`` from the paper): simulations per second of our hybrid
model, one at a time (``jit``) and batched (``jit(vmap)`` over attitudes and spring stiffness), against
MuJoCo stepping the same model (slide joint + spring, ``frictionloss`` + ``damping``, see
:mod:`diffspace.io.mjcf`) with ``mujoco.rollout`` on one thread. Both run *to the same accuracy*: the
separation velocity of every case must be within ``accuracy`` (relative) of the engine's own converged
result (ours at ``rtol = 1e-11``, MuJoCo RK4 at a tiny timestep); the loosest ``rtol`` of ours and the
cheapest MuJoCo (integrator, timestep) meeting it are selected from ladders and then timed. The
agreement of the two converged results (velocity within 1 %, joint angles within 2 % or 0.2 deg, on every
batch case) is reported as ``ejection_vs_mujoco_*``. Both simulate the same
horizon (5 % past the slowest possible separation). The gradient (reverse mode, ``jax.grad`` of the
separation velocity w.r.t. the joint angles, the viscous coefficient ``B`` and the stiffness) is timed
against the forward simulation. Only reverse mode is used: ``jacfwd`` of batched Cholesky solves under
``vmap`` can deadlock XLA's CPU runtime (jaxlib 0.10.2, batched LAPACK solves).

Results go to ``OUT/bench.json`` and ``OUT/summary.json`` (same content; times in seconds, ``_s``
suffix; ratios ``ours / reference`` are unitless). Timings are medians over repeats and indicative only
on a shared machine. ``quick`` uses small batches, few repeats, the frictionless ejection model (the
hybrid stick-slip model compiles several times slower) and skips the gradient (its compilation alone
takes longer than the rest of the quick run).
"""

from __future__ import annotations

import json
import math
import os
import platform
import sys
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np

from .common import BenchConfig, Progress
from .dynamics import bench_dynamics
from .ejection import bench_ejection
from .kernels import plot_kernels
from .warm import bench_second_run

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
            f"single call {f('forward_dynamics_single_call_s')}, compile_robot call "
            f"{f('forward_dynamics_compiled_call_s')}; "
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
    if "second_run_wall_s" in res:
        lines.append(f"  diffspace run (default study) in a fresh process: {res['first_run_wall_s']:.3g} s with an empty "
                     f"compilation cache, {res['second_run_wall_s']:.3g} s with the warm cache")
    if "scenario_compile" in res:
        from .scenarios import summary_lines

        lines += summary_lines(res["scenario_compile"])
    return lines


def run_bench(quick: bool = False, out: Path | str = Path("runs/bench"), config: BenchConfig | None = None,
              progress: bool = True, gpu: bool = False) -> dict:
    """Run the benchmark (with ``gpu``: the throughput-against-batch-size bench of :mod:`.scaling` instead),
    write ``out/bench.json`` and ``out/summary.json``, print a summary; return the dict."""
    import jax

    cfg = config or (BenchConfig.quick() if quick else BenchConfig())
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    res: dict = {
        "mode": "gpu" if gpu else "cpu",
        "quick": bool(quick),
        "jax_version": jax.__version__,
        "jax_backend": jax.default_backend(),
        "cpu_count": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "x64": bool(jax.config.jax_enable_x64),
        "config": {k: v for k, v in asdict(cfg).items() if k != "extra"},
    }
    if gpu:
        return _run_scaling(res, out, progress)
    from .scenarios import CONFIGS, scenario_compile_times

    stages = (2 + (4 + int(cfg.gradient) if cfg.ejection else 0) + (len(CONFIGS) if cfg.scenarios else 0)
              + int(cfg.warm_start))
    def measure(bar: Progress) -> None:
        res.update(bench_dynamics(cfg, bar))
        if cfg.ejection:
            res.update(bench_ejection(cfg, bar))
        if cfg.scenarios:
            res["scenario_compile"] = scenario_compile_times(gradients=cfg.gradient, progress=bar)
        if cfg.warm_start:
            res.update(bench_second_run(bar))

    _measure_and_write(res, out, stages, progress, measure)
    try:
        _plot(res, out / "bench.png")
        if "kernel_scaling" in res:
            plot_kernels(res, out / "kernels.png")
    except Exception as err:  # a plot must never lose the measurements
        print(f"warning: bench plot not written ({err})", file=sys.stderr)
    for line in _summary_lines(res):
        print(line)
    print(f"results written to {out}/bench.json")
    if "forward_dynamics_per_sample_vs_pinocchio_aba" in res:
        ratio = res["forward_dynamics_per_sample_vs_pinocchio_aba"]
        print(f"forward_dynamics_per_sample_vs_pinocchio_aba = {ratio:.3f}")
    return res


def _measure_and_write(res: dict, out: Path, stages: int, progress: bool, measure) -> None:
    """``measure(bar)`` (it fills ``res``) under a progress bar of ``stages`` stages; then ``total_wall_s`` and
    ``bench.json`` / ``summary.json`` (the same content) in ``out``."""
    bar = Progress(stages, enabled=progress)
    t0 = time.perf_counter()
    try:
        measure(bar)
    finally:
        bar.close()
    res["total_wall_s"] = time.perf_counter() - t0
    text = json.dumps(_jsonable(res), indent=2)
    for name in ("bench.json", "summary.json"):
        (out / name).write_text(text)


def _run_scaling(res: dict, out: Path, progress: bool) -> dict:
    from .scaling import plot_scaling, run_scaling, scaling_lines

    _measure_and_write(res, out, 5, progress, lambda bar: res.update(device_scaling=run_scaling(res["quick"], bar)))
    plot_scaling(res["device_scaling"], out / "scaling.png")
    print(f"\ndiffspace bench --gpu{' (quick)' if res['quick'] else ''}")
    for line in scaling_lines(res["device_scaling"]):
        print(line)
    print(f"results written to {out}/bench.json and {out}/scaling.png ({res['total_wall_s']:.0f} s)")
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
