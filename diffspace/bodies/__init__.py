"""Deformable and free bodies: the lumped-mass wire rope (and its grapple-shaft contact), rigid bodies in
maximal coordinates with joint constraints and assumed-mode flexible links."""

from .from_robot import maximal_state, revolute_joints, rigid_bodies
from .joints import Anchor, JointAngle, Revolute, Weld
from .modal import ModalLink, clamped_free_root, mode_shape
from .multibody import Multibody
from .rigid import WORLD, RigidBodies, RigidState
from .rope import END_CONDITIONS, Rope, Shaft, bend_vectors, equilibrium, node_masses, pressed_equilibrium

__all__ = [
    "END_CONDITIONS",
    "WORLD",
    "Anchor",
    "JointAngle",
    "ModalLink",
    "Multibody",
    "Revolute",
    "RigidBodies",
    "RigidState",
    "Rope",
    "Shaft",
    "Weld",
    "bend_vectors",
    "clamped_free_root",
    "equilibrium",
    "maximal_state",
    "mode_shape",
    "node_masses",
    "pressed_equilibrium",
    "revolute_joints",
    "rigid_bodies",
]
