"""``diffspace sweep``: every scenario over grid / random / Latin-hypercube cases, chunked, resumable.

Each chunk of cases is evaluated by one compiled, vmapped call (sharded over all visible JAX devices) and
written atomically to ``store/chunk_XXXXXX.npz`` with its case indices, inputs, outputs, gradients and
per-case status before the next chunk starts; a kill loses at most the chunk in flight, and a rerun of the
same command loads every finished chunk (after checking that its stored inputs are the ones this spec
generates) and computes only the missing ones. A chunk file that cannot be read is reported, recomputed
and replaced. ``results.csv`` is streamed from the store (one row per case: inputs, outputs, status,
reason), so memory stays bounded by the chunk size. Several hosts: call ``jax.distributed.initialize()``
before the command (``DIFFSPACE_DISTRIBUTED=1``); every host then sees all devices and each chunk is sharded
across them.
"""

from __future__ import annotations

import csv
import os
import shutil
import sys
import time
import zipfile
from pathlib import Path

import numpy as np

from . import cases as cs
from ..core.status import ConfigError
from .evaluate import CaseResults, evaluate_cases, status_label
from .sweep_plots import plot_sweep
from .sweep_spec import SweepSpec

PLOT_POINTS = 20_000  # at most this many cases are kept in memory for plots


class ChunkStore:
    """Finished chunks on disk; every write is atomic (hidden temporary file, then ``os.replace``), and a
    temporary file left by a killed run is removed when the store is opened again."""

    def __init__(self, directory: Path):
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        for unfinished in directory.glob(".chunk_*.writing"):
            unfinished.unlink()

    def path(self, chunk: int) -> Path:
        return self.directory / f"chunk_{chunk:06d}.npz"

    def save(self, chunk: int, spec: SweepSpec, cases: list[dict], result: CaseResults) -> None:
        arrays = {"case_index": np.asarray(spec.chunk_range(chunk)), "status": result.status,
                  "reasons": np.asarray(result.reasons, dtype=str)}
        arrays.update({f"in:{a.key}": np.asarray([c[a.key] for c in cases]) for a in spec.axes})
        arrays.update({f"out:{k}": v for k, v in result.values.items()})
        arrays.update({f"grad:{n}:{k}": v for (n, k), v in result.gradients.items()})
        tmp = self.directory / f".{self.path(chunk).name}.writing"  # never matches chunk_*.npz
        with open(tmp, "wb") as handle:
            np.savez(handle, **arrays)
        os.replace(tmp, self.path(chunk))

    def load(self, chunk: int, spec: SweepSpec, cases: list[dict]) -> CaseResults | None:
        """The stored chunk, or ``None`` if absent, unreadable (reported) or made from other inputs."""
        path = self.path(chunk)
        if not path.exists():
            return None
        try:
            with np.load(path) as saved:
                data = {k: saved[k] for k in saved.files}
        except (OSError, ValueError, EOFError, zipfile.BadZipFile) as err:
            print(f"warning: chunk file {path.name} is unreadable ({type(err).__name__}); recomputing it",
                  file=sys.stderr)
            return None
        expected = {a.key: np.asarray([c[a.key] for c in cases]) for a in spec.axes}
        same = np.array_equal(data.get("case_index"), np.asarray(spec.chunk_range(chunk))) and all(
            f"in:{k}" in data and np.array_equal(data[f"in:{k}"], v) for k, v in expected.items())
        if not same:
            return None
        values = {k[4:]: v for k, v in data.items() if k.startswith("out:")}
        grads = {tuple(k[5:].split(":", 1)): v for k, v in data.items() if k.startswith("grad:")}
        return CaseResults(values, data["status"], [str(r) for r in data["reasons"]], grads)


def _progress(spec: SweepSpec, done: int, enabled: bool):
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=spec.n_cases, initial=done, desc="sweep", unit="case", smoothing=0.1, file=sys.stderr)


BYTES_PER_VALUE = 48  # one number in the chunk store and in results.csv, with room to spare


def check_disk(spec: SweepSpec, out: Path, n_outputs: int) -> None:
    """Refuse, before any work, a sweep whose store and ``results.csv`` cannot fit on the disk."""
    columns = len(spec.axes) + n_outputs * (1 + (len(spec.axes) if spec.gradients else 0)) + 3
    needed = spec.n_cases * columns * BYTES_PER_VALUE
    existing = out.resolve()
    while not existing.exists():
        existing = existing.parent
    free = shutil.disk_usage(existing).free
    if needed > 0.9 * free:
        raise ConfigError(f"sweep: {spec.n_cases:,} cases need about {needed / 1e9:.1f} GB for the results, "
                          f"{free / 1e9:.1f} GB are free in {out}; sweep fewer cases or fewer outputs")


def run_sweep(builder: cs.CaseBuilder, spec: SweepSpec, out: Path, progress: bool = True) -> dict:
    """Evaluate every case (resuming from ``out/store``), write ``results.csv``, plots and return the summary."""
    store = ChunkStore(out / "store")
    wrt = tuple(a.key for a in spec.axes if a.key in builder.design_keys) if spec.gradients else ()
    finished = sum(len(spec.chunk_range(c)) for c in range(spec.n_chunks) if store.path(c).exists())
    bar = _progress(spec, finished, progress)
    computed, start = 0, time.perf_counter()
    for chunk in range(spec.n_chunks):
        cases = spec.cases(chunk)
        if store.load(chunk, spec, cases) is not None:
            continue
        result = evaluate_cases(builder, cases, spec.chunk_size, spec.outputs, wrt)
        store.save(chunk, spec, cases, result)
        computed += len(cases)
        if bar is not None:
            bar.update(len(cases))
    if bar is not None:
        bar.close()
    elapsed = time.perf_counter() - start
    summary = write_results(store, spec, out)
    summary["computed_cases"] = computed
    summary["cases_per_s"] = computed / elapsed if computed else None
    return summary


def write_results(store: ChunkStore, spec: SweepSpec, out: Path) -> dict:
    """Stream the store into ``results.csv``; return the summary (counts by status, best of each output)."""
    counts: dict[str, int] = {}
    best: dict[str, tuple[float, float, dict]] = {}
    kept: list[dict] = []
    stride = max(1, spec.n_cases // PLOT_POINTS)
    with (out / "results.csv").open("w", newline="") as fh:
        writer = None
        for chunk in range(spec.n_chunks):
            cases = spec.cases(chunk)
            result = store.load(chunk, spec, cases)
            rows = _rows(spec, chunk, cases, result)
            if writer is None:
                writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
                writer.writeheader()
            writer.writerows(rows)
            for row in rows:
                counts[row["status"]] = counts.get(row["status"], 0) + 1
                _track_best(best, row, result.values, [a.key for a in spec.axes])
            kept += rows[::stride]
    plot_sweep(out, spec, kept)
    summary = {"scenario_cases": spec.n_cases, "method": spec.method, "status_counts": counts,
               "ok_cases": counts.get("ok", 0), "failed_cases": spec.n_cases - counts.get("ok", 0)}
    for name, (lo, hi, at_max) in best.items():
        summary[f"{name}_min"], summary[f"{name}_max"] = lo, hi
        summary[f"{name}_argmax"] = at_max
    return summary


def _rows(spec: SweepSpec, chunk: int, cases: list[dict], result: CaseResults) -> list[dict]:
    rows = []
    for i, index in enumerate(spec.chunk_range(chunk)):
        row = {"case": index, **{a.key: cases[i][a.key] for a in spec.axes}}
        row.update({k: float(v[i]) for k, v in result.values.items()})
        row.update({f"d({n})/d({k})": float(g[i]) for (n, k), g in result.gradients.items()})
        row["status"] = status_label(int(result.status[i]))
        row["reason"] = result.reasons[i]
        rows.append(row)
    return rows


def _track_best(best: dict, row: dict, names, inputs: list[str]) -> None:
    """Running min / max of every output over usable cases, and the case at the maximum."""
    for name in names:
        value = row.get(name)
        if value is None or not np.isfinite(value):
            continue
        lo, hi, at_max = best.get(name, (np.inf, -np.inf, {}))
        if value > hi:
            hi, at_max = value, {"case": row["case"], **{k: row[k] for k in inputs}}
        best[name] = (min(lo, value), hi, at_max)
