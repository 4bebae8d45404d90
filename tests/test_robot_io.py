"""Robot description I/O: native TOML (explicit and DH forms) vs URDF vs Pinocchio, the reference arms,
and validation messages that name the file and the offending key."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from pathlib import Path

import jax.numpy as jnp
import numpy as np
import pytest

import diffspace as ds
from diffspace.io import load_robot
from diffspace.io.robot_toml import load_robot_toml

from .random_robots import random_urdf

ROBOTS = Path(__file__).resolve().parents[1] / "configs" / "robots"
ESD_TOML, ESD_URDF = ROBOTS / "esd_arm7.toml", ROBOTS / "esd_arm7.urdf"
GENERIC_URDF = ROBOTS / "generic_arm7.urdf"


def _random_q(robot, rng, joints=None):
    quat = rng.normal(size=4)
    joints = rng.uniform(-1.5, 1.5, robot.n_joints) if joints is None else np.asarray(joints)
    return jnp.asarray(np.concatenate([rng.normal(size=3), quat / np.linalg.norm(quat), joints]))


def _assert_same_model(a, b, rng, n=2, tol=1e-12):
    """Same topology, mass matrix, bias forces and every frame pose at ``n`` random states."""
    assert a.joint_names == b.joint_names and a.parents == b.parents
    assert set(a.frame_names) == set(b.frame_names)
    for _ in range(n):
        q, v = _random_q(a, rng), jnp.asarray(rng.normal(size=a.nv))
        ha, hb = np.asarray(ds.mass_matrix(a, q)), np.asarray(ds.mass_matrix(b, q))
        np.testing.assert_allclose(ha, hb, rtol=0, atol=tol * max(1.0, np.abs(ha).max()))
        ba, bb = np.asarray(ds.bias_forces(a, q, v)), np.asarray(ds.bias_forces(b, q, v))
        np.testing.assert_allclose(ba, bb, rtol=0, atol=tol * max(1.0, np.abs(ba).max()))
        for name in a.frame_names:
            (ra, pa), (rb, pb) = ds.frame_pose(a, q, name), ds.frame_pose(b, q, name)
            np.testing.assert_allclose(np.asarray(ra), np.asarray(rb), rtol=0, atol=tol)
            np.testing.assert_allclose(np.asarray(pa), np.asarray(pb), rtol=0, atol=tol)


# ----------------------------------------------------------------------------- TOML vs URDF
def _triple(element, attr: str, scale: float = 1.0) -> list[float]:
    text = "0 0 0" if element is None else element.get(attr, "0 0 0")
    return [float(x) * scale for x in text.split()]


def _toml_mass(link) -> list[str]:
    inertial = link.find("inertial")
    origin, inertia = inertial.find("origin"), inertial.find("inertia")
    xyz, rpy = _triple(origin, "xyz"), _triple(origin, "rpy", 180.0 / math.pi)
    values = [float(inertia.get(k)) for k in ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")]
    return [
        f"mass = {float(inertial.find('mass').get('value'))!r}",
        f"com = {xyz!r}",
        f"inertia = {values!r}",
        f"inertia_rpy = {rpy!r}",
    ]


def urdf_to_toml(xml: str) -> str:
    """Explicit-form TOML of a URDF (angles converted to degrees), for round-trip tests."""
    root = ET.fromstring(xml)
    links = {link.get("name"): link for link in root.findall("link")}
    joints = root.findall("joint")
    base = next(n for n in links if n not in {j.find("child").get("link") for j in joints})
    lines = ["[base]", f'name = "{base}"', *_toml_mass(links[base])]
    for j in joints:
        origin, kind = j.find("origin"), j.get("type")
        lines += ["", "[[joints]]", f'name = "{j.get("name")}"', f'type = "{kind}"']
        lines += [f'parent = "{j.find("parent").get("link")}"', f'child = "{j.find("child").get("link")}"']
        lines += [f"xyz = {_triple(origin, 'xyz')!r}", f"rpy = {_triple(origin, 'rpy', 180.0 / math.pi)!r}"]
        if j.find("axis") is not None:
            lines.append(f"axis = {[float(x) for x in j.find('axis').get('xyz').split()]!r}")
        if kind in ("revolute", "prismatic"):
            lim = [float(j.find("limit").get(k)) for k in ("lower", "upper")]
            lines.append(f"limits = {[math.degrees(x) for x in lim] if kind == 'revolute' else lim!r}")
        lines += ["[joints.link]", *_toml_mass(links[j.find("child").get("link")])]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("seed, branched", [(0, False), (1, True)])
def test_random_trees_toml_equals_urdf(tmp_path, seed, branched):
    rng = np.random.default_rng(seed)
    xml = random_urdf(rng, 5, branched=branched, with_fixed=True)
    (tmp_path / "r.urdf").write_text(xml)
    (tmp_path / "r.toml").write_text(urdf_to_toml(xml))
    a, b = load_robot(tmp_path / "r.toml"), load_robot(tmp_path / "r.urdf")
    _assert_same_model(a, b, rng)
    np.testing.assert_allclose(np.asarray(a.lower), np.asarray(b.lower), atol=1e-12)


SMALL_TOML = """
name = "small"
[base]
name = "hub"
mass = 20.0
com = [0.01, -0.02, 0.03]
inertia = [1.0, 1.2, 1.5, 0.01, -0.02, 0.03]

[[joints]]
name = "j1"
type = "revolute"
parent = "hub"
child = "a"
xyz = [0.1, 0.0, 0.2]
rpy = [90.0, 0.0, 30.0]
axis = [0.0, 0.0, 1.0]
limits = [-90.0, 90.0]
link = { mass = 3.0, com = [0, 0, 0.2], inertia = [0.05, 0.04, 0.02, 0, 0, 0], inertia_rpy = [0, 45, 0] }

[[joints]]
name = "j2"
type = "prismatic"
parent = "a"
child = "b"
xyz = [0.0, 0.0, 0.4]
axis = [1.0, 0.0, 0.0]
limits = [-0.1, 0.3]
link = { mass = 2.0, com = [0.05, 0.0, 0.0], inertia = [0.01, 0.02, 0.02, 0.0, 0.0, 0.0] }

[[joints]]
name = "j3"
type = "continuous"
parent = "hub"
child = "c"
xyz = [-0.1, 0.0, 0.0]
rpy = [0.0, -90.0, 0.0]
axis = [0.0, 1.0, 0.0]
link = { mass = 1.5, com = [0.0, 0.1, 0.0], inertia = [0.02, 0.01, 0.02, 0.0, 0.0, 0.0] }

[[joints]]
name = "tool_joint"
type = "fixed"
parent = "b"
child = "tool"
xyz = [0.2, 0.0, 0.0]
rpy = [0.0, 0.0, 180.0]
link = { mass = 0.5, com = [0.02, 0.0, 0.0], inertia = [0.001, 0.002, 0.002, 0.0, 0.0, 0.0] }

[[frames]]
name = "tcp"
parent = "tool"
xyz = [0.05, 0.0, 0.0]
rpy = [0.0, 90.0, 0.0]

[attitudes]
home = [45.0, 0.1, -30.0]
"""

SMALL_URDF = """<robot name="small">
<link name="hub"><inertial><origin xyz="0.01 -0.02 0.03"/><mass value="20"/>
 <inertia ixx="1.0" iyy="1.2" izz="1.5" ixy="0.01" ixz="-0.02" iyz="0.03"/></inertial></link>
<link name="a"><inertial><origin xyz="0 0 0.2" rpy="0 0.78539816339744831 0"/><mass value="3"/>
 <inertia ixx="0.05" iyy="0.04" izz="0.02" ixy="0" ixz="0" iyz="0"/></inertial></link>
<link name="b"><inertial><origin xyz="0.05 0 0"/><mass value="2"/>
 <inertia ixx="0.01" iyy="0.02" izz="0.02" ixy="0" ixz="0" iyz="0"/></inertial></link>
<link name="c"><inertial><origin xyz="0 0.1 0"/><mass value="1.5"/>
 <inertia ixx="0.02" iyy="0.01" izz="0.02" ixy="0" ixz="0" iyz="0"/></inertial></link>
<link name="tool"><inertial><origin xyz="0.02 0 0"/><mass value="0.5"/>
 <inertia ixx="0.001" iyy="0.002" izz="0.002" ixy="0" ixz="0" iyz="0"/></inertial></link>
<link name="tcp"/>
<joint name="j1" type="revolute"><parent link="hub"/><child link="a"/>
 <origin xyz="0.1 0 0.2" rpy="1.5707963267948966 0 0.52359877559829882"/><axis xyz="0 0 1"/>
 <limit lower="-1.5707963267948966" upper="1.5707963267948966" effort="1" velocity="1"/></joint>
<joint name="j2" type="prismatic"><parent link="a"/><child link="b"/>
 <origin xyz="0 0 0.4"/><axis xyz="1 0 0"/><limit lower="-0.1" upper="0.3" effort="1" velocity="1"/></joint>
<joint name="j3" type="continuous"><parent link="hub"/><child link="c"/>
 <origin xyz="-0.1 0 0" rpy="0 -1.5707963267948966 0"/><axis xyz="0 1 0"/></joint>
<joint name="tool_joint" type="fixed"><parent link="b"/><child link="tool"/>
 <origin xyz="0.2 0 0" rpy="0 0 3.1415926535897931"/></joint>
<joint name="tcp_joint" type="fixed"><parent link="tool"/><child link="tcp"/>
 <origin xyz="0.05 0 0" rpy="0 1.5707963267948966 0"/></joint>
</robot>
"""


def test_explicit_toml_equals_handwritten_urdf(tmp_path):
    (tmp_path / "s.toml").write_text(SMALL_TOML)
    (tmp_path / "s.urdf").write_text(SMALL_URDF)
    a, b = load_robot_toml(tmp_path / "s.toml"), load_robot(tmp_path / "s.urdf")
    _assert_same_model(a, b, np.random.default_rng(2), n=3)
    np.testing.assert_allclose(np.asarray(a.lower), [-math.pi / 2, -0.1, -np.inf])
    np.testing.assert_allclose(np.asarray(a.upper), [math.pi / 2, 0.3, np.inf])
    np.testing.assert_allclose(a.attitude("home"), [math.pi / 4, 0.1, -math.pi / 6], rtol=0, atol=1e-15)


# ----------------------------------------------------------------------------- DH form
DH_TOML = """
[base]
name = "base"
mass = 10.0
com = [0.0, 0.0, -0.1]
inertia = [0.5, 0.5, 0.8, 0.0, 0.0, 0.0]

[dh]
convention = "modified"
rows = [[0.0, 0.0, 0.30, {o1}], [0.05, -90.0, 0.0, {o2}], [0.40, 0.0, 0.10, 0.0], [0.0, 90.0, 0.35, 0.0]]
links = [
  {{ mass = 3.0, com = [0.0, 0.0, 0.1], inertia = [0.03, 0.03, 0.01, 0.0, 0.0, 0.0], limits = [-170, 170] }},
  {{ name = "upper", joint = "shoulder", mass = 2.5, com = [0.2, 0, 0], inertia = [0.01, 0.04, 0.04, 0, 0, 0] }},
{{ type = "prismatic", mass = 1.5, com = [0, 0, 0.05], inertia = [0.01, 0.01, 0.005, 0, 0, 0], limits = [-0.1, 0.1] }},
  {{ mass = 1.0, com = [0, 0, 0.05], inertia = [0.004, 0.004, 0.002, 0, 0, 0], inertia_rpy = [10, 0, 0] }},
]

[[joints]]
name = "tool_joint"
type = "fixed"
parent = "link4"
child = "tool"
xyz = [0.0, 0.0, 0.1]
link = {{ mass = 0.3, com = [0.0, 0.0, 0.02], inertia = [0.001, 0.001, 0.0005, 0.0, 0.0, 0.0] }}
"""


def _toml_value(value) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + " }"
    return repr(value)


def _toml_tables(header: str, tables: list[dict]) -> str:
    return "".join(f"\n{header}\n" + "".join(f"{k} = {_toml_value(v)}\n" for k, v in t.items()) for t in tables)


def _link(mass, com, inertia, **extra):
    return {"mass": mass, "com": com, "inertia": inertia, **extra}


# The DH robot written out joint by joint: xyz = [a, -d sin(alpha), d cos(alpha)], rpy = [alpha, 0, 0].
Z = [0.0, 0.0, 1.0]
EXPLICIT_OF_DH = DH_TOML.split("[dh]")[0] + _toml_tables(
    "[[joints]]",
    [
        dict(name="joint1", type="revolute", parent="base", child="link1", xyz=[0.0, 0.0, 0.30], axis=Z,
             limits=[-170, 170], link=_link(3.0, [0.0, 0.0, 0.1], [0.03, 0.03, 0.01, 0.0, 0.0, 0.0])),
        dict(name="shoulder", type="revolute", parent="link1", child="upper", xyz=[0.05, 0.0, 0.0],
             rpy=[-90.0, 0.0, 0.0], axis=Z, link=_link(2.5, [0.2, 0.0, 0.0], [0.01, 0.04, 0.04, 0.0, 0.0, 0.0])),
        dict(name="joint3", type="prismatic", parent="upper", child="link3", xyz=[0.40, 0.0, 0.10], axis=Z,
             limits=[-0.1, 0.1], link=_link(1.5, [0.0, 0.0, 0.05], [0.01, 0.01, 0.005, 0.0, 0.0, 0.0])),
        dict(name="joint4", type="revolute", parent="link3", child="link4", xyz=[0.0, -0.35, 0.0],
             rpy=[90.0, 0.0, 0.0], axis=Z, link=_link(1.0, [0.0, 0.0, 0.05], [0.004, 0.004, 0.002, 0.0, 0.0, 0.0],
                                                    inertia_rpy=[10.0, 0.0, 0.0])),
        dict(name="tool_joint", type="fixed", parent="link4", child="tool", xyz=[0.0, 0.0, 0.1],
             link=_link(0.3, [0.0, 0.0, 0.02], [0.001, 0.001, 0.0005, 0.0, 0.0, 0.0])),
    ],
)


def _dh_matrix(a, alpha, d, theta):
    """Craig's modified DH transform Rot_x(alpha) Trans_x(a) Rot_z(theta) Trans_z(d) as a 4x4 matrix."""
    ca, sa, ct, st = math.cos(alpha), math.sin(alpha), math.cos(theta), math.sin(theta)
    return np.array(
        [[ct, -st, 0.0, a], [st * ca, ct * ca, -sa, -sa * d], [st * sa, ct * sa, ca, ca * d], [0.0, 0.0, 0.0, 1.0]]
    )


def test_dh_form(tmp_path):
    rng = np.random.default_rng(3)
    (tmp_path / "dh.toml").write_text(DH_TOML.format(o1=0.0, o2=0.0))
    (tmp_path / "ex.toml").write_text(EXPLICIT_OF_DH)
    dh, explicit = load_robot(tmp_path / "dh.toml"), load_robot(tmp_path / "ex.toml")
    assert dh.joint_names == ("joint1", "shoulder", "joint3", "joint4")
    _assert_same_model(dh, explicit, rng)
    # frame poses follow the documented transform product (base at the origin)
    rows = [(0.0, 0.0, 0.30), (0.05, -math.pi / 2, 0.0), (0.40, 0.0, 0.10), (0.0, math.pi / 2, 0.35)]
    qj = rng.uniform(-1.0, 1.0, 4) * [1.0, 1.0, 0.1, 1.0]
    q = jnp.concatenate([jnp.zeros(3), jnp.array([0.0, 0.0, 0.0, 1.0]), jnp.asarray(qj)])
    t = np.eye(4)
    for i, ((a, alpha, d), name) in enumerate(zip(rows, ["link1", "upper", "link3", "link4"])):
        theta, dd = (0.0, d + qj[i]) if i == 2 else (qj[i], d)
        t = t @ _dh_matrix(a, alpha, dd, theta)
        rot, pos = ds.frame_pose(dh, q, name)
        np.testing.assert_allclose(np.asarray(rot), t[:3, :3], atol=1e-12)
        np.testing.assert_allclose(np.asarray(pos), t[:3, 3], atol=1e-12)
    # theta offsets shift the joint zero: offset model at q equals the plain model at q + offset
    (tmp_path / "off.toml").write_text(DH_TOML.format(o1=25.0, o2=-40.0))
    shifted = load_robot(tmp_path / "off.toml")
    q_off = q.at[7:9].add(jnp.radians(jnp.array([25.0, -40.0])))
    np.testing.assert_allclose(
        np.asarray(ds.mass_matrix(shifted, q)), np.asarray(ds.mass_matrix(dh, q_off)), rtol=0, atol=1e-12
    )


# ----------------------------------------------------------------------------- reference arms
def _esd_equivalent_mass(robot, angles):
    """Rail equivalent mass: joints 1, 3, 5, 7 locked, Schur complement over [base z, joints 2, 4, 6]."""
    angles = np.asarray(angles)
    reduced = robot.lock([0, 2, 4, 6], angles[[0, 2, 4, 6]])
    q = jnp.concatenate([jnp.zeros(3), jnp.array([0.0, 0.0, 0.0, 1.0]), jnp.asarray(angles[[1, 3, 5]])])
    h = np.asarray(ds.mass_matrix(reduced, q))[np.ix_([2, 6, 7, 8], [2, 6, 7, 8])]
    return h[0, 0] - h[0, 1:] @ np.linalg.solve(h[1:, 1:], h[1:, 0])


def test_esd_arm_toml_equals_urdf():
    a, b = load_robot(ESD_TOML), load_robot(ESD_URDF)
    rng = np.random.default_rng(4)
    _assert_same_model(a, b, rng, n=2)
    for _, angles in a.attitudes:
        q = _random_q(a, rng, angles)
        ha, hb = np.asarray(ds.mass_matrix(a, q)), np.asarray(ds.mass_matrix(b, q))
        np.testing.assert_allclose(ha, hb, rtol=0, atol=1e-12)
    assert "capture_rod" in a.frame_names and "capture_rod" in b.frame_names
    np.testing.assert_allclose(np.asarray(a.lower), np.asarray(b.lower), atol=1e-12)


def test_esd_arm_design():
    robot = load_robot(ESD_TOML)
    assert robot.n_joints == 7 and set(robot.joint_kinds[1:]) == {"revolute"}
    assert float(robot.total_mass) == pytest.approx(116.1, abs=1e-12)
    assert [name for name, _ in robot.attitudes] == [f"attitude_{k}" for k in range(1, 6)]
    assert np.all(np.asarray(robot.attitude("attitude_5")) == 0.0)
    ey = np.array([0.0, 1.0, 0.0])
    for name, angles in robot.attitudes:
        q = jnp.concatenate([jnp.zeros(3), jnp.array([0.0, 0.0, 0.0, 1.0]), jnp.asarray(angles)])
        rots, _ = ds.body_placements(robot, q)
        axes = [np.asarray(rots[i] @ robot.axis[i]) for i in range(1, 8)]
        for k, axis in enumerate(axes):  # joints 2, 4, 6 normal to the base x-z plane; 1, 3, 5, 7 in it
            if k % 2:
                assert abs(abs(axis @ ey) - 1.0) < 1e-12, (name, k + 1)
            else:
                assert abs(axis @ ey) < 1e-12, (name, k + 1)
    m_eq = {name: _esd_equivalent_mass(robot, angles) for name, angles in robot.attitudes}
    assert m_eq["attitude_5"] == pytest.approx(116.1, rel=1e-3)  # straight: ~ one rigid body
    values = sorted(m_eq.values())
    assert values[0] > 50.0 and min(np.diff(values)) > 5.0  # clearly different equivalent masses
    assert min(m_eq, key=m_eq.get) == "attitude_2"


def test_generic_arm_frames():
    robot = load_robot(GENERIC_URDF)
    assert robot.n_joints == 7 and "ee" in robot.frame_names
    _, pos = ds.frame_pose(robot, robot.neutral(), "ee")
    np.testing.assert_allclose(np.asarray(pos), [0.0, 0.0, 1.426], atol=1e-12)


@pytest.mark.parametrize("path, frame", [(GENERIC_URDF, "ee"), (ESD_URDF, "rod_tip")])
def test_fixed_joint_urdf_matches_pinocchio(path, frame):
    pin = pytest.importorskip("pinocchio")
    model = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    model.gravity.linear[:] = 0.0
    data = model.createData()
    robot = load_robot(path)
    assert model.nq == robot.nq and model.nv == robot.nv
    rng = np.random.default_rng(5)
    for _ in range(2):
        q, v, tau = _random_q(robot, rng), rng.normal(size=robot.nv), rng.normal(size=robot.nv)
        qn = np.asarray(q)
        h_pin = pin.crba(model, data, qn)
        h_pin = np.triu(h_pin) + np.triu(h_pin, 1).T
        h = np.asarray(ds.mass_matrix(robot, q))
        np.testing.assert_allclose(h, h_pin, rtol=0, atol=1e-10 * np.abs(h_pin).max())
        nle = pin.nonLinearEffects(model, data, qn, v)
        bias = np.asarray(ds.bias_forces(robot, q, jnp.asarray(v)))
        np.testing.assert_allclose(bias, nle, rtol=0, atol=1e-10 * max(1, np.abs(nle).max()))
        acc = pin.aba(model, data, qn, v, tau)
        accel = np.asarray(ds.forward_dynamics(robot, q, jnp.asarray(v), jnp.asarray(tau)))
        np.testing.assert_allclose(accel, acc, rtol=1e-9, atol=1e-9)
        pin.framesForwardKinematics(model, data, qn)
        placement = data.oMf[model.getFrameId(frame)]
        rot, pos = ds.frame_pose(robot, q, frame)
        np.testing.assert_allclose(np.asarray(rot), placement.rotation, atol=1e-12)
        np.testing.assert_allclose(np.asarray(pos), placement.translation, atol=1e-12)


# ----------------------------------------------------------------------------- validation
BAD_CASES = [
    # (old text in SMALL_TOML, replacement, key the message must name)
    ('name = "small"', 'name = "small"\ncolour = "red"', "colour"),
    ('name = "j2"', 'name = "j2"\nfriction = 1.0', "joints[1].friction"),
    ("xyz = [0.0, 0.0, 0.4]", 'xyz = "0 0 0.4"', "joints[1].xyz"),
    ("xyz = [0.0, 0.0, 0.4]", "xyz = [0.0, 0.4]", "joints[1].xyz"),
    ("link = { mass = 2.0,", "link = { mass = -2.0,", "joints[1].link.mass"),
    ("link = { mass = 2.0,", 'link = { mass = "2",', "joints[1].link.mass"),
    ("mass = 20.0", "mass = nan", "base.mass"),
    ("inertia = [1.0, 1.2, 1.5, 0.01, -0.02, 0.03]", "inertia = [1.0, 1.2, -1.5, 0.0, 0.0, 0.0]", "base.inertia"),
    ("inertia = [0.01, 0.02, 0.02,", "inertia = [0.01, 0.02, 0.05,", "joints[1].link.inertia"),
    ("home = [45.0, 0.1, -30.0]", "home = [45.0, 0.1]", "attitudes.home"),
    ("home = [45.0, 0.1, -30.0]", "home = [95.0, 0.1, -30.0]", "attitudes.home[0]"),
    ('parent = "a"', 'parent = "nowhere"', "joints[1].parent"),
    ('parent = "a"', 'parent = "b"', "joints[1].parent"),
    ('type = "prismatic"', 'type = "ball"', "joints[1].type"),
    ("axis = [1.0, 0.0, 0.0]", "axis = [0.0, 0.0, 0.0]", "joints[1].axis"),
    ("axis = [1.0, 0.0, 0.0]\n", "", "joints[1].axis"),
    ("limits = [-0.1, 0.3]", "limits = [0.3, -0.1]", "joints[1].limits"),
    ('child = "c"', 'child = "a"', "joints[2].child"),
    ('name = "tcp"', 'name = "tool"', "frames[0].name"),
    ("[base]\nname = \"hub\"", "[base]\nlabel = \"hub\"", "base.label"),
]


@pytest.mark.parametrize("old, new, key", BAD_CASES)
def test_errors_name_file_and_key(tmp_path, old, new, key):
    assert old in SMALL_TOML
    path = tmp_path / "bad.toml"
    path.write_text(SMALL_TOML.replace(old, new, 1))
    with pytest.raises(ValueError) as err:
        load_robot(path)
    message = str(err.value)
    assert message.startswith(f"{path}: {key}:"), message
    assert "\n" not in message


def test_error_cases_outside_small_robot(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text("[base\nname = 1")
    with pytest.raises(ValueError, match="invalid TOML"):
        load_robot(path)
    path.write_text('name = "x"\n')
    with pytest.raises(ValueError, match=r"bad.toml: base: missing required key"):
        load_robot(path)
    path.write_text(DH_TOML.format(o1=0.0, o2=0.0).replace('"modified"', '"standard"'))
    with pytest.raises(ValueError, match=r"bad.toml: dh.convention:"):
        load_robot(path)
    extra_row = DH_TOML.format(o1=0.0, o2=0.0).replace("0.35, 0.0]]", "0.35, 0.0], [0.1, 0, 0, 0]]")
    path.write_text(extra_row)
    with pytest.raises(ValueError, match=r"bad.toml: dh.links:"):
        load_robot(path)


def test_missing_file(tmp_path):
    for name in ("nothing.toml", "nothing.urdf"):
        with pytest.raises(FileNotFoundError):
            load_robot(tmp_path / name)
    with pytest.raises(FileNotFoundError):
        load_robot_toml(tmp_path / "nothing.toml")
