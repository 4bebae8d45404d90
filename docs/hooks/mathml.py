r"""MkDocs hook: the formulas are rendered to MathML when the site is built, so a page shows its maths offline
(an air-gapped lab machine, a site opened from disk) and loads nothing from the network.

``pymdownx.arithmatex`` (generic mode) leaves ``<span class="arithmatex">\(...\)</span>`` (inline) and
``<div class="arithmatex">\[...\]</div>`` (display) in the page; each is replaced by the ``<math>`` element
that ``latex2mathml`` makes of its TeX, which browsers draw natively (MathML Core). A formula it cannot convert
fails the build, naming the page and the formula.
"""

from __future__ import annotations

import html
import re

from latex2mathml.converter import convert

INLINE = re.compile(r'<span class="arithmatex">\\\((.*?)\\\)</span>', re.DOTALL)
DISPLAY = re.compile(r'<div class="arithmatex">\\\[(.*?)\\\]</div>', re.DOTALL)


class FormulaError(RuntimeError):
    """A formula that cannot be rendered to MathML."""


def to_mathml(tex: str, display: bool, where: str) -> str:
    """The MathML of ``tex`` (HTML-escaped as arithmatex writes it)."""
    source = html.unescape(tex).strip()
    try:
        return convert(source, display="block" if display else "inline")
    except Exception as err:  # noqa: BLE001  latex2mathml raises many kinds; the build must name the formula
        raise FormulaError(f"{where}: formula not rendered to MathML ({type(err).__name__}: {err}): {source}") from err


def render_formulas(text: str, where: str) -> str:
    """Every arithmatex formula of a page's HTML as MathML."""
    text = DISPLAY.sub(lambda m: f'<div class="arithmatex">{to_mathml(m.group(1), True, where)}</div>', text)
    return INLINE.sub(lambda m: f'<span class="arithmatex">{to_mathml(m.group(1), False, where)}</span>', text)


def on_post_page(output: str, page, config) -> str:
    return render_formulas(output, page.file.src_uri)
