"""The public Python API: the docstring examples run (doctest, from the repository root), every name in
``diffspace.__all__`` exists and is documented, ``import diffspace`` stays light, ``diffspace.load_scenario``
takes a config dict as well as a file, and ``diffspace.enable_cache`` turns the persistent cache on."""

from __future__ import annotations

import doctest
import importlib
import json
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

import diffspace

ROOT = Path(__file__).resolve().parent.parent
DOCTEST_MODULES = ("diffspace", "diffspace.core.dynamics")
# the main dynamics functions each show a runnable example
EXAMPLES = ("kinematics", "mass_matrix", "forward_dynamics", "inverse_dynamics", "center_of_mass",
            "frame_jacobian", "kinetic_energy", "momentum", "load_scenario")


@pytest.mark.timeout(300)
@pytest.mark.parametrize("module_name", DOCTEST_MODULES)
def test_docstring_examples_run(module_name, monkeypatch):
    monkeypatch.chdir(ROOT)  # the examples name shipped files relative to the repository root
    module = importlib.import_module(module_name)
    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    tests = [t for t in finder.find(module, module_name) if t.examples]
    for test in tests:
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {module_name} (see output)"
    assert result.attempted > 0


def test_main_functions_have_examples():
    finder = doctest.DocTestFinder()
    for name in EXAMPLES:
        found = [t for t in finder.find(getattr(diffspace, name), name) if t.examples]
        assert found, f"diffspace.{name} has no docstring example"


def test_every_public_name_resolves_and_is_documented():
    assert len(set(diffspace.__all__)) == len(diffspace.__all__)
    for name in diffspace.__all__:
        value = getattr(diffspace, name)
        assert (value.__doc__ or "").strip(), f"diffspace.{name} has no docstring"
    assert set(diffspace.__all__) >= {"load_scenario", "enable_cache", "ConfigError", "SolverFailure", "Status",
                                      "Robot", "LinkTree", "build_robot", "compile_robot", "load_robot", "Drive",
                                      "RestToRest", "Tabulated", "forward_dynamics", "mass_matrix"}


def _python(code: str, env: dict | None = None) -> str:
    import os

    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env={**os.environ, **(env or {})})
    assert run.returncode == 0, run.stderr[-2000:]
    return run.stdout


def test_import_loads_only_the_dynamics_core():
    """``import diffspace`` imports neither the scenarios nor the design layer nor the command line: they
    load on the first call of ``load_scenario`` / ``enable_cache``."""
    code = ("import sys, diffspace; print(sorted({m.split('.')[1] for m in sys.modules if m.startswith('diffspace.')}))"
            "; diffspace.load_scenario('configs/free_floating.toml'); print('diffspace.scenarios' in sys.modules)")
    before, after = _python(code).splitlines()
    assert set(eval(before)) <= {"core", "actuation", "io"}, before
    assert after == "True"


def test_enable_cache_turns_on_the_persistent_cache(tmp_path):
    """In a fresh process (the setting is global to JAX): the default directory comes from
    ``DIFFSPACE_CACHE_DIR``, an explicit one wins, ``DIFFSPACE_NO_CACHE=1`` leaves it off."""
    code = ("import json, jax, diffspace; d = diffspace.enable_cache({arg}); "
            "print(json.dumps([str(d) if d else None, jax.config.jax_compilation_cache_dir]))")
    on = {"DIFFSPACE_CACHE_DIR": str(tmp_path / "env"), "DIFFSPACE_NO_CACHE": ""}
    default = json.loads(_python(code.format(arg=""), on))
    assert default == [str(tmp_path / "env")] * 2 and (tmp_path / "env").is_dir()
    explicit = json.loads(_python(code.format(arg=repr(str(tmp_path / "mine"))), on))
    assert explicit == [str(tmp_path / "mine")] * 2
    off = json.loads(_python(code.format(arg=""), {"DIFFSPACE_NO_CACHE": "1"}))
    assert off[0] is None and off[1] != str(tmp_path / "env")


def test_load_scenario_from_a_dict_matches_the_file(monkeypatch):
    monkeypatch.chdir(ROOT)
    path = ROOT / "configs" / "free_floating.toml"
    config = tomllib.loads(path.read_text())
    config["robot"]["path"] = "configs/robots/generic_arm7.urdf"  # relative to the current directory
    given = json.dumps(config, sort_keys=True)
    overrides = ["motion.torque_period_s=3.5"]
    from_dict = diffspace.load_scenario(config, overrides)
    from_file = diffspace.load_scenario(path, overrides)
    assert json.dumps(config, sort_keys=True) == given  # the caller's dict is not modified
    assert from_dict.design_values() == from_file.design_values()
    assert from_dict.design_values()["motion.torque_period_s"] == 3.5
    np.testing.assert_array_equal(np.asarray(from_dict.q0), np.asarray(from_file.q0))
    config["motion"]["bogus_key"] = 1.0
    with pytest.raises(diffspace.ConfigError, match="motion.bogus_key: unknown key"):
        diffspace.load_scenario(config)
