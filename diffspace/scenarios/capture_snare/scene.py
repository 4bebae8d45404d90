"""The snare capture's 3-D scene: the rod tip striking the struck rope node, whose rope is the paper's virtual
spring (the model is their relative motion along the contact normal), with the contact force."""

from __future__ import annotations

from ...io.scene import Scene
from ..impact.scene import line_impact_scene


def scene(scenario, outcome) -> Scene:
    node = int(outcome.node)
    return line_impact_scene(outcome.impact, f"rod tip striking rope node {node} (virtual spring, along the normal)",
                             "rod tip (arm's effective mass)", f"rope node {node} (virtual spring)")
