r"""Dynamics-kernel benchmark: our kernels against each other and against Pinocchio.

Measured in one process, interleaved (each round times every candidate once, the minimum over rounds is
kept), so a load change on a shared machine affects all candidates alike; report ratios, not absolutes.

* :func:`bench_headline` (7-DOF floating arm ``generic_arm7.urdf``): the contract keys
  ``forward_dynamics_per_sample_vs_pinocchio_aba`` (``jit(vmap)`` at ``batch`` = 1024),
  ``mass_matrix_per_sample_vs_pinocchio_crba`` and ``forward_dynamics_single_call_vs_pinocchio_aba``
  (``diffspace.forward_dynamics(robot, q, v, tau)`` called from a Python loop, the user's eager path,
  against ``pinocchio.aba`` in the same kind of loop), the same loop through ``diffspace.compile_robot(robot)``
  (``forward_dynamics_compiled_call_vs_pinocchio_aba``), plus every kernel's per-sample time.
* :func:`bench_batch_sizes`: per-sample cost of every kernel for batch sizes 1..16384 (arm).
* :func:`bench_joint_counts`: per-sample cost vs the number of joints (3..30), chains and balanced
  binary trees, with Pinocchio's ``aba``/``crba`` on the same URDF; ABA should grow linearly.
* :func:`flop_report`: floating-point operations per sample of each kernel (XLA's cost analysis of the
  *lowered*, unfused program: each operation once, at its real shape) against the measured time, and the
  distance to the arithmetic limit ``time / (flops / R)`` with ``R`` the float64 rate of a large matrix
  product measured in the same process (the best XLA reaches on this CPU).
* :func:`plot_kernels`: the two scaling plots.

Kernels: ``forward_dynamics`` with ``kernel="aba" | "crba" | "dense"`` and ``mass_matrix`` with
``kernel="crba" | "dense"`` (see :mod:`diffspace.core.dynamics`). Times in seconds (``_s``); nothing here is used
by tests as a threshold.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...io.packaged import ROBOTS_DIR

ARM = ROBOTS_DIR / "generic_arm7.urdf"
FD_KERNELS = ("aba", "crba", "dense")
MM_KERNELS = ("crba", "dense")


@dataclass
class KernelBenchConfig:
    """Sizes; :meth:`quick` is a smoke-test preset."""

    batch: int = 1024
    batch_sizes: tuple = (1, 4, 16, 64, 256, 1024, 4096, 16384)
    joint_counts: tuple = (3, 7, 15, 30)
    joint_batch: int = 256
    rounds: int = 10
    single_calls: int = 200
    pin_calls: int = 2000
    seed: int = 0

    @classmethod
    def quick(cls) -> "KernelBenchConfig":
        return cls(batch=64, batch_sizes=(1, 64), joint_counts=(3, 6), joint_batch=16, rounds=2, single_calls=20,
                   pin_calls=64)


# ----------------------------------------------------------------------------- helpers
def interleaved_min(fns, rounds: int, inner: int = 1) -> list[float]:
    """Seconds per call of each function: minimum over ``rounds`` interleaved rounds of ``inner`` calls."""
    import jax

    for fn in fns:
        jax.block_until_ready(fn())
    best = [np.inf] * len(fns)
    for _ in range(max(1, rounds)):
        for k, fn in enumerate(fns):
            t0 = time.perf_counter()
            for _ in range(inner):
                out = fn()
            jax.block_until_ready(out)
            best[k] = min(best[k], (time.perf_counter() - t0) / inner)
    return best


def random_states(robot, batch: int, seed: int = 0):
    """Random configurations (unit quaternions, joint angles in [-pi, pi]), velocities and torques."""
    rng = np.random.default_rng(seed)
    quat = rng.normal(size=(batch, 4))
    quat /= np.linalg.norm(quat, axis=1, keepdims=True)
    q = np.concatenate([rng.normal(size=(batch, 3)), quat, rng.uniform(-np.pi, np.pi, (batch, robot.n_joints))], 1)
    return q, rng.normal(size=(batch, robot.nv)), 5.0 * rng.normal(size=(batch, robot.nv))


def tree_urdf(n_joints: int, branched: bool) -> str:
    """URDF of a floating tree of ``n_joints`` revolute joints: a chain, or a balanced binary tree
    (parent of link ``k`` is ``(k - 1) // 2``). Links are 1 kg rods with offset CoMs and tilted axes."""
    links = ['<link name="l0"><inertial><origin xyz="0 0 -0.1"/><mass value="20"/>'
             '<inertia ixx="0.5" ixy="0" ixz="0" iyy="0.6" iyz="0" izz="0.7"/></inertial></link>']
    joints = []
    for k in range(1, n_joints + 1):
        parent = (k - 1) // 2 if branched else k - 1
        links.append(f'<link name="l{k}"><inertial><origin xyz="0.02 0.01 0.1" rpy="0.1 0.2 0.3"/><mass value="1"/>'
                     '<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.012" iyz="0" izz="0.004"/></inertial></link>')
        axis = ("0 0 1", "0 1 0", "1 0 0")[k % 3]
        joints.append(f'<joint name="j{k}" type="revolute"><parent link="l{parent}"/><child link="l{k}"/>'
                      f'<origin xyz="0.03 {0.05 * (k % 2)} 0.2" rpy="0.2 0 {0.1 * k}"/><axis xyz="{axis}"/>'
                      '<limit lower="-3" upper="3" effort="1" velocity="1"/></joint>')
    return '<robot name="tree">' + "".join(links + joints) + "</robot>"


class _Case:
    """A robot, a batch of states and, when Pinocchio is installed, its model of the same URDF."""

    def __init__(self, urdf: Path, batch: int, seed: int):
        import jax.numpy as jnp

        from ... import load_robot

        self.robot = load_robot(urdf)
        self.states = random_states(self.robot, batch, seed)
        self.q, self.v, self.tau = (jnp.asarray(x) for x in self.states)
        self.ref = None
        try:
            from ...io.pinocchio import PinocchioModel

            self.ref = PinocchioModel(urdf, self.robot)
        except ImportError:
            pass

    def compiled(self, what: str, kernel: str, batch: int | None = None):
        """AOT-compiled ``jit(vmap(...))`` (or the unbatched function for ``batch=None``) and its compile time."""
        import jax

        from ... import forward_dynamics, mass_matrix

        def fn(robot, q, v, tau):
            return forward_dynamics(robot, q, v, tau, kernel) if what == "fd" else mass_matrix(robot, q, kernel)

        n = self.q.shape[0] if batch is None else batch
        args = (self.robot, self.q[:n], self.v[:n], self.tau[:n])
        t0 = time.perf_counter()
        exe = jax.jit(jax.vmap(fn, in_axes=(None, 0, 0, 0))).lower(*args).compile()
        return (lambda: exe(*args)), time.perf_counter() - t0

    def pinocchio_loops(self, calls: int):
        """``(aba_loop, crba_loop)`` over ``calls`` states, or ``None`` without Pinocchio."""
        if self.ref is None:
            return None
        pin, model, data, ref = self.ref.pin, self.ref.model, self.ref.data, self.ref
        q, v, tau = self.states
        qs, vs, ts = ([conv(x[i]) for i in range(calls)] for conv, x in ((ref.q, q), (ref.v, v), (ref.v, tau)))

        def aba():
            for i in range(calls):
                pin.aba(model, data, qs[i], vs[i], ts[i])

        def crba():
            for i in range(calls):
                pin.crba(model, data, qs[i])

        return aba, crba


# ----------------------------------------------------------------------------- studies
def bench_headline(cfg: KernelBenchConfig) -> dict:
    """Contract ratios on the 7-DOF arm and every kernel's per-sample time at ``cfg.batch``."""
    import jax

    from ... import compile_robot, forward_dynamics

    case = _Case(ARM, cfg.batch, cfg.seed)
    res: dict = {"kernel_robot": ARM.name, "kernel_batch_size": cfg.batch, "kernel_nv": case.robot.nv}
    names = [("fd", k) for k in FD_KERNELS] + [("mm", k) for k in MM_KERNELS]
    fns = []
    for what, kernel in names:
        fn, res[f"{what}_{kernel}_compile_s"] = case.compiled(what, kernel)
        fns.append(fn)
    robot, q0, v0, t0 = case.robot, case.q[0], case.v[0], case.tau[0]
    jax.block_until_ready(forward_dynamics(robot, q0, v0, t0))  # compiles the eager program
    fast = compile_robot(robot)
    start = time.perf_counter()
    jax.block_until_ready(fast.forward_dynamics(q0, v0, t0))
    res["forward_dynamics_compiled_call_compile_s"] = time.perf_counter() - start
    calls = cfg.single_calls

    def single():
        for _ in range(calls):
            out = forward_dynamics(robot, q0, v0, t0)
        return out

    def compiled_single():
        for _ in range(calls):
            out = fast.forward_dynamics(q0, v0, t0)
        return out

    loops = case.pinocchio_loops(min(cfg.pin_calls, cfg.batch))
    extra = [single, compiled_single] + (list(loops) if loops else [])
    times = interleaved_min(fns + extra, cfg.rounds)
    for (what, kernel), t in zip(names, times):
        res[f"{'forward_dynamics' if what == 'fd' else 'mass_matrix'}_{kernel}_per_sample_s"] = t / cfg.batch
    res["forward_dynamics_per_sample_s"] = res["forward_dynamics_aba_per_sample_s"]
    res["mass_matrix_per_sample_s"] = res["mass_matrix_crba_per_sample_s"]
    res["forward_dynamics_single_call_s"] = times[len(names)] / calls
    res["forward_dynamics_compiled_call_s"] = times[len(names) + 1] / calls
    if loops:
        calls_pin = min(cfg.pin_calls, cfg.batch)
        aba, crba = times[-2] / calls_pin, times[-1] / calls_pin
        res.update(pinocchio_aba_per_call_s=aba, pinocchio_crba_per_call_s=crba)
        res["forward_dynamics_per_sample_vs_pinocchio_aba"] = res["forward_dynamics_per_sample_s"] / aba
        res["mass_matrix_per_sample_vs_pinocchio_crba"] = res["mass_matrix_per_sample_s"] / crba
        res["forward_dynamics_single_call_vs_pinocchio_aba"] = res["forward_dynamics_single_call_s"] / aba
        res["forward_dynamics_compiled_call_vs_pinocchio_aba"] = res["forward_dynamics_compiled_call_s"] / aba
        res["forward_dynamics_dense_per_sample_vs_pinocchio_aba"] = res["forward_dynamics_dense_per_sample_s"] / aba
    return res


def bench_batch_sizes(cfg: KernelBenchConfig) -> dict:
    """Per-sample time of every kernel against the batch size (7-DOF arm)."""
    case = _Case(ARM, max(cfg.batch_sizes), cfg.seed)
    out: dict = {"batch_sizes": list(cfg.batch_sizes)}
    for what, kernels in (("fd", FD_KERNELS), ("mm", MM_KERNELS)):
        key = "forward_dynamics" if what == "fd" else "mass_matrix"
        table = {k: [] for k in kernels}
        for batch in cfg.batch_sizes:
            fns = [case.compiled(what, k, batch)[0] for k in kernels]
            times = interleaved_min(fns, cfg.rounds, inner=max(1, 256 // batch))
            for k, t in zip(kernels, times):
                table[k].append(t / batch)
        out[f"{key}_per_sample_s"] = table
    return out


def bench_joint_counts(cfg: KernelBenchConfig) -> dict:
    """Per-sample time against the number of joints, chains and binary trees, with Pinocchio."""
    out: dict = {"joint_counts": list(cfg.joint_counts), "batch_size": cfg.joint_batch}
    with tempfile.TemporaryDirectory() as tmp:
        for shape in ("chain", "tree"):
            table: dict = {}
            for n in cfg.joint_counts:
                path = Path(tmp) / f"{shape}{n}.urdf"
                path.write_text(tree_urdf(n, shape == "tree"))
                case = _Case(path, cfg.joint_batch, cfg.seed)
                labels = [f"fd_{k}" for k in FD_KERNELS] + [f"mm_{k}" for k in MM_KERNELS]
                fns = [case.compiled(label[:2], label[3:])[0] for label in labels]
                loops = case.pinocchio_loops(min(cfg.pin_calls, cfg.joint_batch))
                if loops:
                    labels += ["pinocchio_aba", "pinocchio_crba"]
                    fns += list(loops)
                times = interleaved_min(fns, cfg.rounds)
                for label, t in zip(labels, times):
                    calls = min(cfg.pin_calls, cfg.joint_batch) if label.startswith("pin") else cfg.joint_batch
                    table.setdefault(label, []).append(t / calls)
            out[shape] = table
    return out


def matmul_rate() -> float:
    """float64 operations per second of a 1024x1024 matrix product in XLA (the attainable arithmetic rate)."""
    import jax
    import jax.numpy as jnp

    a = jnp.asarray(np.random.default_rng(0).normal(size=(1024, 1024)))
    product = jax.jit(lambda x: x @ x)
    (t,) = interleaved_min([lambda: product(a)], 5)
    return 2.0 * 1024**3 / t


def flop_report(cfg: KernelBenchConfig, headline: dict) -> dict:
    """Operations per sample of each kernel (lowered program, one sample) vs the measured per-sample time."""
    import jax

    from ... import forward_dynamics, load_robot, mass_matrix

    robot = load_robot(ARM)
    q, v, tau = (np.asarray(x[0]) for x in random_states(robot, 1, cfg.seed))
    rate = matmul_rate()
    out: dict = {"matmul_flops_per_s": rate}
    for what, kernels, fn in (("forward_dynamics", FD_KERNELS, forward_dynamics), ("mass_matrix", MM_KERNELS, None)):
        for kernel in kernels:
            if fn is None:
                lowered = jax.jit(lambda q_, k=kernel: mass_matrix(robot, q_, k)).lower(q)
            else:
                lowered = jax.jit(lambda q_, v_, t_, k=kernel: fn(robot, q_, v_, t_, k)).lower(q, v, tau)
            flops = float(lowered.cost_analysis()["flops"])
            measured = headline.get(f"{what}_{kernel}_per_sample_s", float("nan"))
            out[f"{what}_{kernel}_flops"] = flops
            out[f"{what}_{kernel}_flops_per_s"] = flops / measured
            out[f"{what}_{kernel}_vs_arithmetic_limit"] = measured / (flops / rate)
    return out


def bench_kernels(cfg: KernelBenchConfig | None = None, joints: bool = True, batches: bool = True) -> dict:
    """All studies; ``res['kernel_scaling']`` holds the batch and joint tables for :func:`plot_kernels`."""
    cfg = cfg or KernelBenchConfig()
    res = bench_headline(cfg)
    res["kernel_flops"] = flop_report(cfg, res)
    res["kernel_scaling"] = {}
    if batches:
        res["kernel_scaling"]["batch"] = bench_batch_sizes(cfg)
    if joints:
        res["kernel_scaling"]["joints"] = bench_joint_counts(cfg)
    return res


def plot_kernels(res: dict, path: Path) -> None:
    """Per-sample time vs batch size (arm) and vs number of joints (chains solid, trees dashed), log scales."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    scaling = res.get("kernel_scaling", {})
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    batch = scaling.get("batch")
    if batch:
        for key, style in (("forward_dynamics", "-"), ("mass_matrix", ":")):
            for kernel, values in batch[f"{key}_per_sample_s"].items():
                axes[0].plot(batch["batch_sizes"], np.asarray(values) * 1e6, style, marker="o", label=f"{key} {kernel}")
        for key, label in (("pinocchio_aba_per_call_s", "Pinocchio aba"), ("pinocchio_crba_per_call_s", "Pinocchio crba")):
            if key in res:
                axes[0].axhline(res[key] * 1e6, color="gray", ls="--" if "aba" in key else ":", label=label)
        axes[0].set(xscale="log", yscale="log", xlabel="batch size", ylabel="time per sample [us]",
                    title=f"{res.get('kernel_robot', '')}: cost per sample vs batch")
    joints = scaling.get("joints")
    if joints:
        for shape, style in (("chain", "-"), ("tree", "--")):
            for label, values in joints.get(shape, {}).items():
                axes[1].plot(joints["joint_counts"], np.asarray(values) * 1e6, style, marker="o", label=f"{shape} {label}")
        axes[1].set(xscale="log", yscale="log", xlabel="number of joints",
                    ylabel="time per sample [us]", title=f"cost vs joints (batch {joints['batch_size']})")
    for ax in axes:
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=6, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
