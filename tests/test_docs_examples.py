"""Python examples of the documentation run as printed.

* The guide "Writing a new scenario" (docs/guides/new-scenario.md): its complete bouncing-ball scenario,
  registered at run time and loaded from a config in memory; first bounce and rebound speed equal the closed
  forms t1 = sqrt(2 h0 / g) and v = e sqrt(2 g h0), and jax.grad of the rebound speed with respect to the
  restitution equals sqrt(2 g h0).
* The ejection page: jax.grad of the stable velocity with respect to the spring stiffness against a central
  difference (the assertion is in the page's block).
"""

from __future__ import annotations

import importlib
import math
import re
import sys
from pathlib import Path

import jax
import pytest

from diffspace import scenarios

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "guides" / "new-scenario.md"
G = 9.81


def _scenario_block() -> str:
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), flags=re.S)
    found = [b for b in blocks if "class Bounce(AbstractScenario)" in b]
    assert len(found) == 1, "the guide's complete scenario block is missing"
    return found[0]


@pytest.mark.timeout(300)
def test_new_scenario_guide_example_runs_and_matches_closed_forms(tmp_path, monkeypatch):
    (tmp_path / "bounce.py").write_text(_scenario_block())
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(scenarios.REGISTRY, "bounce", ("ball", "bounce:Bounce"))
    sys.modules.pop("bounce", None)
    importlib.invalidate_caches()
    scenario = scenarios.load_scenario({"ball": {"drop_height_m": 1.0, "restitution": 0.8},
                                        "simulation": {"t_final_s": 3.0}})
    outcome = jax.jit(lambda params: scenario.simulate(params))(scenario.params)
    summary = scenario.summary(outcome)
    assert summary["status"] == "ok", summary
    assert summary["first_bounce_time_s"] == pytest.approx(math.sqrt(2.0 / G), rel=1e-10)
    assert summary["rebound_speed_m_s"] == pytest.approx(0.8 * math.sqrt(2.0 * G), rel=1e-10)

    def rebound(restitution):
        params = scenario.with_design(scenario.params, {"ball.restitution": restitution})
        return scenario.metrics(params)["rebound_speed_m_s"]

    assert float(jax.jit(jax.grad(rebound))(0.8)) == pytest.approx(math.sqrt(2.0 * G), rel=1e-9)


@pytest.mark.slow  # 40-80 s; the ejection's gradient against central differences is also in test_conformance
@pytest.mark.timeout(600)
def test_ejection_page_python_example_runs(monkeypatch, tmp_path):
    """The ejection page's Python block (simulate, then jax.grad of the stable velocity with respect to the
    spring stiffness against a central difference, asserted in the block) runs as written."""
    page = (ROOT / "docs" / "scenarios" / "ejection.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", page, flags=re.S)
    assert len(blocks) == 1 and "jax.grad" in blocks[0]
    monkeypatch.chdir(ROOT)
    exec(compile(blocks[0], "docs/scenarios/ejection.md", "exec"), {"__name__": "ejection_page"})
