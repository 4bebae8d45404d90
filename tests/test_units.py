"""The one unit table (``diffspace.io.units``): every design variable of every shipped scenario declares a unit it
knows, and a design key's unit suffix reads as the unit its variable declares; the table reads suffixes longest
first and tells a torque from a stiffness; the config reader's joint units and the design variables convert by it."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from diffspace.io import load_robot
from diffspace.io.config import split_indexed
from diffspace.io.results import quantity_label
from diffspace.io.units import DIMENSIONLESS, UNITS, split_unit, to_si, unit
from diffspace.scenarios import Parameter, load_scenario
from diffspace.scenarios.robot_config import joint_column, joint_scales, joint_unit

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = sorted((ROOT / "configs").glob("*.toml"))


@pytest.mark.parametrize("config", CONFIGS, ids=lambda p: p.stem)
def test_design_units_are_the_tables_and_agree_with_the_key_suffixes(config):
    """A key with a unit suffix declares the unit the suffix reads (``contact.stiffness_N_m_n``: N/mⁿ,
    ``ejection.spring_stiffness_N_m``: N/m); a key without one is a joint list in its joints' units or a pure
    number."""
    scenario = load_scenario(config)
    robot = getattr(scenario, "robot", None)
    joint_units = {joint_unit(robot, j) for j in range(robot.n_joints)} if robot is not None else set()
    for p in scenario.design_space():
        unit(p.unit)  # raises for a unit the table does not know
        _, read = split_unit(split_indexed(p.key)[0])
        if read:
            assert read == p.unit, f"{config.name}: {p.key} declares {p.unit!r}, its suffix reads {read!r}"
        else:
            assert p.unit in joint_units | {DIMENSIONLESS}, f"{config.name}: {p.key} declares {p.unit!r}"


def test_every_suffix_reads_as_its_unit():
    """Labels are unique; a key ending in a unit's suffix reads as that unit, and of the two units a suffix names
    the one with a stem pattern is read after a matching stem only (``x_N_m``: N m, ``k_N_m``: N/m)."""
    assert len({u.label for u in UNITS}) == len(UNITS)
    for u in UNITS:
        assert u.to_si > 0
        for suffix in u.suffixes:
            assert suffix.startswith("_")
            assert (split_unit("x" + suffix) == ("x", u.label)) == (u.stem is None), (u, suffix)
            if u.stem is not None:
                assert split_unit("k" + suffix) == ("k", u.label)


@pytest.mark.parametrize("key, stem, label", [
    ("friction.viscous_N_m_s_rad", "friction.viscous", "N m s/rad"),  # not _rad, _s or _N_m
    ("separation_velocity_m_s", "separation_velocity", "m/s"),
    ("rope.linear_density_kg_m", "rope.linear_density", "kg/m"),
    ("stable_angular_velocity_deg_s", "stable_angular_velocity", "deg/s"),
    ("drive_torque_N_m", "drive_torque", "N m"),
    ("spring.stiffness_N_m", "spring.stiffness", "N/m"),  # a stiffness
    ("k_v0_node16_N_m", "k_v0_node16", "N/m"),  # a stiffness k
    ("paper_form_fit_b_N_m", "paper_form_fit_b", "N/m"),  # a force polynomial's coefficients
    ("paper_form_fit_a_N_m2", "paper_form_fit_a", "N/m²"),
    ("rope.bending_rigidity_N_m2", "rope.bending_rigidity", "N m²"),
    ("contact.stiffness_N_m_n", "contact.stiffness", "N/mⁿ"),
    ("cases_per_s", "cases", "1/s"),
    ("contact.mu", "contact.mu", ""),
    ("_m", "_m", ""),  # a suffix alone is no unit
])
def test_suffixes_read_longest_first(key, stem, label):
    assert split_unit(key) == (stem, label)


def test_factors_to_si():
    assert to_si("deg") == to_si("deg/s") == to_si("deg/s²") == math.pi / 180.0
    assert to_si("mm") == to_si("ms") == 1e-3 and to_si("N m") == to_si(DIMENSIONLESS) == 1.0
    with pytest.raises(ValueError, match="unknown unit 'N m\\^2'"):
        to_si("N m^2")


def test_a_parameter_declares_a_unit_the_table_knows():
    assert Parameter("arm.angle_deg", 0.0, 90.0, "deg", "angle").to_si == math.pi / 180.0
    with pytest.raises(ValueError, match="rope.bending_rigidity_N_m2: unknown unit 'N m\\^2'"):
        Parameter("rope.bending_rigidity_N_m2", 1e-4, 10.0, "N m^2", "bending_rigidity")


TWO_JOINTS = """
name = "two_joints"
[base]
name = "base"
mass = 50.0
com = [0.0, 0.0, 0.0]
inertia = [2.0, 2.0, 2.0, 0.0, 0.0, 0.0]
[[joints]]
name = "shoulder"
type = "revolute"
parent = "base"
child = "upper"
xyz = [0.0, 0.0, 0.3]
axis = [0.0, 1.0, 0.0]
link = { mass = 5.0, com = [0.0, 0.0, 0.4], inertia = [0.3, 0.3, 0.01, 0.0, 0.0, 0.0] }
[[joints]]
name = "slide"
type = "prismatic"
parent = "upper"
child = "forearm"
xyz = [0.0, 0.0, 0.8]
axis = [0.0, 0.0, 1.0]
link = { mass = 3.0, com = [0.0, 0.0, 0.3], inertia = [0.1, 0.1, 0.005, 0.0, 0.0, 0.0] }
"""


def test_joint_units_convert_and_name_columns_by_the_table(tmp_path):
    (tmp_path / "two_joints.toml").write_text(TWO_JOINTS)
    robot = load_robot(tmp_path / "two_joints.toml")
    units = [joint_unit(robot, j) for j in range(robot.n_joints)]
    assert units == ["deg", "m"]
    np.testing.assert_array_equal(joint_scales(robot), [math.pi / 180.0, 1.0])
    assert [joint_column(robot, j, "_rate", rate=True) for j in range(2)] == ["joint1_rate_deg_s", "joint2_rate_m_s"]
    assert quantity_label(joint_column(robot, 1, "_change_final")) == "joint 2 change final [m]"
