"""The impact's 3-D scene, in body 2's frame (the model is the bodies' relative motion along the line): body 2's
face at x = 0, body 1's face at x = indentation (negative while apart), the contact force on body 2."""

from __future__ import annotations

import numpy as np

from ...io.scene import Arrows, Body, Scene, box, sample_indices, static_pose

EDGE = 0.1  # m, the drawn blocks' edge (the model has no shapes)


def scene(scenario, outcome) -> Scene:
    return line_impact_scene(outcome, "impact along a line, seen from body 2", "body 1 (approaching)",
                             "body 2 (at rest before contact)")


def line_impact_scene(outcome, title: str, first: str, second: str) -> Scene:
    """Two blocks and the contact force from an ``ImpactOutcome``'s indentation and force series."""
    times = np.asarray(outcome.series_time)
    keep = sample_indices(times)
    times, indentation = times[keep], np.asarray(outcome.series_indentation)[keep]
    force = np.asarray(outcome.series_force)[keep]
    n = len(times)
    rot, fixed = static_pose(n)
    body1_pos = np.column_stack([indentation, np.zeros(n), np.zeros(n)])
    bodies = (Body(first, box((EDGE,) * 3, (-EDGE / 2, 0.0, 0.0)), rot, body1_pos, color="#4c72b0"),
              Body(second, box((EDGE,) * 3, (EDGE / 2, 0.0, 0.0)), rot, fixed, color="#dd8452"))
    vectors = np.column_stack([force, np.zeros(n), np.zeros(n)])[:, None]
    arrows = Arrows(f"contact force on {second.split(' (')[0]}", np.zeros((n, 1, 3)), vectors)
    events = [(float(outcome.contact_start_time), "first touch"), (float(outcome.release_time), "release")]
    return Scene(title, times, bodies=bodies, arrows=(arrows,),
                 events=tuple(e for e in events if np.isfinite(e[0])))
