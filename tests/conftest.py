import os
import tempfile

# the command line's persistent compilation cache, private to this test session (inherited by subprocesses)
os.environ.setdefault("DIFFSPACE_CACHE_DIR", tempfile.mkdtemp(prefix="diffspace-test-cache-"))

from diffspace.app.xla_flags import set_command_xla_flags  # noqa: E402

# the test session is the command line's own process (most tests run its commands in-process): the same XLA
# flags, set before JAX starts its backend and inherited by the commands run as subprocesses
set_command_xla_flags()

import diffspace  # noqa: E402,F401  (enables float64 before any test builds arrays)
import pytest  # noqa: E402


def _share_compiled_programs() -> None:
    """JAX's persistent compilation cache in the session's directory for every worker, for programs that take a
    second or more to compile: test files compile the same scenario programs again (after each file's
    `jax.clear_caches`, and in the other worker); reading them back takes a fraction of that (the capture and
    snare-optimize tests of three files: 192 -> 160 s on 2 workers). The traced-program store stays off in-process
    (`_in_process_commands_without_persistent_cache`)."""
    import jax

    from diffspace.app.cache import MAX_BYTES

    jax.config.update("jax_compilation_cache_dir", os.environ["DIFFSPACE_CACHE_DIR"])
    jax.config.update("jax_compilation_cache_max_size", MAX_BYTES)  # bounded: entries are written under a file lock
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 1.0)


_share_compiled_programs()


@pytest.fixture(autouse=True, scope="module")
def _release_compiled_programs():
    """Drop JAX's compiled programs after each test file: a worker runs a dozen files and kept every program they
    compiled, each with its own memory mappings; one worker reached 58,000 of the kernel's 65,530
    (``vm.max_map_count``, 6.7 GB) and XLA aborted or crashed in its next compile or cache write (jaxlib
    0.10.2), which left pytest-xdist waiting for the dead worker."""
    yield
    import gc

    import jax

    jax.clear_caches()
    gc.collect()


@pytest.fixture(autouse=True)
def _in_process_commands_without_persistent_cache(request, monkeypatch):
    """Commands run inside a test worker do not turn on the command line's cache (`enable_cache`: the store of
    traced programs, and a compilation cache of every program however small); the worker shares only the
    compiled programs of a second or more (`_share_compiled_programs`). The commands run as subprocesses use the
    session's cache (the cache tests among them); a test marked ``persistent_cache`` gets the real
    `enable_cache`."""
    if request.node.get_closest_marker("persistent_cache") is None:
        from diffspace.app import cache

        monkeypatch.setattr(cache, "enable_cache", lambda disabled=False, path=None: None)


def forget_programs():
    """A new process's in-memory state of the stored programs (`diffspace.design.stored` and `.composable`): only
    the store directory remains."""
    from diffspace.design import composable, stored

    stored._LOADED.clear()
    composable._SIGNATURES.clear()
    composable._ROWS.clear()
    composable._composable.cache_clear()
    composable._derivative_call.cache_clear()


@pytest.fixture
def program_store(tmp_path, monkeypatch):
    """A fresh store directory for stored programs, and a fresh process's in-memory state (restored after)."""
    from diffspace.design import composable, stored

    monkeypatch.setattr(stored, "_LOADED", {})
    monkeypatch.setattr(composable, "_SIGNATURES", {})
    monkeypatch.setattr(composable, "_ROWS", {})
    monkeypatch.setattr(stored, "_DIRECTORY", tmp_path)
    forget_programs()
    yield tmp_path
    forget_programs()
