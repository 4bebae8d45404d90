"""A :class:`~diffspace.io.scene.Scene` as the report's embedded data: flat number arrays the viewer reads.

Poses and points are written with :data:`DIGITS` significant digits (the read-back precision of the report's
embedded data); parts without triangles (merged links with no visual) are left out; force vectors are scaled to
display lengths (the largest force over the run becomes :data:`ARROW_FRACTION` of the scene's size) and their
magnitudes kept in newtons for the hover text.
"""

from __future__ import annotations

import numpy as np

from ...io.scene import Scene

DIGITS = 7
ARROW_FRACTION = 0.25


class Numbers:
    """A flat array written as a JSON list of ``DIGITS``-significant-digit numbers (NaN -> null)."""

    def __init__(self, values, digits: int = DIGITS):
        self.values = np.asarray(values, float).ravel()
        self.digits = digits

    def json(self) -> str:
        fmt = f"{{:.{self.digits}g}}".format
        return "[" + ",".join(fmt(v) if np.isfinite(v) else "null" for v in self.values) + "]"


def to_json(value) -> str:
    """JSON text of nested dicts/lists/strings/numbers with :class:`Numbers` leaves written compactly."""
    import json

    if isinstance(value, Numbers):
        return value.json()
    if isinstance(value, dict):
        return "{" + ",".join(f"{json.dumps(str(k))}:{to_json(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(to_json(v) for v in value) + "]"
    if isinstance(value, float) and not np.isfinite(value):
        return "null"
    return json.dumps(value)


def _points_of(scene: Scene) -> np.ndarray:
    clouds = [np.einsum("tij,vj->tvi", b.rot, b.mesh.vertices).reshape(len(scene.times), -1, 3)
              + b.pos[:, None, :] for b in scene.bodies]
    clouds += [line.points for line in scene.lines] + [s.points for s in scene.surfaces]
    clouds += [a.origins for a in scene.arrows]
    flat = np.concatenate([c.reshape(-1, 3) for c in clouds] + [np.zeros((1, 3))])
    return flat[np.all(np.isfinite(flat), axis=1)]


def bounds(scene: Scene) -> np.ndarray:
    """``(3, 2)`` box holding every part at every sampled time (and the origin), padded by 5 %."""
    points = _points_of(scene)
    low, high = points.min(axis=0), points.max(axis=0)
    pad = 0.05 * max(float(np.max(high - low)), 1e-3)
    return np.column_stack([low - pad, high + pad])


def _arrows(scene: Scene, size: float) -> list[dict]:
    out = []
    for arrows in scene.arrows:
        magnitude = np.linalg.norm(arrows.vectors, axis=-1)
        peak = float(np.nanmax(magnitude)) if np.any(np.isfinite(magnitude)) else 0.0
        scale = ARROW_FRACTION * size / peak if peak > 0 else 0.0
        out.append({"name": f"{arrows.name} (arrow length {scale:.3g} m/{arrows.unit}; peak {peak:.4g} {arrows.unit})",
                    "color": arrows.color, "k": int(arrows.origins.shape[1]), "o": Numbers(arrows.origins),
                    "d": Numbers(arrows.vectors * scale), "m": Numbers(magnitude, 4), "unit": arrows.unit})
    return out


DEFAULT_EYE = (1.4, -1.6, 0.9)  # an oblique view of a scene that moves in 3-D
PLANAR_RATIO = 0.05  # motion whose spread across a plane is below this fraction of its spread within is planar


def _moving_points(scene: Scene) -> np.ndarray:
    """Body origins and line points at every sampled time, ``(n, 3)`` (finite rows)."""
    clouds = [b.pos for b in scene.bodies] + [line.points.reshape(-1, 3) for line in scene.lines]
    flat = np.concatenate([np.reshape(c, (-1, 3)) for c in clouds] + [np.zeros((0, 3))])
    return flat[np.all(np.isfinite(flat), axis=1)]


def camera(scene: Scene) -> dict:
    """Where the viewer looks from: a scene whose bodies and lines move in a plane is seen facing that plane
    (its normal, slightly tilted so depth still reads), so a planar arm is not foreshortened; any other scene
    from :data:`DEFAULT_EYE`. ``up`` is ``z`` unless the plane is horizontal."""
    points = _moving_points(scene)
    eye, up = np.array(DEFAULT_EYE), np.array([0.0, 0.0, 1.0])
    if len(points) > 3:
        values, vectors = np.linalg.eigh(np.cov(points.T))
        if values[2] > 0 and np.sqrt(max(values[0], 0.0) / values[2]) < PLANAR_RATIO:
            normal = vectors[:, 0] * np.sign(vectors[np.argmax(np.abs(vectors[:, 0])), 0])
            if normal[1] > 0.9:  # the x-z plane, seen from -y: x to the right, z up
                normal = -normal
            if abs(normal[2]) > 0.9:  # a horizontal plane, seen from above: y up
                up = np.array([0.0, 1.0, 0.0])
            side = np.cross(up, normal)
            eye = 2.2 * normal + 0.35 * side / max(np.linalg.norm(side), 1e-12) + 0.35 * up
    xyz = lambda v: {"x": float(v[0]), "y": float(v[1]), "z": float(v[2])}  # noqa: E731
    return {"eye": xyz(eye), "up": xyz(up)}


def scene_payload(scene: Scene) -> dict:
    """The viewer's data for one scene."""
    box = bounds(scene)
    size = float(np.max(box[:, 1] - box[:, 0]))
    bodies = [{"name": b.name, "color": b.color, "opacity": b.opacity, "v": Numbers(b.mesh.vertices),
               "f": [int(i) for i in np.asarray(b.mesh.faces).ravel()], "rot": Numbers(b.rot), "pos": Numbers(b.pos)}
              for b in scene.bodies if len(b.mesh.faces)]
    lines = [{"name": line.name, "color": line.color, "width": line.width, "k": int(line.points.shape[1]),
              "p": Numbers(line.points)} for line in scene.lines]
    surfaces = [{"name": s.name, "color": s.color, "opacity": s.opacity, "k": int(s.points.shape[1]),
                 "f": [int(i) for i in np.asarray(s.faces).ravel()], "p": Numbers(s.points)} for s in scene.surfaces]
    return {"title": scene.title, "times": Numbers(scene.times, 10), "events": [list(e) for e in scene.events],
            "bounds": Numbers(box), "axis_length": 0.15 * size, "bodies": bodies, "lines": lines,
            "surfaces": surfaces, "arrows": _arrows(scene, size), "camera": camera(scene)}
