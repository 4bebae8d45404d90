r"""Units: the one table of the units that configs, design variables and results are written in.

A unit has a *label*, what a reader sees (``N m s/rad``, ``deg/s``, ``kg/m³``), and a *key suffix*, the same unit
inside an identifier (``_N_m_s_rad``, ``_deg_s``, ``_kg_m3``): config keys, summary keys, metrics and result
columns end in theirs (``separation_velocity_m_s``). The models work in SI; a config value in a unit that is not
SI is taken there by the unit's factor, $x_\mathrm{SI} = f\,x$ ($f = \pi/180$ for degrees, $10^{-3}$ for mm).

The config reader (joint lists, design variables' ``Parameter.unit``), the design layer's labels, the results
writer's axis labels and the reports' summary tables all read this table.

One suffix names two units: ``_N_m`` a torque (N m) or a stiffness, a force per length (N/m), and ``_N_m2`` a
bending rigidity (N m²) or the quadratic coefficient of a force polynomial (N/m²). A key whose stem names a
stiffness (the word ``stiffness``, a word ``k``) or a force polynomial's coefficient (a last word ``a`` or ``b``)
reads the force per length (:data:`FORCE_PER_LENGTH`); a design variable declares its unit and is read by it.
"""

from __future__ import annotations

import dataclasses
import math
import re

DEGREE = math.pi / 180.0
"""Radians per degree."""

DIMENSIONLESS = "-"
"""The unit of a pure number (a ratio, a coefficient, an index)."""

FORCE_PER_LENGTH = re.compile(r"stiffness|(^|_)k($|_)|(^|_)[ab]$")
"""Stems (a key's last dotted segment less its suffix) whose ``_N_m`` / ``_N_m2`` is a force per length: a
stiffness ``k_...``, the coefficients ``a``, ``b`` of a force polynomial."""


@dataclasses.dataclass(frozen=True)
class Unit:
    """One unit.

    Attributes:
        label: As a reader sees it (``"N m s/rad"``), and as a design variable declares it.
        suffixes: The key suffixes that name it, the one keys are written with first (``("_per_s", "_1_s")``).
        to_si: Factor from this unit to SI.
        stem: For a suffix that two units share: the stems that read it as this unit (else the other).
    """

    label: str
    suffixes: tuple[str, ...]
    to_si: float = 1.0
    stem: re.Pattern | None = None


UNITS = (
    Unit(DIMENSIONLESS, ()), Unit("%", ("_percent",), 0.01),
    Unit("m", ("_m",)), Unit("mm", ("_mm",), 1e-3), Unit("m²", ("_m2",)),
    Unit("s", ("_s",)), Unit("ms", ("_ms",), 1e-3), Unit("kg", ("_kg",)),
    Unit("rad", ("_rad",)), Unit("deg", ("_deg",), DEGREE),
    Unit("m/s", ("_m_s",)), Unit("m/s²", ("_m_s2",)),
    Unit("rad/s", ("_rad_s",)), Unit("deg/s", ("_deg_s",), DEGREE), Unit("deg/s²", ("_deg_s2",), DEGREE),
    Unit("1/s", ("_per_s", "_1_s")), Unit("Hz", ("_Hz", "_hz")),
    Unit("kg/m", ("_kg_m",)), Unit("kg/m³", ("_kg_m3",)), Unit("kg m²", ("_kg_m2",)),
    Unit("kg m/s", ("_kg_m_s",)), Unit("kg m²/s", ("_kg_m2_s",)), Unit("m kg^½", ("_m_sqrt_kg",)),
    Unit("N", ("_N",)), Unit("N s", ("_N_s",)), Unit("N s/m", ("_N_s_m",)), Unit("Pa", ("_Pa",)),
    Unit("N m", ("_N_m",)), Unit("N/m", ("_N_m",), stem=FORCE_PER_LENGTH),
    Unit("N m²", ("_N_m2",)), Unit("N/m²", ("_N_m2",), stem=FORCE_PER_LENGTH), Unit("N/mⁿ", ("_N_m_n",)),
    Unit("N m s", ("_N_m_s",)), Unit("N m/rad", ("_N_m_rad",)), Unit("N m s/rad", ("_N_m_s_rad",)),
    Unit("J", ("_J",)), Unit("W", ("_W",)),
)
"""Every unit configs, design variables and results use."""

_BY_LABEL = {unit.label: unit for unit in UNITS}
_READINGS = {suffix: sorted((u for u in UNITS if suffix in u.suffixes), key=lambda u: u.stem is None)
             for each in UNITS for suffix in each.suffixes}  # per suffix its units, the stem-specific one first
_LONGEST_FIRST = sorted(_READINGS, key=len, reverse=True)  # _N_m_s_rad is read before _rad


def unit(label: str) -> Unit:
    """The unit labelled ``label``; ``ValueError`` naming the known labels for any other."""
    if label not in _BY_LABEL:
        raise ValueError(f"unknown unit {label!r} (known: {', '.join(_BY_LABEL)})")
    return _BY_LABEL[label]


def to_si(label: str) -> float:
    """Factor from the unit ``label`` to SI: ``to_si("deg") == pi / 180``, ``to_si("N m") == 1``."""
    return unit(label).to_si


def key_suffix(label: str) -> str:
    """The suffix a key in the unit ``label`` ends with: ``"deg/s"`` -> ``"_deg_s"``."""
    return unit(label).suffixes[0]


def split_unit(key: str) -> tuple[str, str]:
    """A key's stem and the label of its unit suffix: ``"separation_velocity_m_s"`` -> ``("separation_velocity",
    "m/s")``, ``"spring.stiffness_N_m"`` -> ``("spring.stiffness", "N/m")`` but ``"drive_torque_N_m"`` ->
    ``("drive_torque", "N m")``; ``(key, "")`` for a key without one. The longest suffix wins and leaves a stem."""
    for suffix in _LONGEST_FIRST:
        if key.endswith(suffix) and len(key) > len(suffix):
            stem = key[: -len(suffix)]
            last = stem.rsplit(".", 1)[-1]
            return stem, next(u.label for u in _READINGS[suffix] if u.stem is None or u.stem.search(last))
    return key, ""
