"""Hostile-but-fair input files at the loader level: every case raises ``ConfigError`` with one short line
naming the file and the key, link or joint; large inputs load in linear time and never produce huge messages.

The CLI versions of these cases (exit status, no traceback) live with the command-line tests.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import diffspace  # noqa: F401  (float64 before the tests build arrays)
from diffspace.io import load_robot
from diffspace.io.config import Field, Schema, apply_overrides, read_toml, validate
from diffspace.io.files import MissingFileError
from diffspace.io.tables import read_csv_columns
from diffspace.io.urdf import rpy_rotations
from diffspace.core.robot import MAX_BODIES
from diffspace.core.spatial import rpy_to_rotation
from diffspace.core.status import ConfigError, capped, shown

from .random_robots import write_random_robot

INERTIAL = '<inertial><mass value="{m}"/><inertia ixx="{i}" iyy="{i}" izz="{i}" ixy="0" ixz="0" iyz="0"/></inertial>'


def link(name: str, mass="1", inertia="0.1", body: str | None = None) -> str:
    return f'<link name="{name}">{INERTIAL.format(m=mass, i=inertia) if body is None else body}</link>'


def joint(name: str, parent: str | None, child: str | None, kind="revolute", extra="") -> str:
    parent_xml = "" if parent is None else f'<parent link="{parent}"/>'
    child_xml = "" if child is None else f'<child link="{child}"/>'
    return f'<joint name="{name}" type="{kind}">{parent_xml}{child_xml}<axis xyz="0 0 1"/>{extra}</joint>'


def robot_xml(*parts: str) -> str:
    return '<robot name="r">' + "".join(parts) + "</robot>"


GOOD = [link("base"), link("a"), link("b"), joint("j1", "base", "a"), joint("j2", "a", "b")]


def _load_error(tmp_path: Path, text: str | bytes, name="bad.urdf") -> str:
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(ConfigError) as err:
        load_robot(path)
    message = str(err.value)
    assert "\n" not in message and len(message) < 600, message
    assert str(path) in message, message
    return message


def _with_limit(attributes: str) -> str:
    """The good robot with a ``<limit>`` on joint 'j2'."""
    return _replace('<axis xyz="0 0 1"/></joint></robot>', f'<axis xyz="0 0 1"/><limit {attributes}/></joint></robot>')


def _replace(old: str, new: str) -> str:
    text = robot_xml(*GOOD)
    assert old in text
    return text.replace(old, new, 1)


URDF_CASES = {
    # case: (URDF text, fragments the message must contain)
    "loop_two_parents": (
        robot_xml(*GOOD, link("c"), joint("j3", "base", "c"), joint("j4", "b", "c")),
        ["link 'c' is the child of joints 'j3', 'j4'", "closed kinematic loop"],
    ),
    "no_root": (robot_xml(link("a"), link("b"), joint("j1", "a", "b"), joint("j2", "b", "a")), ["no root link"]),
    "two_roots": (robot_xml(*GOOD, link("stray")), ["2 root links", "'base'", "'stray'"]),
    "detached_cycle": (
        robot_xml(*GOOD, link("p"), link("q"), joint("j3", "p", "q"), joint("j4", "q", "p")),
        ["links 'p', 'q' are not connected to the root link 'base'", "closed kinematic loop"],
    ),
    "no_child": (_replace('<child link="b"/>', ""), ["joint 'j2'", "missing <child>"]),
    "no_parent": (_replace('<parent link="a"/>', ""), ["joint 'j2'", "missing <parent>"]),
    "child_without_link": (_replace('<child link="b"/>', "<child/>"), ["joint 'j2'", "<child> has no link"]),
    "unknown_child": (_replace('<child link="b"/>', '<child link="zz"/>'), ["joint 'j2'", "unknown child link 'zz'"]),
    "self_parent": (_replace('<child link="b"/>', '<child link="a"/>'), ["joint 'j2'", "same link 'a'"]),
    "limit_not_numeric": (
        _with_limit('lower="-1" upper="abc"'),
        ["joint 'j2'/limit", "'upper' is not a number: 'abc'"],
    ),
    "limit_nan": (
        _with_limit('lower="nan" upper="1"'),
        ["joint 'j2'/limit", "'lower' must be finite"],
    ),
    "limit_inverted": (
        _with_limit('lower="1" upper="-1"'),
        ["joint 'j2'/limit", "lower limit 1 is above the upper limit -1"],
    ),
    "mimic": (
        _replace('<axis xyz="0 0 1"/></joint></robot>', '<axis xyz="0 0 1"/><mimic joint="j1"/></joint></robot>'),
        ["joint 'j2'", "<mimic> joints are not supported"],
    ),
    "planar_joint": (_replace('name="j2" type="revolute"', 'name="j2" type="planar"'), ["joint 'j2'", "'planar'"]),
    "no_joint_type": (_replace('name="j2" type="revolute"', 'name="j2"'), ["joint 'j2'", "joint type None"]),
    "duplicate_link": (robot_xml(*GOOD, link("a")), ["duplicate link names: 'a'"]),
    "duplicate_joint": (robot_xml(*GOOD, link("c"), joint("j1", "b", "c")), ["joint 'j1'", "duplicate joint name"]),
    "unnamed_link": (robot_xml(*GOOD, "<link/>"), ["<link> number 4 has no name"]),
    "zero_axis": (_replace('<child link="b"/><axis xyz="0 0 1"/>', '<child link="b"/><axis xyz="0 0 0"/>'),
                  ["joint 'j2'", "axis must be non-zero"]),
    "axis_two_numbers": (_replace('<child link="b"/><axis xyz="0 0 1"/>', '<child link="b"/><axis xyz="0 1"/>'),
                         ["joint 'j2'/axis", "3 finite numbers"]),
    "origin_inf": (_replace('<child link="b"/>', '<child link="b"/><origin xyz="inf 0 0"/>'),
                   ["joint 'j2'/origin", "'xyz' must be 3 finite numbers"]),
    "mass_nan": (_replace(link("a"), link("a", mass="nan")), ["link 'a'/inertial/mass", "must be finite"]),
    "mass_text": (_replace(link("a"), link("a", mass="heavy")), ["link 'a'/inertial/mass", "not a number: 'heavy'"]),
    "mass_without_value": (_replace(link("a"), link("a", body="<inertial><mass/></inertial>")),
                           ["link 'a'/inertial/mass", "missing attribute 'value'"]),
    "mass_negative": (_replace(link("a"), link("a", mass="-2")), ["link 'a'", "mass must be finite and >= 0 (got -2)"]),
    "inertia_inf": (_replace(link("a"), link("a", inertia="inf")), ["link 'a'", "must be finite"]),
    "inertia_not_pd": (_replace(link("a"), link("a", inertia="-0.1")), ["link 'a'", "not positive definite"]),
    "triangle": (
        _replace(link("a"), link("a", body='<inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="5"/></inertial>')),
        ["link 'a'", "triangle inequality", "eigenvalues 1, 1, 5"],
    ),
    "massless_moving_link": (_replace(link("b"), link("b", body="")), ["joint 'j2'", "massless"]),
    "children_first": (
        robot_xml(link("base"), link("a"), link("b"), joint("j2", "a", "b"), joint("j1", "base", "a")),
        ["joint 'j2' is declared before joint 'j1'", "parent-first"],
    ),
    "not_xml": ("<robot><link name='a'>", ["not valid XML"]),
    "not_utf8": (b'<robot name="r"><link name="\xff"/></robot>', ["not valid XML"]),
    "wrong_top_element": ("<sdf><model/></sdf>", ["top element is 'sdf'", "expected 'robot'"]),
    "no_links": ("<robot/>", ["no <link> elements"]),
}


@pytest.mark.parametrize("case", sorted(URDF_CASES))
def test_bad_urdf(tmp_path, case):
    text, fragments = URDF_CASES[case]
    message = _load_error(tmp_path, text)
    for fragment in fragments:
        assert fragment in message, (fragment, message)


def test_bad_urdf_base_is_good():
    """The cases above are one defect away from this robot, which loads (three bodies, two joints)."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "good.urdf"
        path.write_text(robot_xml(*GOOD))
        robot = load_robot(path)
    assert robot.joint_names == ("j1", "j2") and float(robot.total_mass) == 3.0


def test_robot_paths(tmp_path):
    with pytest.raises(ConfigError, match=r"is a directory, expected a robot file"):
        load_robot(tmp_path)
    (tmp_path / "arm.urdf").mkdir()
    with pytest.raises(ConfigError, match=r"arm.urdf: is a directory"):
        load_robot(tmp_path / "arm.urdf")
    with pytest.raises(MissingFileError, match="robot file not found") as err:
        load_robot(tmp_path / "nothing.urdf")
    assert isinstance(err.value, FileNotFoundError)  # callers catching FileNotFoundError still work
    (tmp_path / "arm.sdf").write_text("<sdf/>")
    with pytest.raises(ConfigError, match=r"arm.sdf: robot files must end in .urdf or .toml"):
        load_robot(tmp_path / "arm.sdf")
    with pytest.raises(ConfigError, match=r"cannot access the robot file \(File name too long\)"):
        load_robot("x" * 5000 + ".urdf")


# ----------------------------------------------------------------------------- native TOML robots
TOML_BASE = """[base]
name = "hub"
mass = 10.0
com = [0.0, 0.0, 0.0]
inertia = [1.0, 1.0, 1.0, 0.0, 0.0, 0.0]
"""


def toml_joint(name: str, parent: str, child: str, mass="1.0", kind="revolute") -> str:
    return (
        f'\n[[joints]]\nname = "{name}"\ntype = "{kind}"\nparent = "{parent}"\nchild = "{child}"\n'
        f"axis = [0.0, 0.0, 1.0]\nlink = {{ mass = {mass}, com = [0, 0, 0], inertia = [0.1, 0.1, 0.1, 0, 0, 0] }}\n"
    )


TOML_CASES = {
    "child_is_root": (TOML_BASE + toml_joint("j1", "hub", "a") + toml_joint("j2", "a", "hub"),
                      ["joints[1].child", "'hub': it is the root link", "closed kinematic loop"]),
    "two_parents": (TOML_BASE + toml_joint("j1", "hub", "a") + toml_joint("j2", "hub", "b")
                    + toml_joint("j3", "b", "a"),
                    ["joints[2].child", "'a': it is already the child of joint 'j1' (joints[0])"]),
    "cycle_forward_parent": (TOML_BASE + toml_joint("j1", "b", "a") + toml_joint("j2", "a", "b"),
                             ["joints[0].parent", "unknown link 'b'", "declared before"]),
    "duplicate_joint": (TOML_BASE + toml_joint("j1", "hub", "a") + toml_joint("j1", "a", "b"),
                        ["joints[1].name", "duplicate joint name 'j1' (also joints[0])"]),
    "huge_integer_mass": (TOML_BASE + toml_joint("j1", "hub", "a", mass="9" * 400),
                          ["joints[0].link.mass", "number out of range"]),
    "too_many_digits": (TOML_BASE + toml_joint("j1", "hub", "a", mass="9" * 5000),
                        ["invalid TOML (a number literal is too long)"]),
    "massless_moving": (TOML_BASE + toml_joint("j1", "hub", "a", mass="0.0"), ["joint 'j1'", "massless"]),
    "not_utf8": (TOML_BASE.encode() + b'\nname = "\xe9"\n', ["not UTF-8 text (byte 0xe9"]),
}


@pytest.mark.parametrize("case", sorted(TOML_CASES))
def test_bad_robot_toml(tmp_path, case):
    text, fragments = TOML_CASES[case]
    message = _load_error(tmp_path, text, "bad.toml")
    for fragment in fragments:
        assert fragment in message, (fragment, message)


def test_robot_toml_with_byte_order_mark(tmp_path):
    path = tmp_path / "bom.toml"
    path.write_bytes(b"\xef\xbb\xbf" + (TOML_BASE + toml_joint("j1", "hub", "a")).encode())
    assert load_robot(path).joint_names == ("j1",)


# ----------------------------------------------------------------------------- size and message bounds
def chain_urdf(n_links: int, fixed_every: int = 0) -> str:
    """A serial chain of unit-mass links 0.1 m apart; every ``fixed_every``-th joint fixed (0: none)."""
    links = [link(f"l{i}", inertia="0.01") for i in range(n_links)]
    joints = [
        joint(f"j{i}", f"l{i - 1}", f"l{i}", "fixed" if fixed_every and i % fixed_every == 0 else "revolute",
              '<origin xyz="0 0 0.1"/>')
        for i in range(1, n_links)
    ]
    return robot_xml(*links, *joints)


def test_two_thousand_link_chain_loads(tmp_path):
    """Correctness, not speed (speed: experiments/robot_loading_bench.py): mass, joints, placements, merging."""
    path = tmp_path / "chain.urdf"
    path.write_text(chain_urdf(2000, fixed_every=4))
    robot = load_robot(path)
    assert robot.n_joints == 2000 - 1 - 499 and len(robot.frame_names) == 2000
    assert float(robot.total_mass) == pytest.approx(2000.0, rel=1e-14)
    # a body that absorbed one fixed child: 2 kg at 0.05 m, inertia 2 (0.01) + 2 (1 kg)(0.05 m)^2 about x
    k = robot.body_names.index("l3")
    assert robot.parents[k] == k - 1 and robot.body_names[k + 1] == "l5"
    np.testing.assert_allclose(np.asarray(robot.com[k]), [0.0, 0.0, 0.05], atol=1e-15)
    np.testing.assert_allclose(np.asarray(robot.inertia[k]), np.diag([0.025, 0.025, 0.02]), atol=1e-15)
    np.testing.assert_allclose(np.asarray(robot.placement_pos[k + 1]), [0.0, 0.0, 0.2], atol=1e-15)
    tip = robot.frame_names.index("l1999")
    height = np.sum(np.asarray(robot.placement_pos)[:, 2]) + float(robot.frame_pos[tip][2])
    assert height == pytest.approx(199.9, rel=1e-12)


def test_body_limit_refused_before_building(tmp_path):
    path = tmp_path / "big.urdf"
    path.write_text(chain_urdf(MAX_BODIES + 1))
    message = _load_error(tmp_path, path.read_text(), "big.urdf")
    assert f"{MAX_BODIES + 1} bodies" in message and f"limit of {MAX_BODIES}" in message


def test_messages_are_capped(tmp_path):
    """50,000 offenders or a megabyte attribute: the message shows the first few, then how many more."""
    stray = robot_xml(link("base"), *[f'<link name="stray{i}"/>' for i in range(50_000)])
    message = _load_error(tmp_path, stray)
    assert "50001 root links ('base', 'stray0', 'stray1', 'stray2', 'stray3' and 49996 more)" in message
    loops = robot_xml(link("base"), *[link(f"c{i}") for i in range(1000)],
                      *[joint(f"j{i}{s}", "base", f"c{i}") for i in range(1000) for s in "ab"])
    message = _load_error(tmp_path, loops)
    assert "link 'c0' is the child of joints 'j0a', 'j0b'; " in message and "and 997 more" in message
    message = _load_error(tmp_path, _replace('<axis xyz="0 0 1"/></joint></robot>',
                                             f'<axis xyz="{"1 " * 500_000}"/></joint></robot>'))
    assert "(1000002 characters)" in message
    bad = robot_xml(*[link(f"l{i}", mass="-1") for i in range(3000)],
                    *[joint(f"j{i}", f"l{i - 1}", f"l{i}") for i in range(1, 3000)])
    message = _load_error(tmp_path, bad)
    assert "link 'l0', link 'l1', link 'l2', link 'l3', link 'l4' and 2995 more: mass must be" in message


def test_capped_and_shown():
    assert capped([]) == "" and capped("ab") == "a, b"
    assert capped(range(8), 3) == "0, 1, 2 and 5 more"
    assert capped(["x", "y", "z"], 2, "\n") == "x\ny\nand 1 more"
    assert shown("abc") == "'abc'" and shown("abc", bare=True) == "abc"
    assert shown("x" * 100, 10) == "'xxxxxxxxx... (102 characters)"
    assert shown([10**5000]) == "<a number too large to print>"


def test_numpy_rpy_matches_spatial():
    rpy = np.random.default_rng(0).uniform(-math.pi, math.pi, (5, 3))
    expected = np.asarray(jax.vmap(rpy_to_rotation)(jnp.asarray(rpy)))
    np.testing.assert_allclose(rpy_rotations(rpy), expected, rtol=0, atol=1e-15)


def test_lock_stays_differentiable(tmp_path):
    """``lock`` merges through the same vectorised code on JAX arrays: jit + grad in the locked angle vs FD,
    and at zero angle it equals the NumPy load of the same URDF with that joint written as fixed."""
    path = write_random_robot(tmp_path, 3, 4, branched=False)  # with a fixed joint
    robot = load_robot(path)

    @jax.jit
    def merged(angle):
        locked = robot.lock([1], angle[None])
        return jnp.sum(locked.inertia**2) + jnp.sum(locked.com**2) + jnp.sum(locked.placement_pos**2)

    grad = float(jax.grad(merged)(0.7))
    step = 1e-6
    fd = (float(merged(0.7 + step)) - float(merged(0.7 - step))) / (2 * step)
    assert grad == pytest.approx(fd, rel=1e-7) and abs(grad) > 1e-3
    name = robot.joint_names[1]
    text, count = re.subn(f'<joint name="{name}" type="[a-z]+"', f'<joint name="{name}" type="fixed"', path.read_text())
    assert count == 1
    (tmp_path / "fixed.urdf").write_text(text)
    fixed, locked = load_robot(tmp_path / "fixed.urdf"), robot.lock([1], jnp.array([0.0]))
    assert fixed.body_names == locked.body_names and set(fixed.frame_names) == set(locked.frame_names)
    for field in ("mass", "com", "inertia", "placement_rot", "placement_pos", "axis"):
        np.testing.assert_allclose(np.asarray(getattr(locked, field)), np.asarray(getattr(fixed, field)), atol=1e-14)
    for frame in fixed.frame_names:
        a, b = fixed.frame_names.index(frame), locked.frame_names.index(frame)
        assert fixed.frame_bodies[a] == locked.frame_bodies[b]
        np.testing.assert_allclose(np.asarray(locked.frame_pos[b]), np.asarray(fixed.frame_pos[a]), atol=1e-14)
        np.testing.assert_allclose(np.asarray(locked.frame_rot[b]), np.asarray(fixed.frame_rot[a]), atol=1e-14)


# ----------------------------------------------------------------------------- configs and CSV files
SCHEMA = Schema({"run": {"count": Field("int", 1, min=1), "gain": Field("float", 1.0), "data": Field("path")}})


def test_overrides_with_huge_integers():
    with pytest.raises(ConfigError, match=r"^--set run.gain: integer 10000000000000000000000000000000000000000000"):
        apply_overrides({}, ["run.gain=" + "1" + "0" * 60])
    with pytest.raises(ConfigError, match=r"^--set run.gain\[1\]: integer .* out of range"):
        apply_overrides({}, ["run.gain=[1, " + "9" * 30 + "]"])
    with pytest.raises(ConfigError, match=r"^--set run.gain: .*integer literal out of range"):
        apply_overrides({}, ["run.gain=" + "9" * 5000])
    assert apply_overrides({}, ["run.gain=9223372036854775807"]) == {"run": {"gain": 2**63 - 1}}


def test_config_files(tmp_path):
    path = tmp_path / "cfg.toml"
    path.write_text("[run]\ncount = " + "9" * 25 + "\n")
    with pytest.raises(ConfigError, match=r"^run.count: integer 9999999999999999999999999 is out of range"):
        validate(read_toml(path), SCHEMA, tmp_path)
    path.write_bytes(b"[run]\ncount = 2 # \xff\n")
    with pytest.raises(ConfigError, match=r"cfg.toml: the config file is not UTF-8 text \(byte 0xff at offset 18\)"):
        read_toml(path)
    path.write_bytes(b"\xef\xbb\xbf[run]\ncount = 2\n")
    assert read_toml(path) == {"run": {"count": 2}}
    with pytest.raises(ConfigError, match=r"is a directory, expected a config file"):
        read_toml(tmp_path)
    with pytest.raises(ConfigError, match=r"config file not found"):
        read_toml(tmp_path / "nothing.toml")
    with pytest.raises(ConfigError, match=r"^run.data: .* is a directory, expected a file$"):
        validate({"run": {"data": str(tmp_path)}}, SCHEMA, tmp_path)


def test_config_problems_capped(tmp_path):
    cfg = {"run": {f"typo{i}": 1 for i in range(100)}}
    message = str(pytest.raises(ConfigError, validate, cfg, SCHEMA, tmp_path).value)
    lines = message.splitlines()
    assert len(lines) == 21 and lines[0].startswith("run.typo0: unknown key") and lines[-1] == "and 80 more"
    message = str(pytest.raises(ConfigError, validate, {"run": {"gain": "x" * 10**6}}, SCHEMA, tmp_path).value)
    assert len(message) < 200 and "(1000002 characters)" in message


def test_csv_files(tmp_path):
    path = tmp_path / "data.csv"
    path.write_bytes(b"\xef\xbb\xbfv_in,v_out\n1.0,0.5\n2.0,0.9\n")  # Excel's "CSV UTF-8"
    np.testing.assert_allclose(read_csv_columns(path, ["v_in", "v_out"])["v_in"], [1.0, 2.0])
    path.write_bytes(b"v_in,v_out\n1.0,0.5\n2.0,\xb5\n")  # Latin-1 micro sign
    with pytest.raises(ConfigError, match=r"data.csv: the data file is not UTF-8 text \(byte 0xb5 at offset 23\)"):
        read_csv_columns(path, ["v_in", "v_out"])
    path.write_text("v_in,v_out,v_in\n1,2,3\n")
    with pytest.raises(ConfigError, match=r"column\(s\) v_in appear more than once"):
        read_csv_columns(path, ["v_in", "v_out"])
    path.write_text("v_in,v_out\n1,\"" + "x" * 200_000 + "\"\n")
    message = str(pytest.raises(ConfigError, read_csv_columns, path, ["v_in", "v_out"]).value)
    assert "line 2: not valid CSV (field larger than field limit" in message
    path.write_text("v_in,v_out\n" + "a,1\n" * 1000)
    lines = str(pytest.raises(ConfigError, read_csv_columns, path, ["v_in", "v_out"]).value).splitlines()
    assert len(lines) == 21 and lines[-1] == "and 980 more"
    assert lines[0].endswith("row 1, column v_in: not a number: 'a'")
    with pytest.raises(ConfigError, match="is a directory, expected a data file"):
        read_csv_columns(tmp_path, ["v_in"])
