"""`import diffspace` changes no XLA setting of the process; the command line sets its own flag only for the
jaxlib releases known to accept it, before JAX starts its backend."""

import os
import subprocess
import sys

import jaxlib
import pytest

from diffspace.app.xla_flags import CLASSIC_EMITTERS, command_xla_flags
from diffspace.core.xla_options import CLASSIC_EMITTERS_JAXLIB, release

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


def test_diffspace_compiles_its_own_programs_with_the_option_and_leaves_the_users_alone(tmp_path):
    """In a Python program the option is a compile option of diffspace's own programs (a stored program's call),
    accepted by this jaxlib where the rule gives it (the oldest-JAX job runs this file too); the process's
    ``XLA_FLAGS`` stays untouched."""
    code = f"""
import os, jax, jax.numpy as jnp, jaxlib, diffspace
from diffspace.core.xla_options import classic_emitters_wanted, program_options
from diffspace.design import stored
stored.set_directory({str(tmp_path)!r})
double = stored.stored_jit(lambda x: 2.0 * x)
assert float(double(jnp.arange(3.0))[2]) == 4.0  # compiled with the option where it is given
(program,) = stored._LOADED.values()
assert "call" in vars(program)  # the stored program ran through diffspace's own jitted call
wanted = classic_emitters_wanted(os.environ, jaxlib.__version__)
assert program_options() == ({{"xla_cpu_use_fusion_emitters": False}} if wanted else None)
print(wanted, os.environ.get("XLA_FLAGS"))
"""
    wanted, flags = _python(code).split(" ")
    lowest, beyond = CLASSIC_EMITTERS_JAXLIB
    assert wanted == str(lowest <= release(jaxlib.__version__) < beyond)
    assert flags == "None"
    # a user's XLA_FLAGS naming the flag, or DIFFSPACE_XLA_DEFAULTS=0, turns the option off
    assert _python(code, XLA_FLAGS="--xla_cpu_use_fusion_emitters=true").startswith("False")
    assert _python(code, DIFFSPACE_XLA_DEFAULTS="0").startswith("False")
