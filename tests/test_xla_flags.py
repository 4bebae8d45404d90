"""`import diffspace` changes no XLA setting of the process; the command line sets its own flag only for the
jaxlib releases known to accept it, before JAX starts its backend."""

import os
import subprocess
import sys

import jaxlib
import pytest

from diffspace.app.xla_flags import CLASSIC_EMITTERS, CLASSIC_EMITTERS_JAXLIB, command_xla_flags, release

pytestmark = pytest.mark.timeout(180)


def _python(code: str, **env) -> str:
    environ = {key: value for key, value in os.environ.items() if key not in ("XLA_FLAGS", "DIFFSPACE_XLA_DEFAULTS")}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=150,
                            env={**environ, **env})
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout.strip()


def test_import_changes_no_xla_flag():
    code = ("import os, diffspace, jax.numpy as jnp; float(jnp.ones(3).sum()); "
            "print(repr(os.environ.get('XLA_FLAGS')))")
    assert _python(code) == "None"
    assert _python(code, XLA_FLAGS="--xla_dump_to=/nonexistent") == repr("--xla_dump_to=/nonexistent")


def test_the_command_line_sets_its_flag_before_jax_starts():
    """The entry point's imports start no backend, so the flag takes effect; a computation then runs."""
    code = ("import os; from diffspace.app import cli; from diffspace.app.xla_flags import backend_started, "
            "set_command_xla_flags; started = backend_started(); set_command_xla_flags(); "
            "import jax.numpy as jnp; print(started, float(jnp.arange(4.0).sum()), os.environ.get('XLA_FLAGS'))")
    started, total, flags = _python(code).split(" ", 2)
    assert (started, total) == ("False", "6.0")
    lowest, beyond = CLASSIC_EMITTERS_JAXLIB
    assert (flags == CLASSIC_EMITTERS) == (lowest <= release(jaxlib.__version__) < beyond)


def test_flag_rules():
    assert command_xla_flags({}, "0.10.2") == CLASSIC_EMITTERS
    assert command_xla_flags({"XLA_FLAGS": "--a=1"}, "0.10.2") == f"--a=1 {CLASSIC_EMITTERS}"
    assert command_xla_flags({}, "0.11.2") is None  # a release that retired the flag would abort
    assert command_xla_flags({"XLA_FLAGS": "--xla_cpu_use_fusion_emitters=true"}, "0.10.2") is None
    assert command_xla_flags({"DIFFSPACE_XLA_DEFAULTS": "0"}, "0.10.2") is None
    assert release("0.11.0.dev20260101") == (0, 11, 0) and release("0.9") == (0, 9, 0)
