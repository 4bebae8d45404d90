"""STL triangle meshes (binary and ASCII) read with NumPy, and decimation by vertex clustering.

Binary STL: an 80-byte header, a ``uint32`` triangle count, then per triangle 12 little-endian ``float32``
(normal, three vertices) and a ``uint16`` attribute. ASCII STL: ``solid ... facet normal ... outer loop
vertex x y z (x3) endloop endfacet ... endsolid``. Normals are not kept (a renderer recomputes them).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..core.status import ConfigError
from .files import read_bytes
from .scene import Mesh

MAX_FACES = 4000
"""Meshes with more triangles are decimated for reports (a few thousand triangles per link draw smoothly)."""

_RECORD = np.dtype([("normal", "<f4", 3), ("vertices", "<f4", (3, 3)), ("attribute", "<u2")])


def _binary(data: bytes) -> np.ndarray | None:
    if len(data) < 84:
        return None
    count = int(np.frombuffer(data, "<u4", 1, 80)[0])
    if len(data) != 84 + count * _RECORD.itemsize:
        return None
    return np.frombuffer(data, _RECORD, count, 84)["vertices"].astype(float)


def _ascii(data: bytes, path: Path) -> np.ndarray:
    words = data.decode("ascii", errors="replace").split()
    try:
        coords = [float(words[k + 1 + a]) for k, w in enumerate(words) if w == "vertex" for a in range(3)]
    except (ValueError, IndexError):
        raise ConfigError(f"{path}: not a readable STL file (bad vertex line)") from None
    if not coords or len(coords) % 9:
        raise ConfigError(f"{path}: not a readable STL file (no complete triangles)")
    return np.asarray(coords).reshape(-1, 3, 3)


def read_stl(path: str | Path) -> Mesh:
    """The triangles of a binary or ASCII STL file, shared vertices merged."""
    path = Path(path)
    data = read_bytes(path, "mesh file")
    triangles = _binary(data)
    if triangles is None:
        triangles = _ascii(data, path)
    if not np.all(np.isfinite(triangles)):
        raise ConfigError(f"{path}: STL file holds non-finite coordinates")
    vertices, inverse = np.unique(triangles.reshape(-1, 3), axis=0, return_inverse=True)
    return Mesh(vertices, inverse.reshape(-1, 3))


def _clustered(mesh: Mesh, cell: float) -> Mesh:
    keys = np.floor(mesh.vertices / cell).astype(np.int64)
    _, cluster, counts = np.unique(keys, axis=0, return_inverse=True, return_counts=True)
    cluster = cluster.ravel()
    centres = np.zeros((len(counts), 3))
    np.add.at(centres, cluster, mesh.vertices)
    faces = cluster[mesh.faces]
    keep = (faces[:, 0] != faces[:, 1]) & (faces[:, 1] != faces[:, 2]) & (faces[:, 0] != faces[:, 2])
    return Mesh(centres / counts[:, None], faces[keep])


def decimated(mesh: Mesh, max_faces: int = MAX_FACES) -> Mesh:
    """``mesh`` with at most ``max_faces`` triangles: vertices merged on a grid made coarser until it fits
    (vertex clustering; the shape keeps its extent and outline at the grid's resolution)."""
    if len(mesh.faces) <= max_faces:
        return mesh
    extent = float(np.max(np.ptp(mesh.vertices, axis=0)))
    cell = extent / np.sqrt(max_faces)
    out = _clustered(mesh, cell)
    while len(out.faces) > max_faces:
        cell *= 1.3
        out = _clustered(mesh, cell)
    return out
