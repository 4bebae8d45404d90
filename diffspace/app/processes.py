"""Joining the processes of a distributed ``sweep`` / ``montecarlo`` / ``optimize`` job, and their shared
results directory (how they split the work: :mod:`diffspace.design.distributed`).

``--distributed``: JAX's own cluster detection (SLURM, Open MPI, Kubernetes, ...) finds the coordinator, the
process count and this process's id; ``--coordinator HOST:PORT --num-processes N --process-id I`` give them
(explicit values also override what is detected). Before joining, the processes check in with process 0
(:mod:`.rendezvous`), so that one that never starts ends the others within ``--coordinator-timeout`` seconds
with one line (exit 2). Process 0 runs the coordination service. The runtime is
started in recoverable mode, so a process that dies does not take the others down: they finish the work and
process 0 completes the chunk the dead process had in flight.

:func:`join` must run before anything initialises JAX's backend: on a GPU cluster it restricts each process
to its own GPU (JAX's one-device-per-process default under SLURM / Open MPI). The backend itself stays
per-process (each process computes its chunks on its own devices), which is why the runtime is joined
through its own ``State`` rather than ``jax.distributed.initialize``, whose global device list would make a
chunk's arrays span other processes' devices.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

from ..core.status import ConfigError
from .rendezvous import gather

DEFAULT_TIMEOUT_S = 120.0  # --coordinator-timeout


def _flags(args) -> tuple[bool, str | None, int | None, int | None]:
    """``(--distributed, --coordinator, --num-processes, --process-id)``, checked (commands without these
    flags run alone)."""
    auto = getattr(args, "distributed", False)
    coordinator, count, rank = (getattr(args, k, None) for k in ("coordinator", "num_processes", "process_id"))
    if not auto and (coordinator, count, rank) != (None, None, None) and None in (coordinator, count, rank):
        raise ConfigError("--coordinator, --num-processes and --process-id go together (or use --distributed "
                          "to detect them from SLURM, Open MPI or Kubernetes)")
    if count is not None and count < 1:
        raise ConfigError(f"--num-processes must be at least 1, got {count}")
    if rank is not None and (rank < 0 or count is not None and rank >= count):
        raise ConfigError(f"--process-id must lie in 0..N-1 for --num-processes N, got {rank}")
    return auto, coordinator, count, rank


@contextlib.contextmanager
def joined(args) -> Iterator[tuple | None]:
    """``(client, process id, process count)`` of this job for the duration of the command, or ``None``
    when it runs alone."""
    auto, coordinator, count, rank = _flags(args)
    if not auto and coordinator is None:
        yield None
        return
    import jax
    from jax._src import clusters, distributed

    timeout_s = getattr(args, "coordinator_timeout", DEFAULT_TIMEOUT_S)
    if not timeout_s > 0:
        raise ConfigError(f"--coordinator-timeout must be > 0 seconds, got {timeout_s:g}")
    try:
        coordinator, count, rank, _ = clusters.ClusterEnv.auto_detect_unset_distributed_params(
            coordinator, count, rank, None, None, None)
    except (ValueError, TypeError, RuntimeError):
        pass  # nothing detected: JAX's join says what is missing, below
    if None not in (coordinator, count, rank):
        gather(coordinator, count, rank, timeout_s)  # a missing peer: one line, exit 2 (see rendezvous)
    jax.config.update("jax_enable_recoverability", True)
    state = distributed.State()
    try:
        state.initialize(coordinator, count, rank, initialization_timeout=max(int(timeout_s), 10))
    except (ValueError, TypeError) as err:  # nothing detected and nothing given
        raise ConfigError(f"--distributed: {err} (no cluster detected: give --coordinator, --num-processes and "
                          "--process-id)") from None
    try:
        yield state.client, state.process_id, state.num_processes
    finally:
        state.shutdown()


@contextlib.contextmanager
def shared_result_dir(make: Callable, processes) -> Iterator[Path]:
    """The working directory of every process: process 0 prepares it (``make()`` is its
    :class:`~diffspace.app.resultdir.ResultDir`: checks, resumable store, manifest) and, once the command
    returns, commits it; the others start once it is prepared, work in it and never commit or delete it."""
    if not processes.lead:
        state = processes.wait_for("prepared")
        if state != "ok":
            raise ConfigError(state)
        yield make().partial
        return
    announced = False
    try:
        with make() as work:
            processes.announce("prepared", "ok")
            announced = True
            yield work
    except BaseException as err:
        if not announced:  # the others are waiting for the directory: tell them why it will not come
            processes.announce("prepared", str(err) if isinstance(err, ConfigError) else
                               f"process 0 could not prepare the results directory ({type(err).__name__})")
        raise
