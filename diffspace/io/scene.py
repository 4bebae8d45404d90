"""The 3-D scene of one run: what a report animates, as plain NumPy data (no drawing code here).

A :class:`Scene` holds, at sampled times ``t_k`` (a subset of the outcome's saved times, never interpolated):

* ``bodies``: rigid parts, each a triangle :class:`Mesh` in its own frame and a world pose per time
  (``rot (T, 3, 3)``, ``pos (T, 3)``): robot links (poses from the core's ``frame_pose``), bases, targets,
  shafts. A static part (a rail, a separation plane) has one pose repeated.
* ``lines``: polylines per time, ``points (T, k, 3)`` (rope nodes); NaN points split a line.
* ``surfaces``: deforming triangle meshes, ``points (T, k, 3)`` with fixed ``faces`` (shell interfaces).
* ``arrows``: contact points and forces per time, ``origins (T, k, 3)`` [m] and ``vectors (T, k, 3)`` [N];
  a zero or NaN vector is no contact.
* ``events``: ``(time [s], label)`` markers (separation, first touch).

Everything is SI (metres, newtons), world axes. A scenario builds its scene from its outcome's time series and
the core's kinematics (``AbstractScenario.scene``); the report writer only draws it. Scenes are saved as
``scene.npz`` beside a run's other results (:func:`save_scene`, :func:`load_scene`).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np

MAX_FRAMES = 240
"""Sampled times kept in a scene by default (reports stay a few MB; the plots keep the full time series)."""


@dataclasses.dataclass(frozen=True)
class Mesh:
    """Triangles: ``vertices (v, 3)`` [m] in the owner's frame, ``faces (f, 3)`` vertex indices."""

    vertices: np.ndarray
    faces: np.ndarray

    @staticmethod
    def join(*meshes: "Mesh") -> "Mesh":
        meshes = [m for m in meshes if len(m.faces)]
        if not meshes:
            return Mesh(np.zeros((0, 3)), np.zeros((0, 3), dtype=int))
        offsets = np.cumsum([0] + [len(m.vertices) for m in meshes[:-1]])
        return Mesh(np.concatenate([m.vertices for m in meshes]),
                    np.concatenate([m.faces + o for m, o in zip(meshes, offsets)]).astype(int))

    def placed(self, rot, pos) -> "Mesh":
        """The mesh moved by ``x -> rot x + pos``."""
        return Mesh(self.vertices @ np.asarray(rot, float).T + np.asarray(pos, float), self.faces)


@dataclasses.dataclass(frozen=True)
class Body:
    """A rigid part: ``mesh`` in its own frame, world pose per sampled time. ``link``: the robot link it draws
    (a URDF visual of that link replaces the mesh), empty for other parts."""

    name: str
    mesh: Mesh
    rot: np.ndarray  # (T, 3, 3)
    pos: np.ndarray  # (T, 3)
    color: str = "#8a9bb0"
    opacity: float = 1.0
    link: str = ""


@dataclasses.dataclass(frozen=True)
class Line:
    name: str
    points: np.ndarray  # (T, k, 3)
    color: str = "#d2691e"
    width: float = 4.0


@dataclasses.dataclass(frozen=True)
class Surface:
    name: str
    points: np.ndarray  # (T, k, 3)
    faces: np.ndarray  # (f, 3)
    color: str = "#c9a227"
    opacity: float = 0.8


@dataclasses.dataclass(frozen=True)
class Arrows:
    name: str
    origins: np.ndarray  # (T, k, 3) [m]
    vectors: np.ndarray  # (T, k, 3) [N]
    color: str = "#d62728"
    unit: str = "N"


@dataclasses.dataclass(frozen=True)
class Scene:
    title: str
    times: np.ndarray  # (T,) [s]
    bodies: tuple[Body, ...] = ()
    lines: tuple[Line, ...] = ()
    surfaces: tuple[Surface, ...] = ()
    arrows: tuple[Arrows, ...] = ()
    events: tuple[tuple[float, str], ...] = ()

    def with_visuals(self, visuals: dict[str, Mesh]) -> "Scene":
        """The scene with each robot link's mesh replaced by its visual (link name -> mesh in the link frame)."""
        bodies = tuple(dataclasses.replace(b, mesh=visuals[b.link]) if b.link in visuals else b for b in self.bodies)
        return dataclasses.replace(self, bodies=bodies)


def sample_indices(times, max_frames: int = MAX_FRAMES) -> np.ndarray:
    """Indices of at most ``max_frames`` finite saved times, evenly spread, first and last kept."""
    finite = np.flatnonzero(np.isfinite(np.asarray(times, float)))
    if len(finite) <= max_frames:
        return finite
    return finite[np.unique(np.round(np.linspace(0, len(finite) - 1, max_frames)).astype(int))]


def static_pose(n_times: int, rot=None, pos=None) -> tuple[np.ndarray, np.ndarray]:
    """A pose held over ``n_times`` sampled times (identity rotation, origin by default)."""
    rot = np.eye(3) if rot is None else np.asarray(rot, float)
    pos = np.zeros(3) if pos is None else np.asarray(pos, float)
    return np.broadcast_to(rot, (n_times, 3, 3)).copy(), np.broadcast_to(pos, (n_times, 3)).copy()


# ---------------------------------------------------------------------------------------------- primitives
def box(size, center=(0.0, 0.0, 0.0)) -> Mesh:
    """Axis-aligned box of edge lengths ``size`` centred at ``center``."""
    corners = np.array([[x, y, z] for x in (-0.5, 0.5) for y in (-0.5, 0.5) for z in (-0.5, 0.5)])
    faces = [[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
             [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]]
    return Mesh(corners * np.asarray(size, float) + np.asarray(center, float), np.array(faces))


def inertia_box(mass: float, inertia, com=(0.0, 0.0, 0.0), fallback: float = 0.1) -> Mesh:
    """The box with this mass and CoM inertia (principal axes; edges :math:`a_i^2 = 6(\\mathrm{tr} I - 2 I_i)/m`),
    centred on the CoM; a cube of edge ``fallback`` without a positive mass and inertia."""
    moments, axes = np.linalg.eigh(np.asarray(inertia, float))
    if mass > 0 and np.all(moments > 0):
        edges = np.sqrt(np.clip(6.0 * (np.sum(moments) - 2.0 * moments) / mass, (0.1 * fallback) ** 2, None))
    else:
        edges = np.full(3, fallback)
    return box(edges).placed(axes, com)


def frame_along(axis) -> np.ndarray:
    """Rotation whose third column is the unit ``axis``."""
    z = np.asarray(axis, float) / np.linalg.norm(axis)
    helper = np.array([1.0, 0.0, 0.0]) if abs(z[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    x = np.cross(helper, z)
    x /= np.linalg.norm(x)
    return np.column_stack([x, np.cross(z, x), z])


def _lathe(profile: np.ndarray, segments: int) -> Mesh:
    """Surface of revolution about z of ``profile`` rows ``(radius, z)``, closed at zero-radius ends."""
    phi = np.linspace(0.0, 2 * np.pi, segments, endpoint=False)
    rings = [np.column_stack([r * np.cos(phi), r * np.sin(phi), np.full(segments, z)]) for r, z in profile]
    vertices = np.concatenate(rings)
    faces = []
    for k in range(len(profile) - 1):
        a, b = k * segments, (k + 1) * segments
        for s in range(segments):
            t = (s + 1) % segments
            faces += [[a + s, b + s, b + t], [a + s, b + t, a + t]]
    return Mesh(vertices, np.array(faces))


def capsule(start, end, radius: float, segments: int = 12) -> Mesh:
    """Cylinder of ``radius`` from ``start`` to ``end`` with hemispherical caps."""
    start, end = np.asarray(start, float), np.asarray(end, float)
    length = float(np.linalg.norm(end - start))
    angles = np.linspace(0.0, np.pi / 2, 4)
    bottom = [(radius * np.sin(a), -radius * np.cos(a)) for a in angles]
    top = [(radius * np.cos(a), length + radius * np.sin(a)) for a in angles]
    mesh = _lathe(np.array(bottom + top), segments)
    axis = end - start if length > 0 else np.array([0.0, 0.0, 1.0])
    return mesh.placed(frame_along(axis), start)


def cylinder(start, end, radius: float, segments: int = 16) -> Mesh:
    """Closed cylinder of ``radius`` from ``start`` to ``end``."""
    start, end = np.asarray(start, float), np.asarray(end, float)
    length = float(np.linalg.norm(end - start))
    mesh = _lathe(np.array([(0.0, 0.0), (radius, 0.0), (radius, length), (0.0, length)]), segments)
    return mesh.placed(frame_along(end - start), start)


def sphere(radius: float, center=(0.0, 0.0, 0.0), segments: int = 12) -> Mesh:
    angles = np.linspace(-np.pi / 2, np.pi / 2, segments // 2 + 1)
    mesh = _lathe(np.column_stack([radius * np.cos(angles), radius * np.sin(angles)]), segments)
    return mesh.placed(np.eye(3), center)


def plate(normal, size: float, center=(0.0, 0.0, 0.0)) -> Mesh:
    """A square of edge ``size`` with the given ``normal`` (a plane drawn as a patch)."""
    frame = frame_along(normal)
    corners = np.array([[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0]]) * size / 2
    return Mesh(corners @ frame.T + np.asarray(center, float), np.array([[0, 1, 2], [0, 2, 3]]))


def grid_faces(rows: int, cols: int) -> np.ndarray:
    """Triangles of a ``rows x cols`` grid of points numbered row by row."""
    r, c = np.meshgrid(np.arange(rows - 1), np.arange(cols - 1), indexing="ij")
    a = (r * cols + c).ravel()
    return np.concatenate([np.column_stack([a, a + 1, a + cols + 1]), np.column_stack([a, a + cols + 1, a + cols])])


# ---------------------------------------------------------------------------------------------- files
_KINDS = {"bodies": Body, "lines": Line, "surfaces": Surface, "arrows": Arrows}


def save_scene(path: Path, scene: Scene) -> Path:
    """Write ``scene`` to an ``.npz`` file (arrays, plus the names and styles as JSON)."""
    arrays, meta = {"times": np.asarray(scene.times, float)}, {"title": scene.title, "events": list(scene.events)}
    for kind in _KINDS:
        meta[kind] = []
        for k, item in enumerate(getattr(scene, kind)):
            fields = {}
            for f in dataclasses.fields(item):
                value = getattr(item, f.name)
                if isinstance(value, Mesh):
                    arrays[f"{kind}{k}.vertices"], arrays[f"{kind}{k}.faces"] = value.vertices, value.faces
                elif isinstance(value, np.ndarray):
                    arrays[f"{kind}{k}.{f.name}"] = value
                else:
                    fields[f.name] = value
            meta[kind].append(fields)
    arrays["meta"] = np.array(json.dumps(meta))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, **arrays)
    return path


def load_scene(path: Path) -> Scene:
    with np.load(path) as data:
        meta = json.loads(str(data["meta"]))
        parts = {}
        for kind, cls in _KINDS.items():
            items = []
            for k, fields in enumerate(meta[kind]):
                values = dict(fields)
                for f in dataclasses.fields(cls):
                    key = f"{kind}{k}.{f.name}"
                    if f.name == "mesh":
                        values["mesh"] = Mesh(data[f"{kind}{k}.vertices"], data[f"{kind}{k}.faces"])
                    elif key in data:
                        values[f.name] = data[key]
                items.append(cls(**values))
            parts[kind] = tuple(items)
        return Scene(meta["title"], data["times"], events=tuple((float(t), str(s)) for t, s in meta["events"]),
                     **parts)
