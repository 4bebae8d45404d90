"""``diffspace view DIR``: open ``DIR/report.html`` in the default browser, or print its path where there is none."""

from __future__ import annotations

import os
import sys
import webbrowser
from pathlib import Path

from ...core.status import ConfigError
from .writer import REPORT


def view(directory: Path) -> int:
    path = Path(directory)
    path = path if path.suffix == ".html" else path / REPORT
    if not path.is_file():
        raise ConfigError(f"{path}: no report here (every 'diffspace run/sweep/montecarlo/optimize/fit' writes DIR/{REPORT})")
    url = path.resolve().as_uri()
    graphical = sys.platform in ("darwin", "win32") or os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    if graphical and webbrowser.open(url):
        print(f"opened {path}")
    else:
        print(f"no browser to open here; the report is {path.resolve()} ({url})")
    return 0
