"""Batched sweeps: ``vmap`` over chunks, sharded across devices, with a resumable on-disk result store.

Each finished chunk is written atomically to ``store/chunk_XXXXX.npz`` before the next starts, so a
Ctrl-C or a kill loses at most the chunk in flight; rerunning the same command skips finished chunks
(after checking that the stored inputs match). Memory is bounded by the chunk size.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

import jax
import numpy as np


def _sharded(batch: np.ndarray):
    """Place a batch with its leading axis split across all visible devices (a no-op on one device)."""
    devices = jax.devices()
    if len(devices) == 1 or batch.shape[0] % len(devices):
        return batch
    mesh = jax.sharding.Mesh(np.array(devices), ("batch",))
    spec = jax.sharding.PartitionSpec("batch", *([None] * (batch.ndim - 1)))
    return jax.device_put(batch, jax.sharding.NamedSharding(mesh, spec))


def run_chunked(
    batch_fn: Callable[[np.ndarray], dict[str, np.ndarray]],
    inputs: np.ndarray,
    chunk_size: int,
    store: Path | None = None,
    progress: bool = True,
    label: str = "sweep",
) -> dict[str, np.ndarray]:
    """Evaluate ``batch_fn`` (a jitted, vmapped function of a ``(B, ...)`` array) over ``inputs`` in chunks.

    The last chunk is padded to ``chunk_size`` (so one compiled shape serves all) and trimmed afterwards.
    Returns the concatenated outputs; with ``store`` the chunks are persisted and reused.
    """
    n = inputs.shape[0]
    n_chunks = -(-n // chunk_size)
    if store is not None:
        store.mkdir(parents=True, exist_ok=True)
    pieces = []
    bar = _progress(n_chunks, label) if progress else None
    for c in range(n_chunks):
        chunk = inputs[c * chunk_size : (c + 1) * chunk_size]
        path = store / f"chunk_{c:05d}.npz" if store is not None else None
        if path is not None and path.exists():
            with np.load(path) as saved:
                if saved["inputs"].shape == chunk.shape and np.array_equal(saved["inputs"], chunk):
                    pieces.append({k: saved[k] for k in saved.files if k != "inputs"})
                    bar and bar.update(1)
                    continue
        padded = np.concatenate([chunk, np.repeat(chunk[-1:], chunk_size - len(chunk), axis=0)])
        out = {k: np.asarray(v)[: len(chunk)] for k, v in batch_fn(_sharded(padded)).items()}
        if path is not None:
            tmp = path.with_suffix(".tmp.npz")
            np.savez(tmp, inputs=chunk, **out)
            os.replace(tmp, path)
        pieces.append(out)
        bar and bar.update(1)
    bar and bar.close()
    return {k: np.concatenate([p[k] for p in pieces]) for k in pieces[0]}


def _progress(total: int, label: str):
    from tqdm import tqdm

    return tqdm(total=total, desc=label, unit="chunk")
