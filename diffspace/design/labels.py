"""Human axis labels of design keys and metrics: what a plot shows instead of raw config keys.

A design variable is named by its :class:`~diffspace.scenarios.Parameter` (its help text, its unit; element
numbers of list-valued keys counted from 1 as users count joints: ``ejection.attitude[1]`` is joint 2); any
other key by its section, its words and its unit suffix (``friction.coulomb_N_m`` -> ``friction coulomb
[N m]``); a metric by its words and unit suffix (``separation_velocity_m_s`` -> ``separation velocity [m/s]``).
"""

from __future__ import annotations

from ..io.config import split_indexed
from ..io.results import name_and_unit, with_unit
from ..scenarios import Parameter


def _split(key: str) -> tuple[list[str], str, int | None]:
    """``"ejection.attitude_deg[1]"`` -> ``(["ejection"], "attitude_deg", 1)``."""
    base, index = split_indexed(key)
    *sections, last = base.split(".")
    return [section.replace("_", " ") for section in sections], last, index


def key_name(key: str) -> tuple[str, str, int | None]:
    """``"ejection.attitude_deg[1]"`` -> ``("ejection attitude", "deg", 1)`` (the index as written, 0-based)."""
    sections, last, index = _split(key)
    name, unit = name_and_unit(last)
    return " ".join([*sections, name]), unit, index


def parameter_label(p: Parameter) -> str:
    """Label of a design variable: ``"ejection attitude, joint 2 (shoulder) [deg]"``, ``"Coulomb friction
    coefficient"``, ``"capture approach angles, element 1 [deg]"``."""
    name, _, index = key_name(p.key)  # the unit it declares, not the one its suffix reads
    if p.help:  # a help that names the quantity stands alone; one that names the element follows the name
        text = f"{name}, {p.help}" if index is not None and name.split()[-1] not in p.help else p.help
    else:
        text = f"{name}, element {index + 1}" if index is not None else name
    return with_unit(text, p.unit)


def key_label(key: str, parameters: dict[str, Parameter] | None = None) -> str:
    """Label of a design key (through its parameter when there is one), a config key or a metric."""
    if parameters and key in parameters:
        return parameter_label(parameters[key])
    name, unit, index = key_name(key)
    return with_unit(f"{name}, element {index + 1}" if index is not None else name, unit)


def design_parameters(scenario) -> dict[str, Parameter]:
    """The scenario's design variables by key."""
    return {p.key: p for p in scenario.design_space()}
