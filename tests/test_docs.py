"""The documentation site: it builds with ``mkdocs build --strict`` (no broken link, no docstring warning), every
scenario has its page with its config-table marker, and the generated tables list every config key."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from diffspace.scenarios import REGISTRY, scenario_class

ROOT = Path(__file__).resolve().parents[1]


def _hook_module():
    spec = importlib.util.spec_from_file_location("config_tables_hook", ROOT / "docs" / "hooks" / "config_tables.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


HOOK = _hook_module()


@pytest.mark.timeout(240)
def test_site_builds_strict(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    problems = [line for line in result.stderr.splitlines() if line.startswith(("WARNING", "ERROR"))]
    assert result.returncode == 0, "\n".join(problems) or result.stderr[-3000:]
    assert (tmp_path / "site" / "api" / "dynamics" / "index.html").is_file()
    _offline_with_rendered_formulas(tmp_path / "site")
    page = (tmp_path / "site" / "scenarios" / "capture" / "index.html").read_text()  # config keys never broken
    assert "stylesheets/extra.css" in page and "nowrap" in (tmp_path / "site" / "stylesheets" / "extra.css").read_text()


LOADED = re.compile(r"<(?:script|img|iframe|source)\b[^>]*\bsrc=\"(https?:)?//|<link\b[^>]*\bhref=\"(https?:)?//"
                    r"|@import\s+(url\()?[\"']?(https?:)?//|url\([\"']?(https?:)?//")


def _offline_with_rendered_formulas(site: Path) -> None:
    """No page or stylesheet loads anything from the network (scripts, styles, fonts, images), and every
    formula is MathML: no TeX left for a script to typeset, no stray ``$``; a formula page renders offline in
    headless Chromium (every host unresolvable) with its ``<math>`` elements in the DOM."""
    formulas = 0
    for path in list(site.rglob("*.html")) + list(site.rglob("*.css")):
        text = path.read_text(errors="replace")
        found = LOADED.search(text)
        assert found is None, f"{path.relative_to(site)} loads {text[found.start():found.start() + 120]}"
        if path.suffix == ".html":
            formulas += text.count("<math")
            prose = re.sub(r"<(pre|code|script|math)[^>]*>.*?</\1>", "", text, flags=re.S)
            assert "$" not in prose and "\\(" not in prose, f"{path.relative_to(site)}: a formula left as TeX"
    assert formulas > 100
    from diffspace.app.report.browser import find_chromium, render

    browser = find_chromium()
    if browser is None:
        pytest.skip("no Chromium: the offline screenshot of a formula page is not taken")
    page = site / "guides" / "optimization" / "index.html"
    dom = render(browser, page, "#how-it-works", site / "formulas.png")
    assert dom.count("<math") >= 5 and (site / "formulas.png").stat().st_size > 20_000


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", list(REGISTRY))
def test_scenario_page_and_config_table(name):
    page = ROOT / "docs" / "scenarios" / f"{name}.md"
    assert page.is_file(), f"{page.relative_to(ROOT)} is missing"
    assert f"<!-- config-table: {name} -->" in page.read_text().splitlines()
    table = HOOK.config_table(name)
    rows = {line.strip("|").split("|")[0].strip() for line in table.splitlines()}
    schema = scenario_class(name).schema()
    missing = [
        f"{section}.{key}" for section, fields in schema.sections.items() for key in fields
        if f"`{section}.{key}`" not in rows
    ]
    assert not missing, f"config table of {name} lacks {missing}"


@pytest.mark.timeout(60)
def test_rendered_marker_lists_keys_with_units_and_bounds():
    page = HOOK.render_markers("# Impact\n\n<!-- config-table: impact -->\n", "scenarios/impact.md")
    row = next(line for line in page.splitlines() if "`contact.stiffness_N_m_n`" in line)
    assert [cell.strip() for cell in row.strip("|").split("|")][1:5] == ["float", "N/mⁿ", "`1e7`", "> 0"]
    assert "<!--" not in page


@pytest.mark.timeout(60)
def test_scenario_table_links_every_scenario():
    table = HOOK.render_markers("<!-- scenario-table -->", "scenarios/index.md")
    for name in REGISTRY:
        assert f"[`{name}`]({name}.md)" in table


@pytest.mark.timeout(60)
@pytest.mark.parametrize("marker", ["<!-- config-table: no_such_scenario -->", "<!-- config-table: -->",
                                    "<!-- scenario-table: impact -->"])
def test_bad_marker_fails_naming_page_and_marker(marker):
    with pytest.raises(HOOK.MarkerError) as err:
        HOOK.on_page_markdown(f"# Page\n\n{marker}\n", _Page("guides/some-page.md"), None, None)
    assert "guides/some-page.md" in str(err.value) and marker in str(err.value)


@pytest.mark.timeout(60)
def test_marker_inside_code_block_is_left_as_written():
    text = "```markdown\n<!-- config-table: my_scenario -->\n```\n"
    assert HOOK.render_markers(text, "guides/new-scenario.md") == text


class _Page:
    """The one attribute of an MkDocs page the hook reads."""

    def __init__(self, src_uri: str):
        self.file = type("File", (), {"src_uri": src_uri})()


@pytest.mark.timeout(60)
def test_api_pages_document_markdown_docstrings():
    """The modules the API reference renders carry Markdown docstrings: a Sphinx role or math directive would
    show raw on the page."""
    sphinx = re.compile(r":(?:class|func|mod|meth|attr):`|\.\. math::")
    targets = set(re.findall(r"^::: (\S+)", "\n".join(p.read_text() for p in (ROOT / "docs" / "api").glob("*.md")),
                             flags=re.M))
    assert targets
    offending = []
    for target in sorted(targets):
        module_name = target
        while module_name:
            try:
                module = importlib.import_module(module_name)
                break
            except ModuleNotFoundError:
                module_name = module_name.rpartition(".")[0]
        source = Path(module.__file__).read_text()
        if sphinx.search(source):
            offending.append(module.__name__)
    assert not offending, f"Sphinx markup in {sorted(set(offending))}"
