"""MkDocs hook: replace a line ``<!-- cli-help -->`` with the ``--help`` text of ``diffspace`` and its subcommands.

The text comes from the argparse parser the command itself uses (``diffspace.app.cli.build_parser``), so the
page always shows the options of the installed version.
"""

from __future__ import annotations

import argparse
import re

MARKER = re.compile(r"^<!-- cli-help -->[ \t]*$", re.MULTILINE)
HELP_WIDTH = "100"


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:  # argparse offers no public accessor for the subcommands
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _block(title: str, text: str) -> str:
    return f"### {title}\n\n```text\n{text.rstrip()}\n```\n"


def cli_help_markdown() -> str:
    """Markdown: the top-level help, then one heading and ``text`` block per subcommand."""
    import os

    from diffspace.app.cli import build_parser

    previous = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = HELP_WIDTH  # argparse wraps at $COLUMNS: fixed, so the page does not depend on the shell
    try:
        parser = build_parser()
        blocks = [_block("diffspace", parser.format_help())]
        blocks += [_block(f"diffspace {name}", sub.format_help()) for name, sub in _subparsers(parser).items()]
    finally:
        if previous is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = previous
    return "\n".join(blocks)


def on_page_markdown(markdown: str, page, config, files) -> str:
    if not MARKER.search(markdown):
        return markdown
    text = cli_help_markdown()
    return MARKER.sub(lambda _match: text, markdown)
