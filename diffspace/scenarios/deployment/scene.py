"""The deployment's 3-D scene: the mast turning about the drive joint, each cube module posed by its natural
coordinates, each interface drawn as it is modelled (the shell's mid-surface nodes as a surface, or a beam's
axis between the face centres), at the saved frames. Elastic deflections are drawn true to scale."""

from __future__ import annotations

import equinox as eqx
import jax
import numpy as np

from ...bodies import natural
from ...io.scene import Body, Line, Scene, Surface, box, grid_faces, sample_indices


@eqx.filter_jit
def _geometry(mast, ys):
    modules = jax.vmap(mast.module_coordinates)(ys)  # (F, k, 12)
    rot = jax.vmap(jax.vmap(natural.axes))(modules)
    if mast.shell is not None:
        nodes = jax.vmap(lambda y: mast.shell_coordinates(y)[:, :, 0])(ys)  # (F, i, N, 3)
        return modules[..., :3], rot, nodes
    frames = jax.vmap(mast.face_frames)(ys)
    return modules[..., :3], rot, (frames[1], frames[3])


def _tubes(mast, nodes: np.ndarray) -> tuple[Surface, ...]:
    rows, cols = mast.n_axial + 1, mast.n_circ
    grid = nodes.reshape(nodes.shape[0], nodes.shape[1], rows, cols, 3)
    closed = np.concatenate([grid, grid[:, :, :, :1]], axis=3)  # repeat the first generator: a closed tube
    faces = grid_faces(rows, cols + 1)
    return tuple(Surface(f"interface {k + 1} (shell)", closed[:, k].reshape(len(grid), -1, 3), faces)
                 for k in range(grid.shape[1]))


def scene(scenario, outcome) -> Scene:
    keep = sample_indices(np.asarray(outcome.frame_t))
    times = np.asarray(outcome.frame_t)[keep]
    mast = scenario.mast(scenario.params)
    centres, rot, interfaces = (jax.tree_util.tree_map(np.asarray, x) for x in _geometry(mast, outcome.frame_y[keep]))
    edge = float(scenario.params.mast.edge)
    bodies = tuple(Body(f"module {k + 1}", box((edge,) * 3), rot[:, k], centres[:, k],
                        color="#4c72b0" if k else "#333333") for k in range(centres.shape[1]))
    if mast.shell is not None:
        surfaces, lines = _tubes(mast, interfaces), ()
    else:
        start, end = interfaces
        surfaces = ()
        lines = tuple(Line(f"interface {k + 1} (beam axis)", np.stack([start[:, k], end[:, k]], axis=1), width=8)
                      for k in range(start.shape[1]))
    events = ((float(outcome.motion_end), "drive stops"),) if np.isfinite(float(outcome.motion_end)) else ()
    return Scene("mast deployment (module 1 turned by the drive about z)", times, bodies=bodies, lines=lines,
                 surfaces=surfaces, events=events)
