"""The command line's persistent compilation cache: two processes filling the same cache at once both finish
with identical results, and a later run reads the entries they wrote (issue 14, warm starts)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from .toy_scenario import cli_process

CONFIG = Path(__file__).resolve().parent.parent / "configs" / "impact_airtable.toml"


@pytest.mark.timeout(1200)
def test_concurrent_processes_share_the_cache(tmp_path):
    # only programs compiling in over 0.5 s are cached: an entry means the scenario's own program was (JAX never
    # caches a program with a host callback, e.g. an Equinox runtime check left in "raise" mode)
    env = {"DIFFSPACE_CACHE_DIR": str(tmp_path / "cache"), "DIFFSPACE_CACHE_MIN_COMPILE_S": "0.5"}
    outs = [tmp_path / f"run{i}" for i in range(2)]
    procs = [cli_process(["run", str(CONFIG), "--out", str(out), "--quiet"], env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True) for out in outs]
    for proc in procs:
        _, err = proc.communicate(timeout=1100)
        assert proc.returncode == 0, err
    first, second = (json.loads((out / "summary.json").read_text()) for out in outs)
    assert first == second
    entries = list((tmp_path / "cache").glob("*-cache"))
    assert entries, "the scenario's compiled program was not cached"
    again = cli_process(["run", str(CONFIG), "--out", str(tmp_path / "warm"), "--quiet"], env=env,
                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert again.wait(timeout=600) == 0
    assert json.loads((tmp_path / "warm" / "summary.json").read_text()) == first
    assert len(list((tmp_path / "cache").glob("*-cache"))) == len(entries)  # nothing compiled afresh
    assert len(list((tmp_path / "cache" / "traced").glob("*.program"))) == 1  # one traced program, reused


@pytest.mark.persistent_cache
def test_no_cache_flag_and_environment(tmp_path, monkeypatch):
    from diffspace.app.cache import enable_cache

    monkeypatch.setenv("DIFFSPACE_NO_CACHE", "1")
    assert enable_cache() is None
    monkeypatch.setenv("DIFFSPACE_NO_CACHE", "0")
    assert enable_cache(disabled=True) is None


class _Law(eqx.Module):
    stiffness: jax.Array
    kind: str = eqx.field(static=True)

    def force(self, x):
        return self.stiffness * x**3 if self.kind == "cubic" else self.stiffness * x


def _forces(law: _Law, x):
    return {"force": law.force(x), "energy": jnp.sum(law.force(x) * x)}


def test_stored_programs_are_reused_across_processes_and_keyed_by_static_data(tmp_path, monkeypatch):
    """A stored program gives the results of ``eqx.filter_jit``; a new process (simulated by clearing the
    in-memory table) loads it without tracing; other static data or shapes get their own entries."""
    from diffspace.design import stored

    monkeypatch.setattr(stored, "_LOADED", {})
    stored.set_directory(tmp_path)
    try:
        fn = stored.stored_jit(_forces)
        law, x = _Law(jnp.asarray(2.0), "cubic"), jnp.linspace(0.0, 1.0, 5)
        first = fn(law, x)
        expected = eqx.filter_jit(_forces)(law, x)
        assert set(first) == {"force", "energy"}
        np.testing.assert_array_equal(first["force"], expected["force"])
        assert len(list(tmp_path.glob("*.program"))) == 1
        stored._LOADED.clear()

        def no_trace(*args):
            raise AssertionError("traced again")

        monkeypatch.setattr(stored, "_export", no_trace)
        again = fn(_Law(jnp.asarray(3.0), "cubic"), x)  # new array values: the same program
        np.testing.assert_allclose(again["force"], 3.0 * x**3, rtol=1e-15)
        monkeypatch.undo()
        monkeypatch.setattr(stored, "_LOADED", {})
        stored.set_directory(tmp_path)
        linear = fn(_Law(jnp.asarray(2.0), "linear"), x)  # other static data
        np.testing.assert_allclose(linear["force"], 2.0 * x, rtol=1e-15)
        fn(law, jnp.linspace(0.0, 1.0, 7))  # other shapes
        assert len(list(tmp_path.glob("*.program"))) == 3
        (next(tmp_path.glob("*.program"))).write_bytes(b"truncated")  # a corrupt entry is traced afresh
        stored._LOADED.clear()
        for kind, n in (("cubic", 5), ("linear", 5), ("cubic", 7)):
            out = fn(_Law(jnp.asarray(2.0), kind), jnp.linspace(0.0, 1.0, n))
            assert np.all(np.isfinite(out["force"]))
    finally:
        stored.set_directory(None)


def test_a_program_that_cannot_be_exported_runs_as_an_ordinary_jit(tmp_path, monkeypatch):
    """A host callback has no serialisation guarantee: the call falls back to ``eqx.filter_jit``, stores nothing."""
    from diffspace.design import stored

    def with_callback(x):
        return jax.pure_callback(lambda y: np.asarray(y) * 2.0, jax.ShapeDtypeStruct(x.shape, x.dtype), x) + 1.0

    monkeypatch.setattr(stored, "_LOADED", {})
    stored.set_directory(tmp_path)
    try:
        out = stored.stored_jit(with_callback)(jnp.arange(3.0))
    finally:
        stored.set_directory(None)
    np.testing.assert_array_equal(out, [1.0, 3.0, 5.0])
    assert not list(tmp_path.iterdir())
