"""The documentation against the code: every ``configs/<file>`` a page names exists, and the metric names the
scenario pages docs/scenarios/{ejection,free_floating,impact,capture,capture_snare}.md list (the paragraph
"Metric names ...") are exactly the keys their scenario's ``metrics()`` returns (the config-table markers are
checked in test_docs.py).

The keys are read from the source of ``metrics()`` (the string keys of its dict literals and subscript
assignments), so nothing is imported or compiled; the ejection's per-joint keys are generated
(``joint<j>_change_at_separation_<unit>``), so the page's joint keys are checked against that pattern and
against the free joints of ``configs/ejection_plane.toml``.
"""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
from importlib import import_module
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = {  # page -> scenario module, class
    "ejection": ("diffspace.scenarios.ejection.scenario", "Ejection"),
    "free_floating": ("diffspace.scenarios.free_floating.scenario", "FreeFloating"),
    "impact": ("diffspace.scenarios.impact.scenario", "Impact"),
    "capture": ("diffspace.scenarios.capture.scenario", "Capture"),
    "capture_snare": ("diffspace.scenarios.capture_snare.scenario", "CaptureSnare"),
}
JOINT_KEY = re.compile(r"joint(\d+)_change_(at_separation|final)_(deg|m)")
PLANE_FREE_JOINTS = {2, 4, 6}  # configs/ejection_plane.toml locks joints 1, 3, 5, 7


def page(name: str) -> str:
    return (ROOT / "docs" / "scenarios" / f"{name}.md").read_text()


def listed_metrics(text: str) -> set[str]:
    """The backticked names of the "Metric names" paragraph, up to "The headline"."""
    match = re.search(r"^Metric names.*?(?=The headline)", text, flags=re.S | re.M)
    assert match, "no 'Metric names ... The headline' paragraph"
    names = set(re.findall(r"`([A-Za-z0-9_]+)`", match.group(0)))
    return names - {"sweep", "optimize", "fit"}


def metrics_keys(module: str, cls: str) -> set[str]:
    """String keys that ``cls.metrics`` puts into its result (dict literals and ``d["key"] = ...``)."""
    source = textwrap.dedent(inspect.getsource(getattr(import_module(module), cls).metrics))
    keys = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Dict):
            keys |= {k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store) and isinstance(node.slice, ast.Constant):
            keys.add(node.slice.value)
    return keys - {"status", "outcome"}  # the outcome is not a metric: its own column


@pytest.mark.parametrize("path", sorted(p.relative_to(ROOT) for p in (ROOT / "docs").rglob("*.md")), ids=str)
def test_every_config_a_page_names_exists(path):
    configs = set(re.findall(r"configs/[A-Za-z0-9_/]+\.(?:toml|urdf)", (ROOT / path).read_text()))
    missing = sorted(c for c in configs if not (ROOT / c).is_file())
    assert not missing, missing


@pytest.mark.parametrize("name", sorted(PAGES))
def test_page_metric_names_match_the_scenario(name):
    listed = listed_metrics(page(name))
    joint_keys = {k for k in listed if JOINT_KEY.fullmatch(k)}
    assert listed - joint_keys == metrics_keys(*PAGES[name])
    if name == "ejection":  # generated per free joint by joint_column(robot, j, stem)
        assert {int(JOINT_KEY.fullmatch(k).group(1)) for k in joint_keys} == PLANE_FREE_JOINTS
    else:
        assert not joint_keys
