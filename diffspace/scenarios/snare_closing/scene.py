"""The snare closing's 3-D scene: the ropes (every node, as integrated) closing round the grapple shaft, the ring
(radius R, in the plane z = 0 about the ring axis z) and the shaft's contact force on each rope."""

from __future__ import annotations

import numpy as np

from ...io.scene import Arrows, Body, Line, Scene, cylinder, sample_indices, static_pose


def scene(scenario, outcome) -> Scene:
    keep = sample_indices(np.asarray(outcome.ts))
    times = np.asarray(outcome.ts)[keep]
    model, n = outcome.model, len(keep)
    nodes = np.asarray(outcome.samples.nodes)[keep]  # (T, R, N1, 3)
    shaft_pos = np.asarray(outcome.ys.p)[keep]
    ring = float(model.rings.ring_radius)
    axis = np.asarray(model.shaft.axis)
    shaft = Body("grapple shaft", cylinder(-0.5 * ring * axis, 0.5 * ring * axis, float(model.shaft.radius)),
                 static_pose(n)[0], shaft_pos, color="#2ca02c")
    phi = np.linspace(0.0, 2 * np.pi, 73)
    circle = np.column_stack([ring * np.cos(phi), ring * np.sin(phi), np.zeros_like(phi)])
    lines = (Line("ring (rope ends)", np.broadcast_to(circle, (n, len(phi), 3)).copy(), color="#555555", width=3),)
    lines += tuple(Line(f"rope {r + 1}", nodes[:, r]) for r in range(nodes.shape[1]))
    radial = nodes - shaft_pos[:, None, None, :]
    radial -= (radial @ axis)[..., None] * axis
    nearest = np.argmin(np.linalg.norm(radial, axis=-1), axis=-1)  # (T, R)
    origins = np.take_along_axis(nodes, nearest[..., None, None], axis=2)[:, :, 0]
    arrows = Arrows("shaft's contact force on each rope (resultant, at the rope's node nearest the shaft)", origins,
                    np.asarray(outcome.samples.rope_force)[keep])
    return Scene(f"snare closing: {nodes.shape[1]} ropes round the grapple shaft", times, bodies=(shaft,),
                 lines=lines, arrows=(arrows,))
