"""Robot and scenario loaders."""

from __future__ import annotations

from ..core.robot import Robot
from ..core.status import ConfigError
from .files import existing_file
from .urdf import load_urdf


def load_robot(path) -> Robot:
    """Load a robot from a URDF or native TOML description.

    Lengths are in metres, masses in kg, inertias in kg m²; the root link is the floating base.

    Args:
        path: A ``.urdf`` or ``.toml`` file (suffix case-insensitive).

    Returns:
        The robot, fixed joints merged into their parents.

    Raises:
        ConfigError: A missing or unreadable file, another suffix, or an invalid description (one line
            naming the file and the problem).
    """
    path = existing_file(path, "robot file")
    suffix = path.suffix.lower()
    if suffix == ".urdf":
        return load_urdf(path)
    if suffix == ".toml":
        from .robot_toml import load_robot_toml

        return load_robot_toml(path)
    raise ConfigError(f"{path}: robot files must end in .urdf or .toml")


__all__ = ["load_robot", "load_urdf"]
