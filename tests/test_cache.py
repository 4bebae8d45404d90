"""The command line's persistent compilation cache: two processes filling the same cache at once both finish
with identical results, and a later run reads the entries they wrote (issue 14, warm starts)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from toy_scenario import cli_process

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


def test_no_cache_flag_and_environment(tmp_path, monkeypatch):
    from diffspace.app.cache import enable_cache

    monkeypatch.setenv("DIFFSPACE_NO_CACHE", "1")
    assert enable_cache() is None
    monkeypatch.setenv("DIFFSPACE_NO_CACHE", "0")
    assert enable_cache(disabled=True) is None
