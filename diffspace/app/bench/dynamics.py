"""``diffspace bench``, rigid-body dynamics: the kernels of :mod:`.kernels` on the 7-DOF floating arm against
Pinocchio ``aba``/``crba`` (interleaved in one process), the agreement with Pinocchio on the same states, and
in the full run the scaling studies (batch size 1..16384, joints 3..30) and the FLOP report."""

from __future__ import annotations

import numpy as np

from .common import BenchConfig, Progress
from .kernels import ARM, KernelBenchConfig, bench_batch_sizes, bench_headline, bench_joint_counts, flop_report, random_states


def _kernel_config(cfg: BenchConfig) -> KernelBenchConfig:
    sizes = dict(batch_sizes=(1, 16, 256, cfg.fd_batch), joint_counts=(3, 7), joint_batch=16) if cfg.quick_kernels else {}
    return KernelBenchConfig(batch=cfg.fd_batch, rounds=cfg.fd_repeats, pin_calls=cfg.pin_calls,
                             single_calls=max(20, cfg.pin_calls // 10), seed=cfg.seed, **sizes)


def _pinocchio_difference(kcfg: KernelBenchConfig) -> float | None:
    """Largest |ours - Pinocchio aba| over 20 random states of the arm, or None without Pinocchio."""
    from ... import forward_dynamics, load_robot

    try:
        from ...io.pinocchio import PinocchioModel
    except ImportError:
        return None
    robot = load_robot(ARM)
    ref = PinocchioModel(ARM, robot)
    q, v, tau = random_states(robot, 20, kcfg.seed)
    return max(float(np.max(np.abs(ref.pin.aba(ref.model, ref.data, ref.q(q[i]), ref.v(v[i]), ref.v(tau[i]))[ref.v_perm]
                                   - np.asarray(forward_dynamics(robot, q[i], v[i], tau[i])))))
               for i in range(len(q)))


def bench_dynamics(cfg: BenchConfig, progress: Progress) -> dict:
    """Batched forward dynamics and mass matrix vs Pinocchio (contract ratios), single-call latency, and with
    ``cfg.kernel_scaling`` the scaling tables and FLOP report (``res['kernel_scaling']``, ``res['kernel_flops']``)."""
    kcfg = _kernel_config(cfg)
    progress.stage(f"dynamics kernels vs Pinocchio (batch {cfg.fd_batch}, interleaved)")
    res = bench_headline(kcfg)
    res.update(fd_robot=ARM.name, fd_batch_size=cfg.fd_batch, forward_dynamics_compile_s=res["fd_aba_compile_s"],
               mass_matrix_compile_s=res["mm_crba_compile_s"])
    diff = _pinocchio_difference(kcfg)
    if diff is None:
        progress.write("pinocchio not installed: skipping the Pinocchio comparison (pip install pin)")
        res["pinocchio"] = "not installed"
    else:
        res["forward_dynamics_max_abs_diff_vs_pinocchio"] = diff
    progress.done()
    progress.stage("kernel scaling (batch sizes, joint counts) and FLOP report")
    if cfg.kernel_scaling:
        res["kernel_flops"] = flop_report(kcfg, res)
        res["kernel_scaling"] = {"batch": bench_batch_sizes(kcfg), "joints": bench_joint_counts(kcfg)}
    progress.done()
    return res
