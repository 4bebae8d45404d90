"""Scenario parameters declared once (``diffspace.scenarios.declare``): the schema key, the design variable and
the params leaf of a declared parameter all come from its one declaration, in every shipped config."""

from __future__ import annotations

import dataclasses
import functools
import math
import tomllib
from pathlib import Path
from typing import ClassVar

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jaxtyping import Array, Float, Int

from diffspace.app.commands import load
from diffspace.scenarios import REGISTRY, scenario_class, scenario_name
from diffspace.scenarios.base import AbstractParams, AbstractScenario
from diffspace.scenarios.declare import (Declaration, declared, design_parameters, from_config, leaves,
                                        schema_sections)

jax.config.update("jax_enable_x64", True)
CONFIGS = sorted((Path(__file__).parents[1] / "configs").glob("*.toml"))


class Inner(AbstractParams):
    angle: Float[Array, ""] = declared("arm.angle_deg", 30.0, design=(-90.0, 90.0), label="arm angle")
    derived: Float[Array, ""]  # given by from_config


class Outer(AbstractParams):
    speeds: Float[Array, "2"] = declared("motion.speeds_mm", [1.0, 2.0], gt=0.0, design=(0.1, 10.0), log=True)
    node: Int[Array, ""] = declared("motion.node", 3, min=1, design=(1, 9), integer=True)
    arm: Inner
    gravity: Float[Array, ""] = declared("motion.gravity_m_s2", 9.81, gt=0.0)


CFG = {"arm": {"angle_deg": 45.0}, "motion": {"speeds_mm": [4.0, 5.0], "node": 7, "gravity_m_s2": 3.7}}


def test_declaration_gives_schema_values_and_design_variables():
    sections = schema_sections(Outer)
    assert sections["motion"]["speeds_mm"].kind == "floats" and sections["motion"]["speeds_mm"].length == 2
    assert sections["motion"]["speeds_mm"].default == [1.0, 2.0] and sections["motion"]["speeds_mm"].gt == 0.0
    assert sections["motion"]["node"].kind == "int" and sections["arm"]["angle_deg"].default == 30.0
    params = from_config(Outer, CFG, arm={"derived": jnp.asarray(2.0)})
    np.testing.assert_allclose(params.speeds, [4e-3, 5e-3], rtol=1e-15)  # mm -> m by the unit table
    assert params.node.dtype == jnp.int64 and int(params.node) == 7
    assert float(params.arm.angle) == pytest.approx(math.radians(45.0), rel=1e-15)
    assert float(params.arm.derived) == 2.0 and float(params.gravity) == 3.7
    keys = {p.key: p for p in design_parameters(Outer)}
    assert list(keys) == ["motion.speeds_mm[0]", "motion.speeds_mm[1]", "motion.node", "arm.angle_deg"]
    assert keys["arm.angle_deg"].field == "arm.angle" and keys["arm.angle_deg"].unit == "deg"
    assert keys["arm.angle_deg"].help == "arm angle" and keys["motion.speeds_mm[1]"].index == 1
    assert float(keys["arm.angle_deg"].read(params)) == pytest.approx(45.0, rel=1e-15)  # back in config units
    moved = keys["motion.speeds_mm[1]"].write(params, 8.0)
    np.testing.assert_allclose(moved.speeds, [4e-3, 8e-3], rtol=1e-15)


def test_a_shared_declaration_serves_two_params_modules():
    """One key, two scenarios: both params Modules name the same declaration and read the same value."""
    shared = Declaration("motion.speed_m_s", 0.5, gt=0.0, design=(0.1, 2.0), check=lambda v: None if v < 1.5 else "x")

    class First(AbstractParams):
        speed: Float[Array, ""] = declared(shared)

    class Second(AbstractParams):
        speed: Float[Array, ""] = declared(shared)
        node: Int[Array, ""] = declared("motion.node", 2, integer=True)

    assert schema_sections(First)["motion"]["speed_m_s"] == schema_sections(Second)["motion"]["speed_m_s"]
    assert schema_sections(First)["motion"]["speed_m_s"].check(1.6) == "x"
    assert design_parameters(First) == design_parameters(Second)
    cfg = {"motion": {"speed_m_s": 0.7, "node": 4}}
    assert float(from_config(First, cfg).speed) == float(from_config(Second, cfg).speed) == 0.7
    with pytest.raises(TypeError, match="shared Declaration"):
        declared(shared, 1.0)


def test_list_keys_take_bounds_and_labels_per_element():
    moments = Declaration("body.inertia_kg_m2", (1.0, 2.0, 0.1), design=((0.0, 10.0), (0.0, 10.0), (-5.0, 5.0)),
                          label=("Ixx", "Iyy", "Ixy"))
    params = moments.parameters("inertia")
    assert [(p.key, p.lower, p.upper, p.help, p.index) for p in params] == [
        ("body.inertia_kg_m2[0]", 0.0, 10.0, "Ixx", 0), ("body.inertia_kg_m2[1]", 0.0, 10.0, "Iyy", 1),
        ("body.inertia_kg_m2[2]", -5.0, 5.0, "Ixy", 2)]
    assert {p.unit for p in params} == {moments.unit_label}


def test_a_leaf_neither_declared_nor_given_is_named():
    with pytest.raises(TypeError, match="Inner.derived"):
        from_config(Outer, CFG)


def test_a_scenario_missing_a_required_member_cannot_be_made():
    class Nameless(AbstractScenario):  # no ``name``
        params: Outer

        @classmethod
        def from_config(cls, cfg):
            raise NotImplementedError

        def simulate(self, params):
            raise NotImplementedError

        def summary(self, outcome):
            raise NotImplementedError

        def write(self, outcome, out):
            raise NotImplementedError

    class Named(Nameless):
        name: ClassVar[str] = "named"

    params = from_config(Outer, CFG, arm={"derived": jnp.asarray(0.0)})
    with pytest.raises(TypeError, match="name"):
        Nameless(params=params)
    scenario = Named(params=params)
    assert set(scenario.schema().sections) == {"motion", "arm"}
    assert [p.key for p in scenario.design_space()] == [p.key for p in design_parameters(Outer)]


def _declared_scenarios():
    return [name for name in REGISTRY if leaves(scenario_class(name).params_type())]


def test_converted_scenarios_declare_their_parameters():
    assert {"ejection", "impact", "free_floating", "unilateral", "deployment", "flexible_arm", "capture",
            "capture_snare", "snare", "snare_closing"} <= set(_declared_scenarios())


@pytest.mark.parametrize("config", CONFIGS, ids=lambda p: p.stem)
def test_schema_design_key_and_leaf_come_from_one_declaration(config):
    """In every shipped config of a scenario that declares its parameters: each declared key is the schema's field,
    each of its design variables is the declared one (or, where the scenario's model bounds it, inside the
    declared range), and the params leaf holds the config's value in SI (or, for a leaf the scenario derives from
    other keys, the value it derived, which its design variable reads back). A leaf declared without a design
    range may get one from the scenario (a rope node: the rope's interior nodes)."""
    name = scenario_name(tomllib.loads(config.read_text()))
    if name not in _declared_scenarios():
        pytest.skip(f"scenario '{name}' declares no parameters")
    loaded = load(config, [])
    scenario = loaded.scenario
    schema, design = scenario.schema(), {p.key: p for p in scenario.design_space()}
    declared_leaves = dict(leaves(type(scenario.params)))
    for leaf, declaration in declared_leaves.items():
        section, name = declaration.key.split(".", 1)
        assert schema.sections[section][name] == declaration.field(), declaration.key
        for p in declaration.parameters(leaf):
            if p.key not in design:
                assert leaf in SELECTED.get(scenario.name, ()), f"{p.key}: declared, not in the design space"
                continue
            _assert_within(design.pop(p.key), p)
        value = functools.reduce(getattr, leaf.split("."), scenario.params)
        if leaf not in DERIVED.get(scenario.name, ()):
            np.testing.assert_allclose(value, declaration.value(loaded.config), rtol=1e-15, err_msg=leaf)
    twice = [p.key for p in design.values() if p.field in declared_leaves and declared_leaves[p.field].design]
    assert not twice, "a leaf declared twice"


def _assert_within(actual, declared_parameter):
    """The scenario's design variable is the declared one, its range at most narrowed (the snare closing bounds
    EI by the fixed step's stability limit)."""
    assert dataclasses.replace(actual, lower=declared_parameter.lower, upper=declared_parameter.upper) == \
        declared_parameter, actual.key
    assert declared_parameter.lower <= actual.lower < actual.upper <= declared_parameter.upper, actual.key


DERIVED = {"impact": ("stiffness",), "capture": ("stiffness",)}  # contact.stiffness_N_m_n, or Hertz's from materials
SELECTED = {"snare": ("mass", "target_mass")}  # strike.mass_source picks one of them
