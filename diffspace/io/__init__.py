"""Robot and scenario loaders."""

from __future__ import annotations

from ..core.robot import Robot
from ..core.status import ConfigError
from .files import existing_file
from .urdf import load_urdf


def load_robot(path) -> Robot:
    """Load a robot from a ``.urdf`` or native ``.toml`` description (suffix case-insensitive)."""
    path = existing_file(path, "robot file")
    suffix = path.suffix.lower()
    if suffix == ".urdf":
        return load_urdf(path)
    if suffix == ".toml":
        from .robot_toml import load_robot_toml

        return load_robot_toml(path)
    raise ConfigError(f"{path}: robot files must end in .urdf or .toml")


__all__ = ["load_robot", "load_urdf"]
