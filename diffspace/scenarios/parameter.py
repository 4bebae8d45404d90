"""The params Module every scenario builds from its config, and a design variable: a numeric config key with its
bounds and unit, and the params leaf it sets."""

from __future__ import annotations

import dataclasses
import functools

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array

from ..io import units


class AbstractParams(eqx.Module):
    """Base of every scenario's parameter Module (named array fields; what design work may change). A leaf that
    a config key sets declares it ([`declared`][diffspace.scenarios.declare.declared]): key, default, unit, bounds,
    design range, once."""


@dataclasses.dataclass(frozen=True)
class Parameter:
    """One design variable: a numeric config key, its bounds and unit (config units), and where it lives.

    The unit, one of the unit table's labels (``diffspace.io.units``), fixes the conversion from config units to
    the SI value stored in the params (degrees become radians, mm metres; the others are SI), so reading a config,
    [`AbstractScenario.with_design`][diffspace.scenarios.base.AbstractScenario.with_design] and writing results
    back all convert in this one place.

    Attributes:
        key: The config key (``"friction.viscous_N_m_s_rad"``, ``"ejection.attitude[2]"``).
        lower: Lower bound, config units.
        upper: Upper bound, config units (above ``lower``).
        unit: Config unit, as the unit table labels it (``"deg"``, ``"N m"``, ``"N/m"``, ``"kg m²"``, ``"-"`` for a
            pure number); a key with a unit suffix declares the unit its suffix names.
        field: The dotted path of the ``AbstractParams`` leaf it sets (``"attitude"``, ``"drive.end"``).
        index: The element of that leaf (``None``: the whole scalar leaf).
        log: Optimisers and fits work with ``log(value)`` (positive parameters spanning decades).
        integer: A discrete choice (e.g. a rope node); sweeps only, not gradient-based design.
        help: What the variable is, for labels.

    Raises:
        ValueError: ``lower >= upper``, ``log`` with a non-positive lower bound, or a unit the table does not know.
    """

    key: str
    lower: float
    upper: float
    unit: str
    field: str
    index: int | None = None
    log: bool = False
    integer: bool = False
    help: str = ""

    def __post_init__(self):
        if not self.lower < self.upper:
            raise ValueError(f"{self.key}: lower bound {self.lower} must be below upper bound {self.upper}")
        if self.log and not self.lower > 0:
            raise ValueError(f"{self.key}: a log-scaled parameter needs a positive lower bound")
        try:
            units.unit(self.unit)
        except ValueError as err:
            raise ValueError(f"{self.key}: {err}") from None

    @property
    def to_si(self) -> float:
        """Factor from the config unit to SI."""
        return units.to_si(self.unit)

    def _leaf(self, params: AbstractParams):
        return functools.reduce(getattr, self.field.split("."), params)

    def read(self, params: AbstractParams) -> Array:
        """The value in ``params``, in config units; pure.

        Args:
            params: A scenario's parameters.

        Returns:
            The value (scalar), in config units.
        """
        leaf = self._leaf(params)
        value = leaf if self.index is None else leaf[self.index]
        return value if self.integer else value / self.to_si

    def write(self, params: AbstractParams, value) -> AbstractParams:
        """``params`` with this variable set to ``value``; pure.

        Args:
            params: A scenario's parameters.
            value: The new value, config units (rounded for an ``integer`` parameter).

        Returns:
            A copy of ``params`` with the leaf (element) replaced by the value in SI units.
        """
        leaf = self._leaf(params)
        value = jnp.asarray(value)
        if self.integer:
            value = jnp.round(value).astype(leaf.dtype)
        else:
            value = (value * self.to_si).astype(leaf.dtype)
        new = value if self.index is None else leaf.at[self.index].set(value)
        return eqx.tree_at(self._leaf, params, new)
