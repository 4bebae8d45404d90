"""Batched Lemke throughput: diffspace.contact.lemke (jit + vmap) vs a plain NumPy Lemke loop, same process.

Problems: random LCPs with P-matrices (positive-definite symmetric part plus a skew part), ``n = 4, 8, 16``,
``q`` standard normal (about half the complementary pairs active). Both solvers see the same problems;
their solutions are compared. Times are the median of repeated calls after a warm-up (compile excluded and
reported separately); the NumPy loop is timed over a subset and scaled per problem.

Writes ``experiments/results/unilateral/lcp_benchmark.json``.
Run: ``python experiments/lcp_benchmark.py [--quick]``
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import jax
import numpy as np

import diffspace  # noqa: F401  (float64)
from diffspace.contact import lemke

from references.lcp_reference import lemke_numpy  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "unilateral"


def p_matrix_problems(rng, batch: int, n: int):
    a = rng.normal(size=(batch, n, n))
    skew = rng.normal(size=(batch, n, n))
    M = a @ a.transpose(0, 2, 1) / n + 0.2 * np.eye(n) + (skew - skew.transpose(0, 2, 1))
    return M, rng.normal(size=(batch, n))


def _median_time(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def benchmark(sizes=(4, 8, 16), batch: int = 1024, numpy_subset: int = 128, repeats: int = 5) -> dict:
    rng = np.random.default_rng(0)
    solve = jax.jit(jax.vmap(lambda M, q: lemke(M, q)))
    out = {"batch": batch, "numpy_subset": numpy_subset, "sizes": {}}
    for n in sizes:
        M, q = p_matrix_problems(rng, batch, n)
        start = time.perf_counter()
        z, info = jax.block_until_ready(solve(M, q))
        compile_s = time.perf_counter() - start
        batched_s = _median_time(lambda: jax.block_until_ready(solve(M, q)), repeats)
        single = jax.jit(lambda M, q: lemke(M, q)[0])
        jax.block_until_ready(single(M[0], q[0]))
        single_s = _median_time(lambda: jax.block_until_ready(single(M[0], q[0])), 20)
        reference = [lemke_numpy(M[k], q[k]) for k in range(numpy_subset)]
        numpy_s = _median_time(lambda: [lemke_numpy(M[k], q[k]) for k in range(numpy_subset)], repeats)
        numpy_per = numpy_s / numpy_subset
        diff = max(float(np.max(np.abs(np.asarray(z[k]) - ref)) / (1 + np.abs(ref).max()))
                   for k, (ref, _) in enumerate(reference))
        out["sizes"][str(n)] = {
            "jax_compile_s": compile_s,
            "jax_batched_s": batched_s,
            "jax_lcps_per_s": batch / batched_s,
            "jax_single_call_s": single_s,
            "numpy_per_lcp_s": numpy_per,
            "numpy_lcps_per_s": 1.0 / numpy_per,
            "speedup_batched_vs_numpy": numpy_per / (batched_s / batch),
            "all_converged": bool(np.all(np.asarray(info.converged))),
            "mean_pivots": float(np.mean(np.asarray(info.iterations))),
            "max_pivots": int(np.max(np.asarray(info.iterations))),
            "max_rel_difference_vs_numpy": diff,
        }
        row = out["sizes"][str(n)]
        print(f"n={n:2d}: jax {row['jax_lcps_per_s']:10.0f} LCP/s (batch {batch}), numpy {row['numpy_lcps_per_s']:8.0f} "
              f"LCP/s, speedup {row['speedup_batched_vs_numpy']:6.1f}x, pivots mean {row['mean_pivots']:.1f} "
              f"max {row['max_pivots']}, |z - z_numpy| {diff:.1e}, compile {compile_s:.1f} s")
    return out


def main() -> dict:
    quick = "--quick" in sys.argv
    out = benchmark(batch=256 if quick else 1024, numpy_subset=32 if quick else 128, repeats=3 if quick else 5)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "lcp_benchmark.json").write_text(json.dumps(out, indent=2) + "\n")
    return out


if __name__ == "__main__":
    main()
