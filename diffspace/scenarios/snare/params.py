"""Snare parameters (what design work and fits change), each declared once with its config key.

The rope's axial rigidity and the contact law's stiffness and restitution are shared with the snare closing
(the same rope and law, three of them): one :class:`~diffspace.scenarios.declare.Declaration` each, named by both
params Modules.
"""

from __future__ import annotations

from jaxtyping import Array, Float, Int

from ..declare import Declaration, declared
from ..parameter import AbstractParams

AXIAL_RIGIDITY = Declaration("rope.axial_rigidity_N", 5.0e4, gt=0.0, design=(1e3, 1e7), log=True,
                             help="EA; k_tes = EA / section length")
CONTACT_STIFFNESS = Declaration("contact.stiffness_N_m_n", 1.0e7, gt=0.0, design=(1e4, 1e10), log=True,
                                help="k of the rope-shaft contact")
CONTACT_RESTITUTION = Declaration("contact.restitution_c", 0.55, gt=0.0, max=1.0, design=(1e-3, 1.0),
                                  help="input restitution c of the law")


def _node_check(value):
    return None if value >= 2 else "must be an interior node (>= 2; node 1 is the fixed-ring end)"


class SnareParams(AbstractParams):
    """The strike, the rope and the contact. ``node`` and ``arm_mass`` are not design variables of their own
    declaration: the node's range is the rope's (``design_space``), the arm's effective mass comes from the robot."""

    node: Int[Array, ""] = declared("strike.node", 16, integer=True, check=_node_check,
                                    help="1-based contact node (paper: 16 = middle)")
    mass: Float[Array, ""] = declared("strike.mass_kg", 1.79, gt=0.0, design=(1e-3, 1e5), log=True,
                                      help="striking mass with mass_source = 'value'")
    target_mass: Float[Array, ""] = declared("strike.target_mass_kg", 41.7, gt=0.0, design=(1e-3, 1e5), log=True,
                                             help="in series with the arm (paper Table 4)")
    approach_speed: Float[Array, ""] = declared("strike.approach_speed_m_s", 0.06, gt=0.0, design=(1e-3, 1.0),
                                                log=True)
    initial_gap: Float[Array, ""] = declared("strike.initial_gap_m", 0.0, min=0.0)
    arm_mass: Float[Array, ""]  # the arm's effective mass with mass_source = "arm" (in series with the target)
    bending_stiffness: Float[Array, ""] = declared("rope.bending_stiffness_N_m_rad", 2.0, gt=0.0, design=(1e-2, 1e2),
                                                   log=True, help="k_tor per interior node")
    axial_rigidity: Float[Array, ""] = declared(AXIAL_RIGIDITY)
    contact_stiffness: Float[Array, ""] = declared(CONTACT_STIFFNESS)
    contact_restitution: Float[Array, ""] = declared(CONTACT_RESTITUTION)
    virtual_damping: Float[Array, ""] = declared("virtual_spring.damping_N_s_m", 0.0, min=0.0, design=(0.0, 100.0),
                                                 help="c_v of Eq. (43)")
    ring_rate: Float[Array, ""] = declared("snare.ring_rate_deg_s", 0.0, design=(-360.0, 360.0),
                                           help="rotating-ring drive rate during the impact")  # rad/s
