"""Configs and robot descriptions shipped inside the package (``diffspace/data``; the repo's ``configs/`` is a
link to it), found with :mod:`importlib.resources` so they work from any directory after any install."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

DATA_DIR = Path(str(files("diffspace").joinpath("data")))
ROBOTS_DIR = DATA_DIR / "robots"


def packaged_config(name: str) -> Path:
    """Path of a shipped config, e.g. ``packaged_config("ejection_plane.toml")``."""
    return DATA_DIR / name
