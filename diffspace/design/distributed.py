"""Several processes sharing one chunked command (``sweep``, ``montecarlo``, ``optimize``'s sweep stage).

The processes of one job are joined through JAX's distributed runtime (its coordination service, started by
the command line: :mod:`diffspace.app.processes`) and share one results directory on a shared filesystem.
They split the chunks dynamically: a process *claims* the next chunk index from a counter held by the
coordination service (an atomic increment), so every chunk is handed to exactly one process and a faster
process simply takes more chunks. A claimed chunk already in the chunk store (a resumed run) is skipped; a
computed one is written to the store before the next claim. When the counter runs past the last chunk a
process reports how many cases it computed and joins the runtime's live-task query, which returns once every
live process has joined it (a dead process is dropped after the runtime's heartbeat timeout). The *lead*
(process 0) prepares the results directory before anyone starts, joins the same query after its own chunks,
computes any chunk a stopped process left unfinished (its chunk in flight), and writes the results.

Each process evaluates its chunks on its own devices (a chunk's cases are independent: no collective ever
runs across processes), so the processes do not form one global device mesh and a slow or lost process
never stalls the others' computations.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator

from jax.errors import JaxRuntimeError

from ..core.status import ConfigError

POLL_S = 0.2  # how often a waiting process asks the coordination service
_PREFIX = "diffspace/"


class Processes:
    """One process alone (the default): every chunk is its own, nobody to wait for."""

    rank: int = 0
    size: int = 1

    @property
    def lead(self) -> bool:
        return self.rank == 0

    def claims(self, n_chunks: int) -> Iterator[int]:
        """The chunk indices this process computes, in claim order."""
        return iter(range(n_chunks))

    def announce(self, name: str, value: str) -> None:
        """The lead publishes ``value`` under ``name`` (nothing to do alone)."""

    def wait_for(self, name: str) -> str:
        """The value the lead published under ``name`` (alone: there is no one else to wait for)."""
        return "ok"

    def finish(self, computed: int) -> None:
        """Report that this process has no chunk left, having computed ``computed`` cases."""
        self._computed = computed

    def gather(self) -> dict[int, int | None]:
        """(Lead) cases computed by each process once all have finished; ``None`` for a process that stopped
        before finishing."""
        return {0: getattr(self, "_computed", 0)}


SOLO = Processes()


class CoordinatedProcesses(Processes):
    """Process ``rank`` of ``size`` joined through a JAX distributed-runtime ``client`` (key-value store,
    atomic counter, live tasks); see the module docstring."""

    def __init__(self, client, rank: int, size: int):
        self.client, self.rank, self.size = client, rank, size

    def claims(self, n_chunks: int) -> Iterator[int]:
        while True:
            chunk = int(self.client.key_value_increment(_PREFIX + "next_chunk", 1)) - 1
            if chunk >= n_chunks:
                return
            yield chunk

    def announce(self, name: str, value: str) -> None:
        self.client.key_value_set(_PREFIX + name, value)

    def _get(self, name: str) -> str | None:
        try:
            return self.client.key_value_try_get(_PREFIX + name)
        except JaxRuntimeError as err:  # one error type for every failure: NOT_FOUND is absence
            if "NOT_FOUND" in str(err):
                return None
            raise ConfigError(f"lost the coordination service of process 0 ({str(err).splitlines()[0]}); "
                              "rerun the job to resume") from None

    def wait_for(self, name: str) -> str:
        while (value := self._get(name)) is None:
            time.sleep(POLL_S)
        return value

    def _survivors(self) -> set[int]:
        """The processes still alive, once every one of them has called this (the runtime's live-task query
        is collective: it returns when all live processes have asked, a dead one being dropped after the
        runtime's heartbeat timeout)."""
        return set(self.client.get_live_nodes(list(range(self.size))))

    def finish(self, computed: int) -> None:
        self.client.key_value_set(f"{_PREFIX}finished/{self.rank}", str(computed))
        if not self.lead:
            self._survivors()  # the lead learns who finished from this call

    def gather(self) -> dict[int, int | None]:
        self._survivors()  # every live process has finished: each reports before it joins this call
        reported: dict[int, int | None] = {}
        for rank in range(self.size):
            value = self._get(f"finished/{rank}")
            reported[rank] = None if value is None else int(value)
            if value is None:
                print(f"warning: process {rank} stopped before finishing; process 0 computes the chunk it "
                      "left unfinished", file=sys.stderr)
        return reported
