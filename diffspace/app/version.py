"""The version of diffspace that wrote a result: the installed package's, else the source tree's own
``pyproject.toml`` (a checkout run without installing), never a bare "unknown"."""

from __future__ import annotations

import re
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("diffspace")
    except PackageNotFoundError:  # a source tree that was never installed
        try:
            found = re.search(r'^version\s*=\s*"([^"]+)"', PYPROJECT.read_text(), re.MULTILINE)
        except OSError:
            found = None
        return f"{found.group(1)} (source tree, not installed)" if found else "unknown (not installed)"
