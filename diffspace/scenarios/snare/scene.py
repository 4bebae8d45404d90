"""The snare strike's 3-D scene (the full dynamic rope impact): the rope, every node as integrated (ends on the
rings), the grapple shaft moving along its approach direction, and the contact force on each struck node
(magnitude from the solve, along the shaft's outward radial)."""

from __future__ import annotations

import jax
import numpy as np

from ...bodies.rope import assemble
from ...bodies.snare import contact_direction
from ...io.scene import Arrows, Body, Line, Scene, cylinder, sample_indices, static_pose


def rope_scene_parts(model, nodes, shaft_pos, node_forces, label: str = "rope"):
    """Rope line, shaft body and node-force arrows shared by the snare scenes: ``nodes (T, N1, 3)``, ``shaft_pos
    (T, 3)``, ``node_forces (T, N1)`` magnitudes [N] on the rope, pushing it away from the shaft axis."""
    axis = np.asarray(model.shaft.axis)
    ring = float(model.rings.ring_radius)
    shaft = Body("grapple shaft", cylinder(-0.3 * ring * axis, 0.3 * ring * axis, float(model.shaft.radius)),
                 static_pose(len(nodes))[0], shaft_pos, color="#2ca02c")
    radial = nodes - shaft_pos[:, None]
    radial -= (radial @ axis)[..., None] * axis
    unit = radial / np.maximum(np.linalg.norm(radial, axis=-1, keepdims=True), 1e-12)
    arrows = Arrows(f"shaft's contact force on the {label} nodes", nodes, unit * node_forces[..., None])
    return Line(label, nodes), shaft, arrows


def scene(scenario, outcome) -> Scene:
    dyn, model = outcome.dynamic, outcome.model
    keep = sample_indices(np.asarray(dyn.series_time))
    times = np.asarray(dyn.series_time)[keep]
    ends = jax.vmap(model.rings.ends)(times)
    nodes = np.asarray(jax.vmap(assemble)(np.asarray(dyn.series_inner_nodes)[keep], ends[0], ends[1]))
    node = int(scenario.params.node) - 1
    x_eq = np.asarray(outcome.shape)
    u = np.asarray(contact_direction(x_eq, node, model.approach))
    start = x_eq[node] - (float(model.shaft.radius) + float(model.rope.radius) + float(scenario.params.initial_gap)) * u
    shaft_pos = start + np.asarray(dyn.series_travel)[keep, None] * u
    rope, shaft, arrows = rope_scene_parts(model, nodes, shaft_pos, np.asarray(dyn.series_node_forces)[keep])
    return Scene(f"snare rope struck by the grapple shaft at node {node + 1}", times, bodies=(shaft,), lines=(rope,),
                 arrows=(arrows,))
