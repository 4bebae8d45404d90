"""Checkpoints of a long command's stages: a rerun of the same config resumes after the last finished stage.

``diffspace optimize`` runs in stages (the sweep, the nominal search, the robust search, the dispersed runs of the
out-of-sample check). Each finished stage's result is pickled into ``DIR.partial/store/stages/<name>.pkl``; the
results directory keeps ``DIR.partial`` of an interrupted or failed command whose manifest (command and config
hash, :mod:`diffspace.app.resultdir`) matches, so rerunning the same command with the same config loads the
finished stages instead of computing them again, and says so. A different config never sees them (the results
directory refuses or clears a partial directory of another config). The store is removed once the command has
written its results.
"""

from __future__ import annotations

import os
import pickle
import shutil
import sys
from pathlib import Path
from typing import Callable, TypeVar

T = TypeVar("T")


class StageStore:
    """``store.get(name, compute)``: the stored result of stage ``name``, or ``compute()`` stored."""

    def __init__(self, directory: Path):
        self.directory = Path(directory)

    def get(self, name: str, compute: Callable[[], T]) -> T:
        path = self.directory / f"{name}.pkl"
        if path.is_file():
            print(f"resuming: the {name.replace('_', ' ')} stage is loaded from {path}", file=sys.stderr)
            return pickle.loads(path.read_bytes())
        value = compute()
        self.directory.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(".tmp")
        partial.write_bytes(pickle.dumps(value))
        os.replace(partial, path)
        return value

    def remove(self) -> None:
        """Delete the stored stages (and their parent ``store/`` when nothing else is in it)."""
        shutil.rmtree(self.directory, ignore_errors=True)
        if self.directory.parent.is_dir() and not any(self.directory.parent.iterdir()):
            self.directory.parent.rmdir()
