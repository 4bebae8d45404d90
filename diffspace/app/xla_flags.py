"""XLA settings of the command line's own process (never of a program that imports diffspace).

The ``diffspace`` command asks XLA's CPU backend for its classic loop emitters
(``--xla_cpu_use_fusion_emitters=false``): on the dynamics kernels and the scenarios' solves they compile about
twice as fast as the newer MLIR emitters and run as fast (``diffspace bench``). An XLA that does not know a flag
aborts the process at its first computation, and newer XLA releases retired this one, so the flag is added only
for the jaxlib releases in :data:`CLASSIC_EMITTERS_JAXLIB` (the range the tests run it on), only when the user's
own ``XLA_FLAGS`` does not name it, unless ``DIFFSPACE_XLA_DEFAULTS=0``, and only before JAX has started its
backend (``XLA_FLAGS`` is read once, then).
"""

from __future__ import annotations

import os
import re
from collections.abc import MutableMapping

CLASSIC_EMITTERS = "--xla_cpu_use_fusion_emitters=false"
#: jaxlib releases (lowest included, highest excluded) known to accept :data:`CLASSIC_EMITTERS`.
CLASSIC_EMITTERS_JAXLIB = ((0, 9, 0), (0, 11, 0))


def release(version: str) -> tuple[int, int, int]:
    """The numeric release of a version string (``"0.10.2"``, ``"0.11.0.dev20260101"`` -> its first three
    numbers)."""
    numbers = [int(part) for part in re.findall(r"\d+", version)[:3]]
    return tuple(numbers + [0] * (3 - len(numbers)))


def command_xla_flags(environ: MutableMapping[str, str], jaxlib_version: str) -> str | None:
    """The ``XLA_FLAGS`` value the command line's process should run with, or ``None`` to leave it as it is."""
    flags = environ.get("XLA_FLAGS", "")
    lowest, beyond = CLASSIC_EMITTERS_JAXLIB
    if environ.get("DIFFSPACE_XLA_DEFAULTS", "1") == "0" or "xla_cpu_use_fusion_emitters" in flags:
        return None
    if not lowest <= release(jaxlib_version) < beyond:
        return None
    return f"{flags} {CLASSIC_EMITTERS}".strip()


def backend_started() -> bool:
    """Whether JAX has created its backends (after which ``XLA_FLAGS`` has no effect)."""
    from jax._src import xla_bridge

    return bool(getattr(xla_bridge, "_backends", None))


def set_command_xla_flags() -> None:
    """Put :func:`command_xla_flags` into this process's environment, if JAX has not started its backend yet."""
    import jaxlib

    flags = command_xla_flags(os.environ, jaxlib.__version__)
    if flags is not None and not backend_started():
        os.environ["XLA_FLAGS"] = flags
