"""URDF robot loader (root link = floating base; revolute, continuous, prismatic and fixed joints).

Inertial origins with ``rpy`` are honoured: the inertia tensor is rotated into the link frame. Fixed
joints are merged into their parent body and kept as frames (as Pinocchio's parser does). Movable
joints keep their declaration order, which must list parents before children.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from ..robot import LinkTree, build_robot, validate_mass_properties
from ..spatial import rpy_to_rotation

_KINDS = {"revolute": "revolute", "continuous": "revolute", "prismatic": "prismatic", "fixed": "fixed"}


def _vector(element, attr: str, default: str, where: str) -> np.ndarray:
    text = element.get(attr, default) if element is not None else default
    try:
        values = np.array([float(x) for x in text.split()])
    except ValueError:
        raise ValueError(f"{where}: attribute '{attr}' is not numeric: '{text}'") from None
    if values.shape != (3,) or not np.all(np.isfinite(values)):
        raise ValueError(f"{where}: attribute '{attr}' must be 3 finite numbers, got '{text}'")
    return values


def _origin(element, where: str):
    origin = element.find("origin") if element is not None else None
    xyz = _vector(origin, "xyz", "0 0 0", where + "/origin")
    rpy = _vector(origin, "rpy", "0 0 0", where + "/origin")
    return np.asarray(rpy_to_rotation(rpy)), xyz


def _inertial(link, where: str):
    inertial = link.find("inertial")
    if inertial is None:
        return 0.0, np.zeros(3), np.zeros((3, 3))
    rot, com = _origin(inertial, where + "/inertial")
    mass_el = inertial.find("mass")
    mass = float(mass_el.get("value", "0")) if mass_el is not None else 0.0
    ie = inertial.find("inertia")
    names = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
    try:
        vals = {n: float(ie.get(n, "0")) if ie is not None else 0.0 for n in names}
    except ValueError:
        raise ValueError(f"{where}/inertial/inertia: non-numeric entry") from None
    tensor = np.array(
        [
            [vals["ixx"], vals["ixy"], vals["ixz"]],
            [vals["ixy"], vals["iyy"], vals["iyz"]],
            [vals["ixz"], vals["iyz"], vals["izz"]],
        ]
    )
    tensor = rot @ tensor @ rot.T
    validate_mass_properties(mass, tensor, where)
    return mass, com, tensor


def load_urdf(path: str | Path):
    """Parse a URDF file into a :class:`~diffspace.robot.Robot`."""
    path = Path(path)
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as err:
        raise ValueError(f"{path}: not valid XML ({err})") from None
    links = {link.get("name"): link for link in root.findall("link")}
    joints = root.findall("joint")
    children = {j.find("child").get("link") for j in joints}
    roots = [name for name in links if name not in children]
    if len(roots) != 1:
        raise ValueError(f"{path}: expected exactly one root link, found {roots}")
    order = [roots[0]]
    tree = LinkTree(link_names=[roots[0]], joint_names=[""], parents=[-1], kinds=["fixed"])
    mass, com, inertia = _inertial(links[roots[0]], f"{path}: link '{roots[0]}'")
    tree.rot.append(np.eye(3)), tree.pos.append(np.zeros(3)), tree.axis.append(np.array([0.0, 0.0, 1.0]))
    tree.mass.append(mass), tree.com.append(com), tree.inertia.append(inertia)
    tree.lower.append(0.0), tree.upper.append(0.0)
    for joint in joints:
        name = joint.get("name")
        where = f"{path}: joint '{name}'"
        kind = _KINDS.get(joint.get("type"))
        if kind is None:
            raise ValueError(f"{where}: unsupported joint type '{joint.get('type')}'")
        parent, child = joint.find("parent").get("link"), joint.find("child").get("link")
        if parent not in order:
            raise ValueError(f"{where}: parent link '{parent}' must be attached before this joint")
        if child not in links:
            raise ValueError(f"{where}: unknown child link '{child}'")
        rot, pos = _origin(joint, where)
        axis = _vector(joint.find("axis"), "xyz", "1 0 0", where + "/axis")
        if kind != "fixed" and np.linalg.norm(axis) == 0:
            raise ValueError(f"{where}: axis must be non-zero")
        limit = joint.find("limit")
        lower, upper = -np.inf, np.inf
        if limit is not None and joint.get("type") in ("revolute", "prismatic"):
            lower, upper = float(limit.get("lower", "-inf")), float(limit.get("upper", "inf"))
        mass, com, inertia = _inertial(links[child], f"{path}: link '{child}'")
        order.append(child)
        tree.link_names.append(child)
        tree.joint_names.append(name)
        tree.parents.append(order.index(parent))
        tree.kinds.append(kind)
        tree.rot.append(rot), tree.pos.append(pos), tree.axis.append(axis / max(np.linalg.norm(axis), 1e-300))
        tree.mass.append(mass), tree.com.append(com), tree.inertia.append(inertia)
        tree.lower.append(lower), tree.upper.append(upper)
    return build_robot(tree)
