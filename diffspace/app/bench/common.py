"""Shared pieces of ``diffspace bench``: sizes, progress display, interleaved timing, random states."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ...io.packaged import ROBOTS_DIR

FD_ROBOT = ROBOTS_DIR / "generic_arm7.urdf"
# The ejection runs the shipped air-table config with static = Coulomb friction (MuJoCo has one friction level)
FRICTION_TORQUE_NM = 2.0


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
    kernel_scaling: bool = True  # per-sample cost vs batch size and joint count, FLOP report (minutes)
    quick_kernels: bool = False  # small scaling tables
    warm_start: bool = True  # `diffspace run` twice in fresh processes: cold vs warm compilation cache
    seed: int = 0
    extra: dict = field(default_factory=dict)

    @classmethod
    def quick(cls) -> "BenchConfig":
        return cls(
            fd_batch=256, fd_repeats=5, pin_calls=1000, ejection_friction="none", ejection_batch=8,
            ejection_repeats=3, ejection_max_segments=3, rtol_ladder=(1e-5, 1e-6, 1e-7, 1e-8), gradient=False,
            scenarios=False, warm_start=False, kernel_scaling=False,
            mujoco_reference_dt=1e-4,
        )


class Progress:
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


def timed(fn: Callable, repeats: int) -> float:
    """Median wall time of ``fn()`` (blocking on JAX results) over ``repeats`` calls after one warm-up call."""
    return timed_together([fn], repeats)[0]


def timed_together(fns: list[Callable], repeats: int) -> list[float]:
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


def compile_timed(fn, *args):
    """AOT-compile ``jit(fn)`` for ``args``; returns the compiled callable and the trace+compile time."""
    import jax

    t0 = time.perf_counter()
    compiled = jax.jit(fn).lower(*args).compile()
    return compiled, time.perf_counter() - t0


def random_states(robot, batch: int, rng: np.random.Generator):
    n = robot.n_joints
    quat = rng.normal(size=(batch, 4))
    quat /= np.linalg.norm(quat, axis=1, keepdims=True)
    q = np.concatenate([rng.normal(size=(batch, 3)), quat, rng.uniform(-np.pi, np.pi, (batch, n))], axis=1)
    v = rng.normal(size=(batch, 6 + n))
    tau = rng.normal(size=(batch, 6 + n)) * 5.0
    return q, v, tau
