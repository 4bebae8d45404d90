"""A grapple shaft striking one wire rope of a space snare (Cai et al. 2021, Sections 3 and 4.2).

Besides the scenario, the helpers the capture scenario uses to put the snare's virtual spring behind its own
striking mass: ``Snare.from_config`` / ``Snare.model_of(params, mass)``, :func:`node_table`,
:func:`virtual_impact` (re-exported from :mod:`diffspace.bodies` and :mod:`diffspace.contact`).
"""

from ...bodies import node_table, parabolic_peak, snare_virtual_impact as virtual_impact
from ...contact import fit_polynomial
from .config import check_config, config_fields, ring_problems, rope_spec
from .mass import arm_effective_mass
from .outcome import SnareOutcome, SurfaceFit
from .params import SnareParams
from .scenario import Snare

__all__ = [
    "Snare",
    "SnareOutcome",
    "SnareParams",
    "SurfaceFit",
    "arm_effective_mass",
    "check_config",
    "config_fields",
    "fit_polynomial",
    "node_table",
    "parabolic_peak",
    "ring_problems",
    "rope_spec",
    "virtual_impact",
]
