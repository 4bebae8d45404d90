r"""Native TOML robot format.

All lengths are in metres, masses in kg, inertias in kg m^2 and **every angle in degrees** (``rpy``,
``inertia_rpy``, revolute ``limits``, DH ``alpha``/``theta_offset``, attitudes). Prismatic limits and
attitude entries of prismatic joints are in metres. The root link is the floating base.

Explicit form::

    name = "my_arm"                     # optional
    description = "..."                 # optional

    [base]                              # the root link
    name = "base"
    mass = 30.0
    com = [0.0, 0.0, -0.05]             # in the link frame
    inertia = [ixx, iyy, izz, ixy, ixz, iyz]   # about the CoM, link axes
    inertia_rpy = [0.0, 0.0, 0.0]       # optional: principal/inertial axes rotated as URDF's rpy

    [[joints]]                          # declared parent-first; movable joints are numbered in order
    name = "joint1"
    type = "revolute"                   # revolute | continuous | prismatic | fixed
    parent = "base"                     # any link declared before
    child = "link1"                     # a new link name
    xyz = [0.0, 0.0, 0.1]               # joint frame in the parent link frame (URDF <origin>)
    rpy = [0.0, 0.0, 0.0]               # degrees, R = Rz(yaw) Ry(pitch) Rx(roll)
    axis = [0.0, 0.0, 1.0]              # required for movable joints, in the joint frame
    limits = [-170.0, 170.0]            # optional; degrees (revolute) or metres (prismatic)
    link = { mass = 5.0, com = [0, 0, 0.1], inertia = [0.1, 0.1, 0.02, 0, 0, 0] }
                                        # optional for fixed joints (default: massless frame)

    [[frames]]                          # optional massless frames (tool points, sensors)
    name = "tool"
    parent = "link1"
    xyz = [0.0, 0.0, 0.2]
    rpy = [0.0, 0.0, 0.0]

    [attitudes]                         # optional named configurations, one value per movable joint
    straight = [0, 0, 0, 0, 0, 0, 0]

DH form (Craig's *modified* convention): ``[dh]`` replaces (or precedes) ``[[joints]]``; row ``i``
(1-based) holds ``[a_{i-1}, alpha_{i-1}, d_i, theta_offset_i]`` and places link frame ``i`` in frame
``i-1`` (frame 0 = the base) by

.. math::  {}^{i-1}T_i = \mathrm{Rot}_x(\alpha_{i-1})\,\mathrm{Trans}_x(a_{i-1})\,
           \mathrm{Rot}_z(\theta_i)\,\mathrm{Trans}_z(d_i),

with :math:`\theta_i = q_i + \theta_{\mathrm{offset},i}` for revolute joints, or
:math:`d_i \leftarrow d_i + q_i` for prismatic ones; the joint axis is :math:`z_i`. Each row has one
``[[dh.links]]`` entry (``mass``, ``com``, ``inertia``, optional ``inertia_rpy``, ``name`` (default
``link<i>``), ``joint`` (default ``joint<i>``), ``type`` (revolute | prismatic), ``limits``); mass
properties are expressed in DH frame ``i``. Explicit ``[[joints]]`` given with ``[dh]`` are attached after
the DH chain (e.g. a fixed tool link).

Fixed joints are merged into their parent body and kept as frames (as for URDF, through
:func:`~diffspace.core.robot.build_robot`); a description without movable joints (one rigid body, e.g. a
capture target) is allowed. Attitudes are stored in radians (metres for prismatic joints) in
``Robot.attitudes`` and must lie within the joint limits. Every problem raises
``ConfigError("<file>: <dotted.key>: <what is wrong>")``, e.g. ``joints[2].link.mass: must be >= 0``.

The format builds a tree by construction: a joint's parent must be a link declared before it and its
child a new link, so a second parent for a link (a closed kinematic loop), a cycle, a second root or an
unreachable link cannot be written; each attempt is refused naming the joint and the link. Parsing and
validation run in NumPy and the arrays are converted to JAX once (:func:`~diffspace.core.robot.build_robot`).
"""

from __future__ import annotations

import math
import tomllib
from pathlib import Path

import numpy as np

from ..core.robot import LinkTree, Robot, build_robot, check_size, validate_link_tree, validate_mass_properties
from ..core.status import ConfigError, shown
from .files import read_text
from .urdf import rpy_rotations

_TOP = {"name", "description", "base", "joints", "frames", "attitudes", "dh"}
_MASS = {"mass", "com", "inertia", "inertia_rpy"}
_BASE = {"name"} | _MASS
_JOINT = {"name", "type", "parent", "child", "xyz", "rpy", "axis", "limits", "link"}
_FRAME = {"name", "parent", "xyz", "rpy"}
_DH = {"convention", "rows", "links"}
_DH_LINK = {"name", "joint", "type", "limits"} | _MASS
_KINDS = {"revolute": "revolute", "continuous": "revolute", "prismatic": "prismatic", "fixed": "fixed"}


class _Reader:
    """Typed access to the parsed TOML document; every error names the file and the dotted key."""

    def __init__(self, path: Path):
        self.path = path

    def error(self, key: str, message: str) -> ConfigError:
        return ConfigError(f"{self.path}: {key}: {message}")

    def table(self, value, key: str, allowed: set, required: tuple = ()) -> dict:
        if not isinstance(value, dict):
            raise self.error(key, f"must be a table, got {type(value).__name__}")
        for name in value:
            if name not in allowed:
                name = shown(name, bare=True)
                where = f"{key}.{name}" if key else name
                raise self.error(where, f"unknown key (allowed: {', '.join(sorted(allowed))})")
        for name in required:
            if name not in value:
                raise self.error(f"{key}.{name}" if key else name, "missing required key")
        return value

    def string(self, value, key: str) -> str:
        if not isinstance(value, str) or not value:
            raise self.error(key, f"must be a non-empty string, got {shown(value)}")
        return value

    def number(self, value, key: str, allow_inf: bool = False) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.error(key, f"must be a number, got {type(value).__name__} {shown(value)}")
        try:
            value = float(value)
        except OverflowError:
            raise self.error(key, f"number out of range: {shown(value)}") from None
        if math.isnan(value) or (math.isinf(value) and not allow_inf):
            raise self.error(key, f"must be finite, got {value}")
        return value

    def vector(self, value, key: str, n: int, allow_inf: bool = False) -> np.ndarray:
        if not isinstance(value, list) or len(value) != n:
            raise self.error(key, f"must be an array of {n} numbers, got {shown(value)}")
        return np.array([self.number(x, f"{key}[{k}]", allow_inf) for k, x in enumerate(value)])

    def array_of_tables(self, value, key: str) -> list:
        if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
            raise self.error(key, "must be an array of tables ([[...]])")
        return value

    def mass_properties(self, table: dict, key: str):
        """Mass, CoM, CoM inertia (link axes) from ``mass``/``com``/``inertia``/``inertia_rpy`` and the key naming
        the inertia (validated for all links at once by :meth:`_Builder.validate_inertias`)."""
        for name in ("mass", "com", "inertia"):
            if name not in table:
                raise self.error(f"{key}.{name}", "missing required key")
        mass = self.number(table["mass"], f"{key}.mass")
        if mass < 0:
            raise self.error(f"{key}.mass", f"must be >= 0, got {mass}")
        com = self.vector(table["com"], f"{key}.com", 3)
        ixx, iyy, izz, ixy, ixz, iyz = self.vector(table["inertia"], f"{key}.inertia", 6)
        tensor = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
        if "inertia_rpy" in table:
            rot = rpy_rotations(np.deg2rad(self.vector(table["inertia_rpy"], f"{key}.inertia_rpy", 3)))[0]
            tensor = rot @ tensor @ rot.T
        return mass, com, tensor, f"{key}.inertia"

    def limits(self, value, key: str, kind: str):
        """``(lower, upper)`` in SI (rad or m); degrees are converted for revolute joints."""
        lo, hi = self.vector(value, key, 2, allow_inf=True)
        if not lo < hi:
            raise self.error(key, f"lower limit must be below upper limit, got [{lo}, {hi}]")
        scale = math.pi / 180.0 if kind == "revolute" else 1.0
        return lo * scale, hi * scale


class _Builder:
    """Accumulates links in declaration order into a :class:`LinkTree`."""

    def __init__(self, reader: _Reader, base_name: str, base_mass):
        self.r = reader
        self.tree = LinkTree(link_names=[base_name], joint_names=[""], parents=[-1], kinds=["fixed"])
        self.joint_types: list[str] = []  # declared type of each movable joint, in order
        self.inertia_keys: list[str] = []  # key of every link's inertia, for messages
        self.index = {base_name: 0}
        self.joint_keys: dict[str, str] = {}  # joint name -> its key  # link name -> position in the tree
        self.attached_by = {base_name: None}  # link name -> key of the joint whose child it is (None: root)
        self._append(np.eye(3), np.zeros(3), np.array([0.0, 0.0, 1.0]), base_mass, 0.0, 0.0)

    def _append(self, rot, pos, axis, mass_props, lower, upper):
        t = self.tree
        t.rot.append(rot), t.pos.append(pos), t.axis.append(axis)
        mass, com, inertia, label = mass_props
        t.mass.append(mass), t.com.append(com), t.inertia.append(inertia)
        self.inertia_keys.append(label)
        t.lower.append(lower), t.upper.append(upper)

    def link_index(self, name: str, key: str) -> int:
        if name not in self.index:
            raise self.r.error(
                key, f"unknown link {shown(name)} (links must be declared before they are used as parents)"
            )
        return self.index[name]

    def validate_inertias(self) -> None:
        t = self.tree
        validate_mass_properties(np.asarray(t.mass), np.asarray(t.inertia), str(self.r.path), self.inertia_keys)

    def _check_new_child(self, child: str, key: str) -> None:
        """A link has one parent joint: attaching it again would close a kinematic loop."""
        if child in self.attached_by:
            owner = self.attached_by[child]
            held = "is the root link" if owner is None else f"is already the child of {owner}"
            raise self.r.error(
                f"{key}.child", f"duplicate link name {shown(child)}: it {held} (a closed kinematic loop is not a tree)"
            )

    def add(self, key, name, type_, parent, child, rot, pos, axis, mass_props, limits):
        """Add one joint with its child link; ``limits`` is None or the raw ``[lower, upper]`` value."""
        kind = _KINDS.get(type_)
        if kind is None:
            raise self.r.error(f"{key}.type", f"must be one of {', '.join(_KINDS)}, got {shown(type_)}")
        if name in self.joint_keys:
            raise self.r.error(f"{key}.name", f"duplicate joint name {shown(name)} (also {self.joint_keys[name]})")
        self._check_new_child(child, key)
        parent_index = self.link_index(parent, f"{key}.parent")
        if kind != "fixed":
            norm = np.linalg.norm(axis)
            if norm == 0:
                raise self.r.error(f"{key}.axis", "must be non-zero")
            axis = axis / norm
        lower, upper = -math.inf, math.inf
        if limits is not None:
            if type_ in ("continuous", "fixed"):
                raise self.r.error(f"{key}.limits", f"not allowed for a {type_} joint")
            lower, upper = self.r.limits(limits, f"{key}.limits", kind)
        t = self.tree
        t.link_names.append(child), t.joint_names.append(name), t.parents.append(parent_index), t.kinds.append(kind)
        self._append(rot, pos, axis, mass_props, lower, upper)
        self.index[child], self.joint_keys[name] = len(t.link_names) - 1, key
        self.attached_by[child] = f"joint {shown(name)} ({key})"
        if kind != "fixed":
            self.joint_types.append(kind)


def _placement(r: _Reader, table: dict, key: str):
    xyz = r.vector(table.get("xyz", [0.0, 0.0, 0.0]), f"{key}.xyz", 3)
    rpy = r.vector(table.get("rpy", [0.0, 0.0, 0.0]), f"{key}.rpy", 3)
    return rpy_rotations(np.deg2rad(rpy))[0], xyz


def _add_joints(r: _Reader, b: _Builder, joints) -> None:
    for k, raw in enumerate(r.array_of_tables(joints, "joints")):
        key = f"joints[{k}]"
        j = r.table(raw, key, _JOINT, ("name", "type", "parent", "child"))
        name = r.string(j["name"], f"{key}.name")
        type_ = r.string(j["type"], f"{key}.type")
        parent, child = r.string(j["parent"], f"{key}.parent"), r.string(j["child"], f"{key}.child")
        rot, pos = _placement(r, j, key)
        if type_ != "fixed" and "axis" not in j:
            raise r.error(f"{key}.axis", f"missing required key for a {type_} joint")
        axis = r.vector(j.get("axis", [0.0, 0.0, 1.0]), f"{key}.axis", 3)
        if "link" in j:
            link = r.table(j["link"], f"{key}.link", _MASS)
            mass_props = r.mass_properties(link, f"{key}.link")
        elif type_ == "fixed":
            mass_props = (0.0, np.zeros(3), np.zeros((3, 3)), f"{key}.link")
        else:
            raise r.error(f"{key}.link", f"missing required key for a {type_} joint (mass properties of '{child}')")
        b.add(key, name, type_, parent, child, rot, pos, axis, mass_props, j.get("limits"))


def _rot_x(angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def _rot_z(angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def dh_modified_placement(a: float, alpha: float, d: float, theta: float):
    """Placement ``(R, p)`` of frame i in frame i-1 for one modified-DH row (angles in radians).

    ``Rot_x(alpha) Trans_x(a) Rot_z(theta) Trans_z(d)``: ``R = Rx(alpha) Rz(theta)``,
    ``p = [a, -d sin(alpha), d cos(alpha)]``.
    """
    rx = _rot_x(alpha)
    rot = rx @ _rot_z(theta)
    return rot, np.array([a, 0.0, 0.0]) + rx @ np.array([0.0, 0.0, d])


def _add_dh(r: _Reader, b: _Builder, raw) -> None:
    dh = r.table(raw, "dh", _DH, ("convention", "rows", "links"))
    convention = r.string(dh["convention"], "dh.convention")
    if convention != "modified":
        raise r.error("dh.convention", f"only \"modified\" (Craig) is supported, got {shown(convention)}")
    rows = dh["rows"]
    if not isinstance(rows, list) or not rows:
        raise r.error("dh.rows", "must be a non-empty array of [a, alpha_deg, d, theta_offset_deg] rows")
    links = r.array_of_tables(dh["links"], "dh.links")
    if len(links) != len(rows):
        raise r.error("dh.links", f"needs one entry per DH row ({len(rows)}), got {len(links)}")
    parent = b.tree.link_names[0]
    for i, (row, raw_link) in enumerate(zip(rows, links)):
        a, alpha, d, offset = r.vector(row, f"dh.rows[{i}]", 4)
        key = f"dh.links[{i}]"
        link = r.table(raw_link, key, _DH_LINK)
        name = r.string(link.get("name", f"link{i + 1}"), f"{key}.name")
        joint = r.string(link.get("joint", f"joint{i + 1}"), f"{key}.joint")
        type_ = r.string(link.get("type", "revolute"), f"{key}.type")
        if type_ not in ("revolute", "prismatic"):
            raise r.error(f"{key}.type", f"must be revolute or prismatic in a DH table, got {shown(type_)}")
        rot, pos = dh_modified_placement(a, math.radians(alpha), d, math.radians(offset))
        mass_props = r.mass_properties(link, key)
        b.add(key, joint, type_, parent, name, rot, pos, np.array([0.0, 0.0, 1.0]), mass_props, link.get("limits"))
        parent = name


def _add_frames(r: _Reader, b: _Builder, frames) -> None:
    names = set(b.tree.link_names)
    for k, raw in enumerate(r.array_of_tables(frames, "frames")):
        key = f"frames[{k}]"
        f = r.table(raw, key, _FRAME, ("name", "parent"))
        name = r.string(f["name"], f"{key}.name")
        if name in names:
            raise r.error(f"{key}.name", f"duplicate frame/link name '{name}'")
        names.add(name)
        link = b.link_index(r.string(f["parent"], f"{key}.parent"), f"{key}.parent")
        rot, pos = _placement(r, f, key)
        b.tree.frames.append((name, link, rot, pos))


def _attitudes(r: _Reader, b: _Builder, raw) -> tuple:
    if not isinstance(raw, dict):
        raise r.error("attitudes", f"must be a table of name = [values], got {type(raw).__name__}")
    table = raw
    n = len(b.joint_types)
    movable = [k for k in range(1, len(b.tree.kinds)) if b.tree.kinds[k] != "fixed"]
    result = []
    for name, values in table.items():
        key = f"attitudes.{name}"
        if not isinstance(values, list) or len(values) != n:
            got = len(values) if isinstance(values, list) else type(values).__name__
            raise r.error(key, f"needs one value per movable joint ({n}), got {got}")
        angles = []
        for k, (value, kind, link) in enumerate(zip(values, b.joint_types, movable)):
            x = r.number(value, f"{key}[{k}]")
            x = math.radians(x) if kind == "revolute" else x
            lo, hi = b.tree.lower[link], b.tree.upper[link]
            if not lo - 1e-12 <= x <= hi + 1e-12:
                joint = b.tree.joint_names[link]
                raise r.error(f"{key}[{k}]", f"value {value} is outside the limits of joint '{joint}'")
            angles.append(x)
        result.append((name, tuple(angles)))
    return tuple(result)


def _count_bodies(doc: dict) -> tuple[int, int]:
    """Bodies and links a document declares (before any per-link work), for the size limits."""
    joints = doc.get("joints") if isinstance(doc.get("joints"), list) else []
    rows = doc["dh"].get("rows") if isinstance(doc.get("dh"), dict) else []
    rows = rows if isinstance(rows, list) else []
    fixed = sum(isinstance(j, dict) and j.get("type") == "fixed" for j in joints)
    return 1 + len(rows) + len(joints) - fixed, 1 + len(rows) + len(joints)


def load_robot_toml(path: str | Path) -> Robot:
    """Load a robot from the native TOML format (see the module docstring for the schema)."""
    path = Path(path)
    text = read_text(path, "robot file")
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{path}: invalid TOML ({err})") from None
    except ValueError:  # e.g. an integer literal beyond Python's 4300-digit limit
        raise ConfigError(f"{path}: invalid TOML (a number literal is too long)") from None
    r = _Reader(path)
    r.table(doc, "", _TOP, ("base",))
    check_size(*_count_bodies(doc), str(path))
    for key in ("name", "description"):
        if key in doc:
            r.string(doc[key], key)
    base = r.table(doc["base"], "base", _BASE, ("name", "mass", "com", "inertia"))
    b = _Builder(r, r.string(base["name"], "base.name"), r.mass_properties(base, "base"))
    if "dh" in doc:
        _add_dh(r, b, doc["dh"])
    if "joints" in doc:
        _add_joints(r, b, doc["joints"])
    if "frames" in doc:
        _add_frames(r, b, doc["frames"])
    attitudes = _attitudes(r, b, doc["attitudes"]) if "attitudes" in doc else ()
    b.validate_inertias()
    validate_link_tree(b.tree, str(path))
    return build_robot(b.tree, attitudes)


__all__ = ["dh_modified_placement", "load_robot_toml"]
