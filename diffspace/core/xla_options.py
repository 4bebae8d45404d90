"""XLA options of diffspace's own compiled programs, set per program (never for the process).

XLA's CPU backend compiles the scenarios' programs about a quarter faster with its classic loop emitters than
with the newer MLIR fusion emitters, and they run as fast (the capture's forward program: 7.1-7.6 s against
9.2-9.9 s to compile, 2-core CPU, jaxlib 0.10.2). The command line asks for them in its own process's
``XLA_FLAGS`` (`diffspace.app.xla_flags`); a Python program that imports diffspace keeps its own settings, and
the programs diffspace compiles for it (a stored program's call, `diffspace.simulate`, `diffspace.metric_gradient`)
get the option as a compile option of that one program instead: a user's own ``jax.jit`` is compiled as the
user set it. XLA releases that retired the option reject it, so it is given only for the jaxlib releases in
:data:`CLASSIC_EMITTERS_JAXLIB` (the range the tests run), on the CPU backend, unless the process's
``XLA_FLAGS`` names it or ``DIFFSPACE_XLA_DEFAULTS=0``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

CLASSIC_EMITTERS_OPTION = "xla_cpu_use_fusion_emitters"
#: jaxlib releases (lowest included, highest excluded) known to accept :data:`CLASSIC_EMITTERS_OPTION`.
CLASSIC_EMITTERS_JAXLIB = ((0, 9, 0), (0, 11, 0))


def release(version: str) -> tuple[int, int, int]:
    """The numeric release of a version string (``"0.10.2"``, ``"0.11.0.dev20260101"`` -> its first three
    numbers)."""
    numbers = [int(part) for part in re.findall(r"\d+", version)[:3]]
    return tuple(numbers + [0] * (3 - len(numbers)))


def classic_emitters_wanted(environ: Mapping[str, str], jaxlib_version: str) -> bool:
    """Whether diffspace asks for the classic emitters: a jaxlib that accepts the option, a user who neither
    named it in ``XLA_FLAGS`` nor set ``DIFFSPACE_XLA_DEFAULTS=0``."""
    lowest, beyond = CLASSIC_EMITTERS_JAXLIB
    return (environ.get("DIFFSPACE_XLA_DEFAULTS", "1") != "0"
            and CLASSIC_EMITTERS_OPTION not in environ.get("XLA_FLAGS", "")
            and lowest <= release(jaxlib_version) < beyond)


def program_options() -> dict[str, bool] | None:
    """The compile options of a program diffspace compiles itself on the default backend (``jax.jit(...,
    compiler_options=...)``): the classic emitters on a CPU where :func:`classic_emitters_wanted`, else
    ``None``."""
    import jax
    import jaxlib

    if jax.default_backend() != "cpu" or not classic_emitters_wanted(os.environ, jaxlib.__version__):
        return None
    return {CLASSIC_EMITTERS_OPTION: False}
