"""The output contract of every command: a results directory is written whole or not at all.

* Results are written into a temporary sibling (``DIR.partial``) and moved into place only when complete;
  a failed or interrupted command leaves the previous ``DIR`` untouched (a sweep or Monte-Carlo campaign
  keeps its finished chunks in ``DIR.partial`` so that rerunning the same command resumes).
* Every results directory carries ``manifest.json``: command, scenario, a hash of the resolved config (and
  of the files it names, and of the data for ``fit``), package version and time.
* Writing into a directory that holds another command's or another config's results, or files not
  written by diffspace, is refused with one line unless ``--overwrite``.
* ``--out`` is checked (an existing regular file, a location that cannot be written) before any work.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

from .version import package_version
from ..core.status import ConfigError

MANIFEST = "manifest.json"
RESUMABLE = ("sweep", "montecarlo", "optimize")  # commands whose store survives an interruption


def config_hash(config: dict, files: list[Path]) -> str:
    """SHA-256 of the resolved config (canonical JSON) and of the contents of the files it refers to."""
    digest = hashlib.sha256(json.dumps(config, sort_keys=True, default=str).encode())
    for path in sorted(set(files)):
        digest.update(str(path).encode())
        digest.update(path.read_bytes() if path.is_file() else b"<missing>")
    return digest.hexdigest()


def read_manifest(directory: Path) -> dict | None:
    try:
        return json.loads((directory / MANIFEST).read_text())
    except (OSError, ValueError):
        return None


class ResultDir:
    """``with ResultDir(out, command, digest, overwrite) as work: ...`` writes into ``work`` (the partial
    sibling) and moves it to ``out`` on success."""

    def __init__(self, out: Path, command: str, digest: str, overwrite: bool, scenario: str = ""):
        self.out, self.command, self.digest, self.overwrite = Path(out), command, digest, overwrite
        self.partial = self.out.with_name(self.out.name + ".partial")
        self.scenario = scenario
        self.started: str | None = None  # when the command began (the manifest's "started")
        self.check()

    def _matches(self, manifest: dict | None) -> bool:
        return bool(manifest) and manifest.get("command") == self.command and manifest.get("config_hash") == self.digest

    def check(self) -> None:
        """Refuse unusable or foreign output locations before any work starts."""
        out = self.out
        if out.exists() and not out.is_dir():
            raise ConfigError(f"--out {out}: exists and is not a directory")
        parent = out.parent if out.parent != Path("") else Path(".")
        probe = parent
        while not probe.exists():
            probe = probe.parent
        if not probe.is_dir() or not os.access(probe, os.W_OK | os.X_OK) or not _can_create_in(probe):
            raise ConfigError(f"--out {out}: cannot write in {probe}")
        if self.overwrite:
            return
        for directory, label in ((out, "results"), (self.partial, "unfinished results")):
            if not directory.is_dir() or not any(directory.iterdir()):
                continue
            manifest = read_manifest(directory)
            if manifest is None:
                raise ConfigError(f"--out {directory}: holds files not written by diffspace; "
                                  "choose another directory or pass --overwrite")
            if not self._matches(manifest):
                other = f"'{manifest.get('command')}' of another config" if manifest.get("command") == self.command \
                    else f"'{manifest.get('command')}'"
                raise ConfigError(f"--out {directory}: holds {label} of {other}; choose another directory or "
                                  "pass --overwrite")

    def __enter__(self) -> Path:
        resumable = self.command in RESUMABLE and self._matches(read_manifest(self.partial))
        if self.partial.exists() and not resumable:
            shutil.rmtree(self.partial)
        try:
            self.partial.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise ConfigError(f"--out {self.out}: cannot create {self.partial} ({err.strerror})") from None
        store = self.out / "store"
        if self.command in RESUMABLE and self._matches(read_manifest(self.out)) and store.is_dir():
            shutil.copytree(store, self.partial / "store", dirs_exist_ok=True)
        self._write_manifest(self.partial)
        return self.partial

    def __exit__(self, kind, value, traceback) -> bool:
        if kind is None:
            self._commit()
        elif not self._holds_finished_chunks():
            shutil.rmtree(self.partial, ignore_errors=True)
        return False

    def _holds_finished_chunks(self) -> bool:
        """Whether a failed or interrupted resumable command leaves chunks to resume from (kept whatever ended
        it: an error after the last chunk, e.g. in writing the report, must not cost the campaign)."""
        store = self.partial / "store"
        return self.command in RESUMABLE and store.is_dir() and any(store.iterdir())

    def _write_manifest(self, directory: Path) -> None:
        """``started``: when the command began; ``time``: when this manifest was written (the command's end,
        once committed)."""
        now = datetime.datetime.now().isoformat(timespec="seconds")
        self.started = self.started or now
        manifest = {"command": self.command, "scenario": self.scenario, "config_hash": self.digest,
                    "version": package_version(), "started": self.started, "time": now}
        tmp = directory / (MANIFEST + ".tmp")
        tmp.write_text(json.dumps(manifest, indent=2) + "\n")
        os.replace(tmp, directory / MANIFEST)

    def _commit(self) -> None:
        self._write_manifest(self.partial)
        old = self.out.with_name(self.out.name + ".old")
        if old.exists():
            shutil.rmtree(old)
        if self.out.exists():
            os.replace(self.out, old)
        os.replace(self.partial, self.out)
        if old.exists():
            shutil.rmtree(old)


def _can_create_in(directory: Path) -> bool:
    """Whether a directory can really be made in ``directory`` (permission bits do not tell for root, nor for
    virtual file systems such as /proc)."""
    try:
        shutil.rmtree(tempfile.mkdtemp(prefix=".diffspace-probe-", dir=directory))
    except OSError:
        return False
    return True
