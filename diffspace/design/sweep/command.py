"""``diffspace sweep``: every scenario over grid / random / Latin-hypercube cases, chunked, resumable.

Each chunk of cases is evaluated by one compiled, vmapped call (sharded over this process's JAX devices) and
written atomically to ``store/chunk_XXXXXX.npz`` with its case indices, inputs, outputs, gradients and
per-case status before the next chunk starts; a kill loses at most the chunk in flight, and a rerun of the
same command loads every finished chunk (after checking that its stored inputs are the ones this spec
generates) and computes only the missing ones. A chunk file that cannot be read is reported, recomputed
and replaced. ``results.csv`` is streamed from the store (one row per case: inputs, outputs, status,
reason), so memory stays bounded by the chunk size. Several processes (several hosts or GPUs) share the
chunks of one command: :mod:`diffspace.design.distributed`.

The chunk machinery (:class:`ChunkStore`, :func:`compute_chunks`, :func:`stored_rows`) is shared with
``diffspace montecarlo``; a *spec* gives ``n_cases``, ``chunk_size``, ``n_chunks``, ``chunk_range(chunk)``,
``cases(chunk)``, ``input_keys``, ``outputs`` and ``gradients``.
"""

from __future__ import annotations

import csv
import os
import shutil
import socket
import sys
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from ...core.status import ConfigError
from .. import cases as cs
from ..distributed import SOLO, Processes
from ..evaluate import CaseResults, evaluate_cases, status_label, status_totals
from ..outcomes import outcome_summary
from ..progress import Bar, compiling
from .plots import plot_sweep
from .spec import SweepSpec

PLOT_POINTS = 20_000  # at most this many cases are kept in memory for plots


class ChunkStore:
    """Finished chunks on disk; every write is atomic (hidden temporary file named after its writer, then
    ``os.replace``). Temporary files left by a killed run are removed by :meth:`clean` once no process
    writes any more."""

    def __init__(self, directory: Path):
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)

    def path(self, chunk: int) -> Path:
        return self.directory / f"chunk_{chunk:06d}.npz"

    def clean(self) -> None:
        for unfinished in self.directory.glob(".chunk_*.writing"):
            unfinished.unlink(missing_ok=True)

    def save(self, chunk: int, spec, cases: list[dict], result: CaseResults) -> None:
        arrays = {"case_index": np.asarray(spec.chunk_range(chunk)), "status": result.status,
                  "reasons": np.asarray(result.reasons, dtype=str), "outcomes": np.asarray(result.outcomes, dtype=str)}
        arrays.update({f"in:{k}": np.asarray([c[k] for c in cases]) for k in spec.input_keys})
        arrays.update({f"out:{k}": v for k, v in result.values.items()})
        arrays.update({f"grad:{n}:{k}": v for (n, k), v in result.gradients.items()})
        writer = f"{socket.gethostname()}-{os.getpid()}"
        tmp = self.directory / f".{self.path(chunk).name}.{writer}.writing"  # never matches chunk_*.npz
        with open(tmp, "wb") as handle:
            np.savez(handle, **arrays)
        os.replace(tmp, self.path(chunk))

    def load(self, chunk: int, spec, cases: list[dict]) -> CaseResults | None:
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
        expected = {k: np.asarray([c[k] for c in cases]) for k in spec.input_keys}
        same = np.array_equal(data.get("case_index"), np.asarray(spec.chunk_range(chunk))) and all(
            f"in:{k}" in data and np.array_equal(data[f"in:{k}"], v) for k, v in expected.items())
        if not same:
            return None
        values = {k[4:]: v for k, v in data.items() if k.startswith("out:")}
        grads = {tuple(k[5:].split(":", 1)): v for k, v in data.items() if k.startswith("grad:")}
        outcomes = [str(o) for o in data["outcomes"]] if "outcomes" in data else [""] * len(data["status"])
        return CaseResults(values, data["status"], [str(r) for r in data["reasons"]], grads, outcomes)


def _progress(spec, done: int, enabled: bool, label: str, processes: Processes):
    """A progress bar counting cases as chunks finish, its remaining time measured after the first chunk's
    compile (:class:`~diffspace.design.progress.Bar`): the whole run alone; this process's own cases among
    several."""
    if not enabled:
        return None
    first = compiling(f"the batched simulation ({spec.chunk_size} cases per chunk)")
    if processes.size > 1:
        return Bar(f"{label} (process {processes.rank + 1}/{processes.size})", None, "case", first=first,
                   batch="chunk")
    return Bar(label, spec.n_cases, "case", initial=done, first=first, batch="chunk")


BYTES_PER_VALUE = 48  # one number in the chunk store and in results.csv, with room to spare


def check_disk(spec, out: Path, n_outputs: int) -> None:
    """Refuse, before any work, a run whose store and ``results.csv`` cannot fit on the disk."""
    n_inputs = len(spec.input_keys)
    columns = n_inputs + n_outputs * (1 + (n_inputs if spec.gradients else 0)) + 3
    needed = spec.n_cases * columns * BYTES_PER_VALUE
    existing = out.resolve()
    while not existing.exists():
        existing = existing.parent
    free = shutil.disk_usage(existing).free
    if needed > 0.9 * free:
        raise ConfigError(f"{spec.name}: {spec.n_cases:,} cases need about {needed / 1e9:.1f} GB for the results, "
                          f"{free / 1e9:.1f} GB are free in {out}; run fewer cases or fewer outputs")


def _compute(builder: cs.CaseBuilder, spec, store: ChunkStore, chunk: int, wrt: tuple, bar) -> int:
    """Evaluate and store one chunk unless the store holds it; the number of cases computed."""
    cases = spec.cases(chunk)
    if store.load(chunk, spec, cases) is not None:
        return 0
    result = evaluate_cases(builder, cases, spec.chunk_size, spec.outputs, wrt)
    store.save(chunk, spec, cases, result)
    if bar is not None:
        bar.update(len(cases))
    return len(cases)


def compute_chunks(builder: cs.CaseBuilder, spec, store: ChunkStore, wrt: tuple = (), processes: Processes = SOLO,
                   progress: bool = True, label: str = "sweep") -> dict | None:
    """Put every chunk of ``spec`` in the store, this process taking the chunks it claims. The lead returns
    the run's counts once every chunk is stored (``computed_cases``, ``cases_per_s`` over the wall time and,
    among several processes, ``cases_by_process``); the other processes return ``None``."""
    start = time.perf_counter()
    finished = sum(len(spec.chunk_range(c)) for c in range(spec.n_chunks) if store.path(c).exists())
    bar = _progress(spec, finished, progress, label, processes)
    computed = sum(_compute(builder, spec, store, chunk, wrt, bar) for chunk in processes.claims(spec.n_chunks))
    processes.finish(computed)
    if not processes.lead:
        if bar is not None:
            bar.close()
        return None
    by_process = processes.gather()
    if None in by_process.values():  # a stopped process left its chunk in flight: finish it here
        by_process[0] += sum(_compute(builder, spec, store, c, wrt, bar) for c in range(spec.n_chunks))
    if bar is not None:
        bar.close()
    store.clean()
    elapsed = time.perf_counter() - start
    total = sum(n or 0 for n in by_process.values())
    counts = {"computed_cases": total, "cases_per_s": total / elapsed if total else None}
    if processes.size > 1:
        counts["processes"] = processes.size
        counts["cases_by_process"] = {str(rank): n for rank, n in sorted(by_process.items())}
    return counts


def run_sweep(builder: cs.CaseBuilder, spec: SweepSpec, out: Path, progress: bool = True,
              processes: Processes = SOLO) -> dict | None:
    """Evaluate every case (resuming from ``out/store``), write ``results.csv``, plots and return the summary
    (the lead; the other processes return ``None`` once their chunks are done)."""
    store = ChunkStore(out / "store")
    wrt = tuple(a.key for a in spec.axes if a.key in builder.design_keys) if spec.gradients else ()
    counts = compute_chunks(builder, spec, store, wrt, processes, progress, "sweep")
    if counts is None:
        return None
    summary = write_results(store, spec, out, builder.scenario(()))
    summary.update(counts)
    return summary


def stored_rows(store: ChunkStore, spec, labels=None, outcomes: bool = False) -> Iterator[tuple[list[dict], CaseResults]]:
    """Every chunk's ``results.csv`` rows (case, ``labels(chunk)`` columns, inputs, outputs, gradients,
    status, reason and, with ``outcomes`` (the scenario declares them), the outcome) and its results, in case
    order; every chunk must be stored."""
    for chunk in range(spec.n_chunks):
        cases = spec.cases(chunk)
        result = store.load(chunk, spec, cases)
        extra = labels(chunk) if labels is not None else {}
        rows = []
        for i, index in enumerate(spec.chunk_range(chunk)):
            row = {"case": index, **{k: v[i] for k, v in extra.items()}, **{k: cases[i][k] for k in spec.input_keys}}
            row.update({k: float(v[i]) for k, v in result.values.items()})
            row.update({f"d({n})/d({k})": float(g[i]) for (n, k), g in result.gradients.items()})
            row["status"] = status_label(int(result.status[i]))
            row["reason"] = result.reasons[i]
            if outcomes:
                row["outcome"] = result.outcomes[i]
            rows.append(row)
        yield rows, result


class ResultsTable:
    """``results.csv`` written row block by row block (header from the first block)."""

    def __init__(self, path: Path):
        self.handle = path.open("w", newline="")
        self.writer = None

    def __enter__(self):
        return self

    def write(self, rows: list[dict]) -> None:
        if self.writer is None:
            self.writer = csv.DictWriter(self.handle, fieldnames=list(rows[0]))
            self.writer.writeheader()
        self.writer.writerows(rows)

    def __exit__(self, *exc) -> None:
        self.handle.close()


def write_results(store: ChunkStore, spec: SweepSpec, out: Path, scenario=None) -> dict:
    """Stream the store into ``results.csv``; return the summary (counts by status, best of each output);
    ``scenario`` (the configured one) names the plots' run and design variables."""
    counts: dict[str, int] = {}
    best: dict[str, tuple[float, float, dict]] = {}
    kept: list[dict] = []
    outcomes: list[str] = []
    declared = type(scenario).outcomes if scenario is not None else ()
    stride = max(1, spec.n_cases // PLOT_POINTS)
    with ResultsTable(out / "results.csv") as table:
        for rows, result in stored_rows(store, spec, outcomes=bool(declared)):
            table.write(rows)
            for row in rows:
                counts[row["status"]] = counts.get(row["status"], 0) + 1
                _track_best(best, row, result.values, list(spec.input_keys))
            outcomes += result.outcomes
            kept += rows[::stride]
    plot_sweep(out, spec, kept, scenario)
    summary = {"scenario_cases": spec.n_cases, "method": spec.method, "status_counts": counts,
               **status_totals(counts), **outcome_summary(declared, outcomes)}
    for name, (lo, hi, at_max) in best.items():
        summary[f"{name}_min"], summary[f"{name}_max"] = lo, hi
        summary[f"{name}_argmax"] = at_max
    return summary


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
