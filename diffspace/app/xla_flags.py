"""XLA settings of the command line's own process (never of a program that imports diffspace).

The ``diffspace`` command asks XLA's CPU backend for its classic loop emitters
(``--xla_cpu_use_fusion_emitters=false``) for every program of its process: on the dynamics kernels and the
scenarios' solves they compile faster than the newer MLIR emitters and run as fast (``diffspace bench``). An XLA
that does not know a flag aborts the process at its first computation, and newer XLA releases retired this one,
so the flag is added under the rule of `diffspace.core.xla_options` (the jaxlib releases the tests run it on,
not where the user's own ``XLA_FLAGS`` names it, not with ``DIFFSPACE_XLA_DEFAULTS=0``), and only before JAX
has started its backend (``XLA_FLAGS`` is read once, then). A Python program gets the option per program
instead, on the programs diffspace compiles for it (`diffspace.core.xla_options.program_options`).
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping

from ..core.xla_options import CLASSIC_EMITTERS_OPTION, classic_emitters_wanted

CLASSIC_EMITTERS = f"--{CLASSIC_EMITTERS_OPTION}=false"


def command_xla_flags(environ: MutableMapping[str, str], jaxlib_version: str) -> str | None:
    """The ``XLA_FLAGS`` value the command line's process should run with, or ``None`` to leave it as it is."""
    if not classic_emitters_wanted(environ, jaxlib_version):
        return None
    return f"{environ.get('XLA_FLAGS', '')} {CLASSIC_EMITTERS}".strip()


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
