"""Scenario parameters declared once, on the leaves of the scenario's params Module.

A numeric leaf that a config sets is declared where the params Module names it:

```python
class ImpactParams(AbstractParams):
    mass1: Float[Array, ""] = declared("impact.mass1_kg", 38.4, gt=0.0, design=(1e-3, 1e5), log=True,
                                       help="moving body")
```

and from that one [`Declaration`][diffspace.scenarios.declare.Declaration] come

* the config schema's field (``impact.mass1_kg``, a float, default 38.4, > 0, with its help),
* the value the params hold, in SI (the config unit, here read from the key's suffix by the unit table
  `diffspace.io.units`, converted by its factor: degrees become radians, mm metres),
* the design variable ([`Parameter`][diffspace.scenarios.parameter.Parameter]: key, bounds, unit, the leaf it
  sets; one per element ``key[i]`` for a list), whose ``read``/``write`` convert with the same unit,
* the docs' config tables (built from the schema).

A key that two scenarios share (the capture's approach speed, struck through a snare or a rigid target) is one
module-level ``Declaration`` that both params Modules name: ``declared(APPROACH_SPEED)``.

A leaf holding a params Module of its own is walked too (its leaves are reached as ``"mast.young"``). A leaf
without a declaration is not read from the config by itself: the scenario's ``from_config`` passes it (a value
derived from several keys, a robot's joint list), as it may for a declared leaf whose value another key can
replace.
"""

from __future__ import annotations

import dataclasses
import functools
import typing
from collections.abc import Callable

import equinox as eqx
import jax.numpy as jnp

from ..io import units
from ..io.config import Field, get_key
from .parameter import Parameter


@dataclasses.dataclass(frozen=True)
class Declaration:
    """One config key behind one params leaf.

    Attributes:
        key: The config key, ``"section.name_unit"`` (``"impact.approach_speed_m_s"``).
        default: Default, config units; a tuple declares a list of that many numbers.
        design: ``(lower, upper)`` bounds of the design variable, config units; for a list key, one pair for every
            element or a tuple of pairs, one per element; ``None``: not a design variable.
        log: Optimisers and fits work with ``log(value)``.
        integer: An integer (a design variable of sweeps only, e.g. a rope node).
        unit: The config unit's label in the unit table; ``None``: the unit the key's suffix names (none: ``"-"``).
        gt: Values must exceed this (config units).
        min: Values must be at least this.
        max: Values must be at most this.
        check: Another check of the value: returns an error text or ``None``.
        help: What the key is (the config docs).
        label: The design variable's name in plots and tables (``""``: derived from the key); for a list key, a
            tuple gives each element its own.
    """

    key: str
    default: float | int | tuple[float, ...]
    design: tuple[float, float] | tuple[tuple[float, float], ...] | None = None
    log: bool = False
    integer: bool = False
    unit: str | None = None
    gt: float | None = None
    min: float | None = None
    max: float | None = None
    check: Callable[[typing.Any], str | None] | None = None
    help: str = ""
    label: str | tuple[str, ...] = ""

    @property
    def unit_label(self) -> str:
        """The config unit (the declared one, else the key suffix's, else dimensionless)."""
        return self.unit or units.split_unit(self.key)[1] or units.DIMENSIONLESS

    @property
    def length(self) -> int | None:
        """Number of elements of a list key; ``None`` for a scalar."""
        return len(self.default) if isinstance(self.default, tuple) else None

    def field(self) -> Field:
        """The config schema's field of the key."""
        kind = "int" if self.integer else "float" if self.length is None else "floats"
        default = list(self.default) if self.length is not None else self.default
        return Field(kind, default, min=self.min, gt=self.gt, max=self.max, length=self.length, check=self.check,
                     help=self.help)

    def value(self, cfg: dict):
        """The leaf's value from a validated config: an array in SI (an integer array for an integer key)."""
        raw = get_key(cfg, self.key)
        if self.integer:
            return jnp.asarray(raw, dtype=int)
        return jnp.asarray(raw, dtype=float) * units.to_si(self.unit_label)

    def parameters(self, leaf: str):
        """The design variables of this key (one per element of a list), setting the params leaf ``leaf``."""
        if self.design is None:
            return ()
        common = dict(unit=self.unit_label, field=leaf, log=self.log, integer=self.integer)
        if self.length is None:
            return (Parameter(self.key, *self.design, help=self.label, **common),)
        per_element = lambda value: value if isinstance(value[0], tuple) else (value,) * self.length  # noqa: E731
        bounds = per_element(self.design)
        labels = self.label if isinstance(self.label, tuple) else (self.label,) * self.length
        return tuple(Parameter(f"{self.key}[{i}]", *bounds[i], index=i, help=labels[i], **common)
                     for i in range(self.length))


def declared(key: str | Declaration, default=None, **options) -> typing.Any:
    """A params Module's field whose value comes from the config key ``key``
    ([`Declaration`][diffspace.scenarios.declare.Declaration]; ``options`` are its other attributes). A list
    default (``[0.0, 0.0]``) declares a list key of that length. ``key`` may be a shared ``Declaration`` instead
    (then nothing else is given)."""
    if isinstance(key, Declaration):
        if default is not None or options:
            raise TypeError(f"declared({key.key!r}): a shared Declaration takes no other arguments")
        return eqx.field(metadata={"declaration": key})
    if isinstance(default, list):
        default = tuple(default)
    return eqx.field(metadata={"declaration": Declaration(key, default, **options)})


@functools.cache
def _nested_types(cls: type) -> dict[str, type]:
    """Fields of ``cls`` whose annotation is a Module class (walked as nested params)."""
    hints = typing.get_type_hints(cls)
    return {name: t for name, t in hints.items() if isinstance(t, type) and issubclass(t, eqx.Module)}


def leaves(cls: type, prefix: str = "") -> list[tuple[str, Declaration]]:
    """``(leaf path, declaration)`` of every declared leaf of the params class ``cls``, nested ones included, in
    field order."""
    out = []
    nested = _nested_types(cls)
    for f in dataclasses.fields(cls):
        if "declaration" in f.metadata:
            out.append((prefix + f.name, f.metadata["declaration"]))
        elif f.name in nested:
            out.extend(leaves(nested[f.name], f"{prefix}{f.name}."))
    return out


def schema_sections(cls: type) -> dict[str, dict[str, Field]]:
    """The config schema's sections of the declared keys of ``cls``: ``{section: {name: Field}}``."""
    sections: dict[str, dict[str, Field]] = {}
    for _, declaration in leaves(cls):
        section, name = declaration.key.split(".", 1)
        sections.setdefault(section, {})[name] = declaration.field()
    return sections


def design_parameters(cls: type):
    """The design variables declared on ``cls`` ([`Parameter`][diffspace.scenarios.parameter.Parameter]), in field
    order."""
    return tuple(p for leaf, declaration in leaves(cls) for p in declaration.parameters(leaf))


def from_config(cls: type, cfg: dict, **given):
    """An instance of the params class ``cls``: each leaf from ``given`` if there (a value the scenario derives
    from several keys, e.g. a contact stiffness from material data), else a declared leaf from ``cfg`` (SI); a
    nested params Module's own given leaves as a dict under its field name.

    Raises:
        TypeError: A leaf is neither declared nor given (a scenario's programming error).
    """
    nested = _nested_types(cls)
    values = {}
    for f in dataclasses.fields(cls):
        if f.name in nested and isinstance(given.get(f.name, {}), dict):
            values[f.name] = from_config(nested[f.name], cfg, **given.get(f.name, {}))
        elif f.name in given:
            values[f.name] = given[f.name]
        elif "declaration" in f.metadata:
            values[f.name] = f.metadata["declaration"].value(cfg)
        else:
            raise TypeError(f"{cls.__name__}.{f.name}: neither declared nor given by from_config")
    return cls(**values)
