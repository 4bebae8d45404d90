"""Deformable and free bodies: the lumped-mass wire rope (and its grapple-shaft contact), one snare rope
between its rings (installed shape, virtual spring) and the shaft's impacts on it, rigid bodies in maximal
coordinates with joint constraints and assumed-mode flexible links."""

from .from_robot import maximal_state, revolute_joints, rigid_bodies
from .joints import Anchor, JointAngle, Revolute, Weld
from .modal import ModalLink, clamped_free_root, mode_shape
from .multibody import Multibody
from .rigid import WORLD, RigidBodies, RigidState
from .rope import END_CONDITIONS, NormalContact, Rope, Shaft, bend_vectors, equilibrium, node_masses, pressed_equilibrium
from .snare import (
    APPROACHES,
    RopeSpec,
    NodeStatics,
    SnareModel,
    SnareRings,
    VirtualSpring,
    arc_guess,
    contact_direction,
    fit_virtual_spring,
    fitting_angles,
    initial_shape,
    install_clamps,
    node_table,
    pressing_curve,
    shape_and_pressing_curve,
    stiffness_profile,
    virtual_spring,
)
from .snare_impact import (
    MAX_STEP,
    SCHEMES,
    RopeImpact,
    dynamic_horizon,
    dynamic_impact,
    parabolic_peak,
    snare_virtual_impact,
    strike_step_length,
)

__all__ = [
    "APPROACHES",
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
    "RopeImpact",
    "RopeSpec",
    "Shaft",
    "NodeStatics",
    "SnareModel",
    "SnareRings",
    "VirtualSpring",
    "Weld",
    "arc_guess",
    "bend_vectors",
    "clamped_free_root",
    "contact_direction",
    "dynamic_horizon",
    "dynamic_impact",
    "equilibrium",
    "fit_virtual_spring",
    "fitting_angles",
    "initial_shape",
    "install_clamps",
    "maximal_state",
    "mode_shape",
    "node_masses",
    "node_table",
    "parabolic_peak",
    "pressed_equilibrium",
    "pressing_curve",
    "shape_and_pressing_curve",
    "revolute_joints",
    "rigid_bodies",
    "snare_virtual_impact",
    "stiffness_profile",
    "virtual_spring",
]
