"""Reading user files with one clear line for every way it can fail.

A missing path, a directory, something that is not a regular file (a FIFO would block the reader), an
unreadable file and text that is not UTF-8 each raise :class:`~diffspace.core.status.ConfigError` naming the
file. Text is decoded as UTF-8 with an optional byte-order mark (as written by some Windows editors).
"""

from __future__ import annotations

from pathlib import Path

from ..core.status import ConfigError, shown


class MissingFileError(ConfigError, FileNotFoundError):
    """A path that does not exist; also a ``FileNotFoundError`` for callers that catch that."""


def existing_file(path: str | Path, what: str) -> Path:
    """``path`` as a ``Path`` if it is a regular file; ``what`` ("robot file") names it in the message."""
    path = Path(path)
    name = shown(str(path), 200, bare=True)
    try:
        is_dir, exists, is_file = path.is_dir(), path.exists(), path.is_file()
    except OSError as err:  # e.g. a file name too long for the file system
        raise ConfigError(f"{name}: cannot access the {what} ({err.strerror or err})") from None
    if is_dir:
        raise ConfigError(f"{name}: is a directory, expected a {what}")
    if not exists:
        raise MissingFileError(f"{what} not found: {name}")
    if not is_file:
        raise ConfigError(f"{name}: not a regular file, expected a {what}")
    return path


def read_bytes(path: str | Path, what: str) -> bytes:
    path = existing_file(path, what)
    try:
        return path.read_bytes()
    except OSError as err:
        raise ConfigError(f"{path}: cannot read the {what} ({err.strerror or err})") from None


def read_text(path: str | Path, what: str) -> str:
    """The file's text, decoded as UTF-8 (a leading byte-order mark is dropped)."""
    data = read_bytes(path, what)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise ConfigError(
            f"{path}: the {what} is not UTF-8 text (byte 0x{data[err.start]:02x} at offset {err.start}); "
            "save it as UTF-8"
        ) from None
