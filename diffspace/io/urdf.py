"""URDF robot loader (root link = floating base; revolute, continuous, prismatic and fixed joints).

Inertial origins with ``rpy`` are honoured: the inertia tensor is rotated into the link frame,
``I = R I' R^T`` with ``R = Rz(yaw) Ry(pitch) Rx(roll)``. Fixed joints are merged into their parent body and
kept as frames (as Pinocchio's parser does). Movable joints keep their declaration order, which must list
parents before children. A ``<limit>`` without ``lower``/``upper`` leaves that side unlimited.

The description must be a tree: every link but the root is the child of exactly one joint, and every link
is reached from the root. A link that is the child of two joints (a closed kinematic loop), a second root,
links on a loop of their own, duplicate names, unknown or unsupported joint types, ``<mimic>`` joints
(constraints, not independent joints), missing ``<parent>``/``<child>``, non-numeric or non-finite numbers,
zero joint axes, inverted limits, non-physical mass properties and moving parts without mass are refused
with one :class:`~diffspace.core.status.ConfigError` line naming the file and the first few offending links or
joints.

``<visual>`` elements do not enter the dynamics: :func:`load_visuals` reads them separately (host-side
metadata for reports, kept outside the ``Robot``'s arrays): boxes, cylinders (along the visual frame's z),
spheres and STL meshes (with ``scale``), each placed by its ``<origin>`` in the link frame. Loading runs in NumPy: per link only attribute reads, then batched rotations and checks and one
conversion to JAX in :func:`~diffspace.core.robot.build_robot`, so time grows linearly with the link count.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..core.robot import LinkTree, Robot, build_robot, check_size, validate_link_tree, validate_mass_properties
from ..core.status import ConfigError, capped, shown
from .files import read_bytes
from .scene import Mesh, box, cylinder, sphere

_KINDS = {"revolute": "revolute", "continuous": "revolute", "prismatic": "prismatic", "fixed": "fixed"}
_INERTIA = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")


@dataclass(frozen=True)
class _Joint:
    name: str
    type: str  # as written: revolute | continuous | prismatic | fixed
    parent: str
    child: str
    element: ET.Element


def rpy_rotations(rpy) -> np.ndarray:
    """Rotation matrices ``Rz(yaw) Ry(pitch) Rx(roll)`` of rows ``[roll, pitch, yaw]``: ``(k, 3) -> (k, 3, 3)``."""
    rpy = np.asarray(rpy, dtype=float).reshape(-1, 3)
    (cr, cp, cy), (sr, sp, sy) = np.cos(rpy).T, np.sin(rpy).T
    rows = [
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ]
    return np.moveaxis(np.array(rows), -1, 0)


def _number(element, attr: str, default: str | None, where: str, allow_inf: bool = False) -> float:
    text = element.get(attr, default)
    if text is None:
        raise ConfigError(f"{where}: missing attribute '{attr}'")
    try:
        value = float(text)
    except ValueError:
        raise ConfigError(f"{where}: attribute '{attr}' is not a number: {shown(text)}") from None
    if math.isnan(value) or (math.isinf(value) and not allow_inf):
        raise ConfigError(f"{where}: attribute '{attr}' must be finite, got {shown(text)}")
    return value


def _triple(element, attr: str, default: str, where: str) -> list[float]:
    text = element.get(attr, default) if element is not None else default
    try:
        values = [float(x) for x in text.split()]
    except ValueError:
        raise ConfigError(f"{where}: attribute '{attr}' is not numeric: {shown(text)}") from None
    if len(values) != 3 or not all(map(math.isfinite, values)):
        raise ConfigError(f"{where}: attribute '{attr}' must be 3 finite numbers, got {shown(text)}")
    return values


def _origin(element, where: str) -> tuple[list[float], list[float]]:
    origin = element.find("origin") if element is not None else None
    return _triple(origin, "xyz", "0 0 0", where + "/origin"), _triple(origin, "rpy", "0 0 0", where + "/origin")


def _parse(path: Path) -> ET.Element:
    try:
        root = ET.fromstring(read_bytes(path, "robot file"))
    except ET.ParseError as err:
        raise ConfigError(f"{path}: not valid XML ({err})") from None
    if root.tag != "robot":
        raise ConfigError(f"{path}: the top element is {shown(root.tag)}, expected 'robot'")
    return root


def _links(root: ET.Element, path: Path) -> dict[str, ET.Element]:
    links: dict[str, ET.Element] = {}
    duplicates = []
    for k, link in enumerate(root.findall("link")):
        name = link.get("name")
        if not name:
            raise ConfigError(f"{path}: <link> number {k + 1} has no name attribute")
        if name in links:
            duplicates.append(shown(name))
        links[name] = link
    if duplicates:
        raise ConfigError(f"{path}: duplicate link names: {capped(duplicates)}")
    if not links:
        raise ConfigError(f"{path}: no <link> elements")
    return links


def _link_ref(joint: ET.Element, tag: str, where: str, links: dict) -> str:
    element = joint.find(tag)
    if element is None:
        raise ConfigError(f"{where}: missing <{tag}> element")
    name = element.get("link")
    if not name:
        raise ConfigError(f"{where}: <{tag}> has no link attribute")
    if name not in links:
        raise ConfigError(f"{where}: unknown {tag} link {shown(name)}")
    return name


def _joints(root: ET.Element, path: Path, links: dict) -> list[_Joint]:
    joints, names = [], set()
    for k, element in enumerate(root.findall("joint")):
        name = element.get("name")
        if not name:
            raise ConfigError(f"{path}: <joint> number {k + 1} has no name attribute")
        where = f"{path}: joint {shown(name)}"
        if name in names:
            raise ConfigError(f"{where}: duplicate joint name")
        names.add(name)
        type_ = element.get("type")
        if type_ not in _KINDS:
            raise ConfigError(f"{where}: unsupported joint type {shown(type_)} (supported: {', '.join(_KINDS)})")
        if element.find("mimic") is not None:
            raise ConfigError(f"{where}: <mimic> joints are not supported (a mimic joint is a constraint)")
        parent, child = _link_ref(element, "parent", where, links), _link_ref(element, "child", where, links)
        if parent == child:
            raise ConfigError(f"{where}: parent and child are the same link {shown(parent)}")
        joints.append(_Joint(name, type_, parent, child, element))
    return joints


def _root_of_tree(path: Path, links: dict, joints: list[_Joint]) -> str:
    """The root link, after checking that the joints form one tree (no loop, one root, all links reached)."""
    parent_joints = defaultdict(list)
    for joint in joints:
        parent_joints[joint.child].append(joint.name)
    loops = [
        f"link {shown(child)} is the child of joints {capped(map(shown, names))}"
        for child, names in parent_joints.items()
        if len(names) > 1
    ]
    if loops:
        raise ConfigError(f"{path}: {capped(loops, 3, '; ')} (a closed kinematic loop is not a tree)")
    roots = [name for name in links if name not in parent_joints]
    if not roots:
        raise ConfigError(f"{path}: no root link: every link is the child of a joint (a closed kinematic loop)")
    if len(roots) > 1:
        raise ConfigError(
            f"{path}: {len(roots)} root links ({capped(map(shown, roots))}); every link but the floating base "
            "must be the child of a joint"
        )
    children = defaultdict(list)
    for joint in joints:
        children[joint.parent].append(joint.child)
    reached, stack = {roots[0]}, [roots[0]]
    while stack:
        for child in children[stack.pop()]:
            if child not in reached:
                reached.add(child)
                stack.append(child)
    lost = [shown(name) for name in links if name not in reached]
    if lost:
        raise ConfigError(
            f"{path}: links {capped(lost)} are not connected to the root link {shown(roots[0])}: their joints "
            "form a closed kinematic loop"
        )
    return roots[0]


def _parent_indices(path: Path, root: str, joints: list[_Joint]) -> list[int]:
    """Index of every joint's parent link in the link order (root, then children in joint order)."""
    index, attached_by = {root: 0}, {joint.child: joint.name for joint in joints}
    parents = [-1]
    for joint in joints:
        if joint.parent not in index:
            raise ConfigError(
                f"{path}: joint {shown(joint.name)} is declared before joint {shown(attached_by[joint.parent])}, "
                f"which attaches its parent link {shown(joint.parent)}; declare joints parent-first"
            )
        parents.append(index[joint.parent])
        index[joint.child] = len(index)
    return parents


def _inertial(link: ET.Element, where: str):
    """``(mass, com xyz, inertial rpy, [ixx, ixy, ixz, iyy, iyz, izz])`` of one link (zeros without <inertial>)."""
    inertial = link.find("inertial")
    if inertial is None:
        return 0.0, [0.0] * 3, [0.0] * 3, [0.0] * 6
    xyz, rpy = _origin(inertial, where + "/inertial")
    mass_element = inertial.find("mass")
    mass = 0.0 if mass_element is None else _number(mass_element, "value", None, where + "/inertial/mass")
    element = inertial.find("inertia")
    values = [0.0 if element is None else _number(element, n, "0", where + "/inertial/inertia") for n in _INERTIA]
    return mass, xyz, rpy, values


def _mass_properties(path: Path, links: dict, order: list[str]):
    """Mass ``(n,)``, CoM ``(n, 3)`` and CoM inertia in link axes ``(n, 3, 3)``, validated in one pass."""
    rows = [_inertial(links[name], f"{path}: link {shown(name)}") for name in order]
    mass = np.array([row[0] for row in rows], dtype=float)
    com = np.array([row[1] for row in rows], dtype=float).reshape(-1, 3)
    ixx, ixy, ixz, iyy, iyz, izz = np.array([row[3] for row in rows], dtype=float).reshape(-1, 6).T
    tensor = np.stack([ixx, ixy, ixz, ixy, iyy, iyz, ixz, iyz, izz], axis=1).reshape(-1, 3, 3)
    rot = rpy_rotations([row[2] for row in rows])
    inertia = rot @ tensor @ np.swapaxes(rot, 1, 2)
    validate_mass_properties(mass, inertia, str(path), lambda k: f"link {shown(order[k])}")
    return mass, com, inertia


def _limits(joint: _Joint, where: str) -> tuple[float, float]:
    limit = joint.element.find("limit")
    if limit is None or joint.type not in ("revolute", "prismatic"):
        return -math.inf, math.inf
    lower = _number(limit, "lower", "-inf", where + "/limit", allow_inf=True)
    upper = _number(limit, "upper", "inf", where + "/limit", allow_inf=True)
    if lower > upper:
        raise ConfigError(f"{where}/limit: lower limit {lower:g} is above the upper limit {upper:g}")
    return lower, upper


def _joint_frames(path: Path, joints: list[_Joint]):
    """Joint placements ``(m, 3, 3), (m, 3)``, unit axes ``(m, 3)`` and limits ``(m,), (m,)``."""
    xyz, rpy, axes, limits = [], [], [], []
    for joint in joints:
        where = f"{path}: joint {shown(joint.name)}"
        origin = _origin(joint.element, where)
        xyz.append(origin[0]), rpy.append(origin[1])
        axes.append(_triple(joint.element.find("axis"), "xyz", "1 0 0", where + "/axis"))
        limits.append(_limits(joint, where))
    axes = np.array(axes, dtype=float).reshape(-1, 3)
    norms = np.linalg.norm(axes, axis=1)
    movable = np.array([joint.type != "fixed" for joint in joints], dtype=bool)
    zero = [shown(joint.name) for joint, bad in zip(joints, movable & (norms == 0)) if bad]
    if zero:
        raise ConfigError(f"{path}: joint {capped(zero)}: the axis must be non-zero")
    lower, upper = np.array(limits, dtype=float).reshape(-1, 2).T
    units = axes / np.where(norms > 0, norms, 1.0)[:, None]
    return rpy_rotations(rpy), np.array(xyz, dtype=float).reshape(-1, 3), units, lower, upper


def load_urdf(path: str | Path) -> Robot:
    """Parse a URDF file into a :class:`~diffspace.core.robot.Robot` (see the module docstring for what is refused)."""
    path = Path(path)
    root = _parse(path)
    links = _links(root, path)
    joints = _joints(root, path, links)
    check_size(1 + sum(joint.type != "fixed" for joint in joints), len(links), str(path))
    root_link = _root_of_tree(path, links, joints)
    parents = _parent_indices(path, root_link, joints)
    order = [root_link] + [joint.child for joint in joints]
    mass, com, inertia = _mass_properties(path, links, order)
    rot, pos, axis, lower, upper = _joint_frames(path, joints)
    tree = LinkTree(
        link_names=order,
        joint_names=[""] + [joint.name for joint in joints],
        parents=parents,
        kinds=["fixed"] + [_KINDS[joint.type] for joint in joints],
        rot=np.concatenate([np.eye(3)[None], rot]),
        pos=np.concatenate([np.zeros((1, 3)), pos]),
        axis=np.concatenate([[[0.0, 0.0, 1.0]], axis]),
        mass=mass,
        com=com,
        inertia=inertia,
        lower=np.concatenate([[0.0], lower]),
        upper=np.concatenate([[0.0], upper]),
    )
    validate_link_tree(tree, str(path))
    return build_robot(tree)


def _mesh_file(filename: str, base: Path) -> Path:
    """A ``<mesh filename>``: relative to the URDF's folder; ``package://pkg/rest`` looks for ``rest`` in that
    folder and its parents; ``file://`` is a plain path."""
    if filename.startswith("file://"):
        return Path(filename[len("file://"):])
    if filename.startswith("package://"):
        rest = Path(*Path(filename[len("package://"):]).parts[1:])
        for folder in (base, *base.parents):
            if (folder / rest).is_file():
                return folder / rest
        return base / rest
    return base / filename


def _visual_geometry(visual: ET.Element, where: str, base: Path) -> Mesh:
    from .stl import decimated, read_stl

    geometry = visual.find("geometry")
    shape = None if geometry is None else next(iter(geometry), None)
    if shape is None:
        raise ConfigError(f"{where}: <visual> without geometry")
    if shape.tag == "box":
        return box(_triple(shape, "size", "", where + "/box"))
    if shape.tag == "cylinder":
        radius, length = _number(shape, "radius", None, where), _number(shape, "length", None, where)
        return cylinder((0.0, 0.0, -length / 2), (0.0, 0.0, length / 2), radius)
    if shape.tag == "sphere":
        return sphere(_number(shape, "radius", None, where))
    if shape.tag == "mesh":
        filename = shape.get("filename", "")
        if not filename.lower().endswith(".stl"):
            raise ConfigError(f"{where}: mesh {shown(filename)}: only STL meshes are drawn")
        mesh = decimated(read_stl(_mesh_file(filename, base)))
        scale = _triple(shape, "scale", "1 1 1", where + "/mesh")
        return Mesh(mesh.vertices * np.asarray(scale), mesh.faces)
    raise ConfigError(f"{where}: unknown visual geometry {shown(shape.tag)}")


def load_visuals(path: str | Path) -> tuple[dict[str, Mesh], list[str]]:
    """Visual geometry per link (link name -> one mesh in the link frame) and one line per visual that could
    not be drawn (unknown geometry, a missing or non-STL mesh file): those links keep their primitives."""
    path = Path(path)
    root = _parse(path)
    visuals, problems = {}, []
    for name, link in _links(root, path).items():
        parts = []
        for visual in link.findall("visual"):
            where = f"{path}: link {shown(name)}/visual"
            try:
                xyz, rpy = _origin(visual, where)
                parts.append(_visual_geometry(visual, where, path.parent).placed(rpy_rotations(rpy)[0], xyz))
            except ConfigError as err:
                problems.append(str(err))
        if parts:
            visuals[name] = Mesh.join(*parts)
    return visuals, problems
