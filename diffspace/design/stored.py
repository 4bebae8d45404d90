r"""Traced programs kept on disk, so that a second ``diffspace run`` skips tracing as well as compiling.

JAX's persistent compilation cache (:mod:`diffspace.app.cache`) stores compiled executables, but every new
process still *traces* and *lowers* the Python program before it can look one up: for the ejection study that
is ~9 of the ~19 s of a warm run. :func:`stored_jit` is ``eqx.filter_jit`` plus a disk store of the lowered
program: the first call exports it (:mod:`jax.export`, StableHLO with a stability guarantee) and writes it;
a later process with the same key deserialises it and calls it, and its compile then hits the persistent
compilation cache.

The key is a SHA-256 over everything that decides the traced program: the function's qualified name; a digest
of the diffspace sources and the versions of JAX, jaxlib, Equinox, Diffrax, Optimistix and Lineax; the
``EQX_ON_ERROR`` mode; the static part of the arguments (their non-array leaves and pytree structure,
pickled: the scenario's configuration that is not traced); and the shapes and dtypes of the array leaves.
Anything that cannot be pickled (a static field holding a closure, say) or exported (a host callback) simply
bypasses the store. Entries are
written to a temporary file and renamed, so concurrent processes never read a partial entry; an unreadable
entry is ignored and rewritten. The store is off until :func:`set_directory` is called (the command line does
it next to the compilation cache; ``--no-cache`` leaves both off).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib.metadata
import os
import pickle
import tempfile
from pathlib import Path
from typing import Callable

import equinox as eqx
import jax
from jax import export

from ..core.xla_options import program_options

_DIRECTORY: Path | None = None
_LOADED: dict[str, "_Stored"] = {}  # this process's programs by key
_PACKAGES = ("jax", "jaxlib", "equinox", "diffrax", "optimistix", "lineax")


def set_directory(path: Path | None) -> None:
    """Store traced programs in ``path`` (created on first write); ``None`` turns the store off."""
    global _DIRECTORY
    _DIRECTORY = None if path is None else Path(path)


@functools.cache
def _environment_digest() -> bytes:
    """Digest of the diffspace sources and of the versions of the libraries that shape a traced program."""
    digest = hashlib.sha256()
    root = Path(__file__).resolve().parent.parent
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    for name in _PACKAGES:
        try:
            digest.update(f"{name}={importlib.metadata.version(name)}".encode())
        except importlib.metadata.PackageNotFoundError:
            digest.update(name.encode())
    digest.update(f"EQX_ON_ERROR={os.environ.get('EQX_ON_ERROR', '')}".encode())
    digest.update(f"x64={jax.config.jax_enable_x64}".encode())
    return digest.digest()


def _key(fn: Callable, static, leaves) -> str | None:
    try:
        static_bytes = pickle.dumps(static, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # a static value that cannot be pickled: no stable key, bypass the store
        return None
    digest = hashlib.sha256(_environment_digest())
    digest.update(f"{fn.__module__}.{fn.__qualname__}".encode())
    digest.update(static_bytes)
    digest.update(repr([(leaf.shape, str(leaf.dtype)) for leaf in leaves]).encode())
    return digest.hexdigest()


@dataclasses.dataclass(frozen=True)
class _Stored:
    exported: export.Exported
    outputs: object  # the output pytree with integers in place of its arrays (its structure)

    @functools.cached_property
    def call(self) -> Callable:
        """The program's call, jitted with diffspace's own compile options (`diffspace.core.xla_options`): one per
        loaded program, so JAX's caches of it hold."""
        return jax.jit(self.exported.call, compiler_options=program_options())


def _load(path: Path) -> _Stored | None:
    try:
        payload = pickle.loads(path.read_bytes())
        return _Stored(export.deserialize(payload["exported"]), pickle.loads(payload["outputs"]))
    except Exception:  # missing, partial or from an incompatible version: trace afresh
        return None


def _write(path: Path, stored: _Stored) -> None:
    temporary = None
    try:
        payload = pickle.dumps({"exported": stored.exported.serialize(), "outputs": pickle.dumps(stored.outputs)},
                               protocol=pickle.HIGHEST_PROTOCOL)
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=f".{path.name}.", delete=False) as tmp:
            temporary = Path(tmp.name)
            tmp.write(payload)
        os.replace(temporary, path)
    except Exception:  # an unwritable store or an output that cannot be pickled: the run goes on without it
        if temporary is not None:
            temporary.unlink(missing_ok=True)


def _export(fn: Callable, static, treedef, leaves) -> _Stored:
    structure = {}

    def flat(*arrays):
        out = fn(*eqx.combine(jax.tree_util.tree_unflatten(treedef, arrays), static))
        out_leaves, structure["tree"] = jax.tree_util.tree_flatten(out)
        return out_leaves

    exported = export.export(jax.jit(flat))(*leaves)
    return _Stored(exported, _skeleton(structure["tree"]))


def load_or_make(key: str | None, make: Callable[[], _Stored]) -> _Stored | None:
    """The program under ``key``: this process's, else the store's, else ``make()``'s (written to the store);
    ``None`` where there is no key or ``make`` fails (e.g. a host callback, which has no serialisation
    guarantee, or a shape a symbolic batch cannot take)."""
    if key is None:
        return None
    if key not in _LOADED:
        path = _DIRECTORY / f"{key}.program"
        program = _load(path)
        if program is None:
            try:
                program = make()
            except Exception:
                program = None
            else:
                _write(path, program)
        _LOADED[key] = program
    return _LOADED[key]


def _skeleton(treedef):
    """The pytree of ``treedef`` with integers for its leaves: picklable, and it restores the structure."""
    return jax.tree_util.tree_unflatten(treedef, [0] * treedef.num_leaves)


def stored_jit(fn: Callable) -> Callable:
    """``eqx.filter_jit(fn)`` whose traced program is kept on disk across processes (module docstring)."""
    jitted = eqx.filter_jit(fn)

    @functools.wraps(fn)
    def call(*args):
        if _DIRECTORY is None:
            return jitted(*args)
        dynamic, static = eqx.partition(args, eqx.is_array)
        leaves, treedef = jax.tree_util.tree_flatten(dynamic)
        if any(isinstance(leaf, jax.core.Tracer) for leaf in leaves):  # inside a caller's jit/grad/vmap: an
            return jitted(*args)  # exported program has no derivative rule, the traced function composes
        stored = load_or_make(_key(fn, (static, _skeleton(treedef)), leaves),
                              lambda: _export(fn, static, treedef, leaves))
        if stored is None:  # not exportable: an ordinary jit, which also raises any error of the program itself
            return jitted(*args)
        out = stored.call(*leaves)
        return jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(stored.outputs), out)

    return call
