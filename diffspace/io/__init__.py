"""Robot and scenario loaders."""

from __future__ import annotations

from pathlib import Path

from .urdf import load_urdf


def load_robot(path):
    """Load a robot from a ``.urdf`` or native ``.toml`` description."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"robot file not found: {path}")
    if path.suffix == ".urdf":
        return load_urdf(path)
    if path.suffix == ".toml":
        from .robot_toml import load_robot_toml

        return load_robot_toml(path)
    raise ValueError(f"{path}: robot files must end in .urdf or .toml")


__all__ = ["load_robot", "load_urdf"]
