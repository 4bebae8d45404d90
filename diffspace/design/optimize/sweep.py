"""The sweep stage of ``diffspace optimize`` shared by several processes.

Alone, the stage is :func:`~diffspace.design.optimize.report.sweep_table`. Among several processes its cases
(every sample for every choice) go through the sweep's chunk machinery (:func:`~diffspace.design.sweep.command.
compute_chunks`: chunks claimed dynamically, stored in ``DIR/store/sweep``); process 0 then tabulates them from the
store and goes on with the optimisation alone, the other processes stop. The store is removed once tabulated
(an optimisation is not resumable).
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import numpy as np

from .. import cases as cs
from ..distributed import SOLO, Processes
from ..sweep.command import ChunkStore, compute_chunks
from ..sweep.spec import Chunked
from .problem import Problem
from .report import sweep_cases, sweep_table, tabulate


@dataclasses.dataclass(frozen=True)
class SweepCases(Chunked):
    """A fixed list of cases as a spec of the chunk machinery."""

    all_cases: tuple[dict, ...]
    chunk_size: int
    name = "optimize"
    outputs = ()
    gradients = False

    @property
    def n_cases(self) -> int:
        return len(self.all_cases)

    @property
    def input_keys(self) -> tuple[str, ...]:
        return tuple(self.all_cases[0])

    def cases(self, chunk: int) -> list[dict]:
        r = self.chunk_range(chunk)
        return list(self.all_cases[r.start:r.stop])


def sweep_stage(builder: cs.CaseBuilder, problem: Problem, samples: np.ndarray, out: Path, progress: bool,
                processes: Processes = SOLO) -> dict | None:
    """The sweep's table (:func:`~diffspace.design.optimize.report.tabulate`); ``None`` on processes other
    than the lead once their chunks are done."""
    if processes.size == 1:
        return sweep_table(builder, problem, samples, progress)
    spec = SweepCases(tuple(sweep_cases(problem, samples)), problem.options["chunk_size"])
    store = ChunkStore(Path(out) / "store" / "sweep")
    if compute_chunks(builder, spec, store, (), processes, progress, "optimize sweep") is None:
        return None
    parts = [store.load(c, spec, spec.cases(c)) for c in range(spec.n_chunks)]
    shutil.rmtree(store.directory)
    return tabulate(problem, list(spec.all_cases), parts)
