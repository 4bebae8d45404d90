"""Deformable and free bodies: the lumped-mass wire rope (and its grapple-shaft contact)."""

from .rope import END_CONDITIONS, Rope, Shaft, bend_vectors, equilibrium, node_masses, pressed_equilibrium

__all__ = ["END_CONDITIONS", "Rope", "Shaft", "bend_vectors", "equilibrium", "node_masses", "pressed_equilibrium"]
