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
    """Commands run inside a test worker leave JAX's persistent cache off: they would fill the session's cache
    with hundreds of in-process programs that no later subprocess reuses. The commands run as subprocesses use
    the session's cache (the cache tests among them); a test marked ``persistent_cache`` gets the real
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
