"""The persistent compilation cache of the command line: the second run of a scenario skips its compile.

On by default for ``diffspace`` commands, in a per-user directory (``$DIFFSPACE_CACHE_DIR``, else
``$XDG_CACHE_HOME/diffspace/jax``, else ``~/.cache/diffspace/jax``); off with ``--no-cache`` or
``DIFFSPACE_NO_CACHE=1``. A Python program opts in with ``diffspace.enable_cache()`` (same directory).
Several processes may share it: JAX's cache then runs with a size bound, which makes every read and write take
an inter-process file lock (``filelock``), so no process reads an entry another is still writing (without the
bound JAX writes entries unlocked, and concurrent runs crashed on half-written entries). Every program is
cached, however small (``DIFFSPACE_CACHE_MIN_COMPILE_S``, default 0, sets a threshold): loading a scenario runs
~90 small eager programs, and a warm Python session loaded the capture scenario in 1.1 s with them cached
against 2.8 s without (``experiments/user_session.py``). The traced programs of ``diffspace run`` are kept in
its ``traced/`` subdirectory (:mod:`diffspace.design.stored`), so a warm run skips tracing too: the default
study's second run takes ~8 s instead of ~19 s on 2 cores.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..design.stored import set_directory

MAX_BYTES = 4 * 1024**3


def cache_dir() -> Path:
    """The per-user cache directory: ``$DIFFSPACE_CACHE_DIR``, else ``$XDG_CACHE_HOME/diffspace/jax``, else
    ``~/.cache/diffspace/jax``."""
    if os.environ.get("DIFFSPACE_CACHE_DIR"):
        return Path(os.environ["DIFFSPACE_CACHE_DIR"])
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "diffspace" / "jax"


def enable_cache(disabled: bool = False, path: str | Path | None = None) -> Path | None:
    """Turn the persistent compilation cache (and the store of traced programs) on for this process.

    Args:
        disabled: Leave it off (the command line's ``--no-cache``).
        path: The cache directory; ``None``: the per-user one of :func:`cache_dir`.

    Returns:
        The directory, or ``None`` when off (``disabled`` or ``DIFFSPACE_NO_CACHE=1``) or unusable (it cannot
            be created: the process then runs without the cache rather than fail).
    """
    if disabled or os.environ.get("DIFFSPACE_NO_CACHE", "") not in ("", "0"):
        return None
    import jax

    path = cache_dir() if path is None else Path(path).expanduser()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None  # an unwritable home: run without the cache rather than fail
    jax.config.update("jax_compilation_cache_dir", str(path))
    jax.config.update("jax_compilation_cache_max_size", MAX_BYTES)
    jax.config.update("jax_persistent_cache_min_compile_time_secs",
                      float(os.environ.get("DIFFSPACE_CACHE_MIN_COMPILE_S", "0")))
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    set_directory(path / "traced")
    return path
