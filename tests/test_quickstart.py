"""docs/quickstart.md runs as written: its Python blocks, in order, in one namespace, in a fresh Python process
started in the repository root (as a reader would), with the compilation cache pointed at a temporary
directory. The page's own asserts check the physics it shows (a free-floating system's centre of mass stays
put; ``jax.grad`` equals a central finite difference; the batched run equals the single one)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "quickstart.md"
BLOCK = re.compile(r"^```python\n(.*?)^```$", re.DOTALL | re.MULTILINE)


def python_blocks(text: str) -> list[tuple[int, str]]:
    """The page's ```python blocks with the line number of their first line."""
    return [(text.count("\n", 0, match.start(1)) + 1, match.group(1)) for match in BLOCK.finditer(text)]


def session_script(blocks: list[tuple[int, str]]) -> str:
    """A script executing the blocks in order in one namespace; a traceback names the page line's block."""
    calls = "".join(f"exec(compile({code!r}, 'docs/quickstart.md, block at line {line}', 'exec'), namespace)\n"
                    for line, code in blocks)
    return "namespace = {'__name__': '__main__'}\n" + calls


def test_page_has_the_steps_in_order():
    blocks = python_blocks(PAGE.read_text())
    text = "\n".join(code for _, code in blocks)
    steps = ["import diffspace", "diffspace.enable_cache()", "diffspace.load_scenario(", "simulate(",
             "jax.grad(", "central", "jax.vmap("]
    positions = [text.find(step) for step in steps]
    assert all(p >= 0 for p in positions), dict(zip(steps, positions))
    assert positions == sorted(positions), dict(zip(steps, positions))
    assert "diffspace run " in PAGE.read_text() and "diffspace sweep " in PAGE.read_text()


@pytest.mark.timeout(400)
def test_quickstart_blocks_run_in_order(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("DIFFSPACE_CACHE_DIR", str(cache))  # never the user's home from a test
    monkeypatch.delenv("DIFFSPACE_NO_CACHE", raising=False)
    monkeypatch.delenv("DIFFSPACE_CACHE_MIN_COMPILE_S", raising=False)  # the default: every program cached
    script = tmp_path / "quickstart.py"
    script.write_text(session_script(python_blocks(PAGE.read_text())))
    run = subprocess.run([sys.executable, str(script)], cwd=ROOT, capture_output=True, text=True, timeout=380)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert f"compilation cache: {cache}" in run.stdout
    assert any(cache.glob("*-cache")), "enable_cache() stored no compiled program"
