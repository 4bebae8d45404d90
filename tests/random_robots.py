"""Random floating-base trees written as URDF text, for cross-checks against Pinocchio."""

from __future__ import annotations

import numpy as np


def _random_inertia(rng, planar=False):
    """A physical inertia (triangle inequality holds) in a random orientation (about y only if planar)."""
    principal = rng.uniform(0.05, 1.0, 3)
    principal[2] = rng.uniform(abs(principal[0] - principal[1]) + 0.01, principal[0] + principal[1] - 0.01)
    if planar:
        angle = rng.uniform(0, np.pi)
        c, s = np.cos(angle), np.sin(angle)
        q = np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])
    else:
        q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    return q @ np.diag(principal) @ q.T


def _triple(rng, low, high, planar):
    x = rng.uniform(low, high, 3)
    if planar:
        x[1] = 0.0
    return " ".join(f"{v:.17g}" for v in x)


def _inertial_xml(rng, mass, planar=False):
    tensor = _random_inertia(rng, planar)
    xyz = _triple(rng, -0.2, 0.2, planar)
    rpy = " ".join(f"{x:.17g}" for x in (rng.uniform(-np.pi, np.pi, 3) * ([0, 0, 0] if planar else 1)))
    return (
        f'<inertial><origin xyz="{xyz}" rpy="{rpy}"/><mass value="{mass:.17g}"/>'
        f'<inertia ixx="{tensor[0, 0]:.17g}" ixy="{tensor[0, 1]:.17g}" ixz="{tensor[0, 2]:.17g}" '
        f'iyy="{tensor[1, 1]:.17g}" iyz="{tensor[1, 2]:.17g}" izz="{tensor[2, 2]:.17g}"/></inertial>'
    )


def random_urdf(
    rng: np.random.Generator, n_joints: int, branched: bool, with_fixed: bool = True, planar: bool = False
) -> str:
    """URDF of a random tree with ``n_joints`` movable joints (parents declared first).

    ``planar``: every joint axis along y, all offsets and CoMs in the x-z plane and y a principal inertia
    axis, so that motion started in the x-z plane stays in it.
    """
    links = [f'<link name="base">{_inertial_xml(rng, rng.uniform(5, 20), planar)}</link>']
    joints = []
    kinds = ["revolute", "continuous", "prismatic"]
    parent_choices = [0]
    count = 0
    for j in range(n_joints):
        parent = int(rng.choice(parent_choices)) if branched else parent_choices[-1]
        child = len(links)
        links.append(f'<link name="link{child}">{_inertial_xml(rng, rng.uniform(0.5, 5), planar)}</link>')
        kind = kinds[int(rng.integers(3))] if j % 3 else "revolute"
        axis = np.array([0.0, 1.0, 0.0]) if planar else rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        if planar and kind == "prismatic":
            axis = np.array([1.0, 0.0, 0.0])
        xyz = _triple(rng, -0.5, 0.5, planar)
        rpy = " ".join(f"{x:.17g}" for x in rng.uniform(-np.pi, np.pi, 3) * ([0, 1, 0] if planar else 1))
        limit = '<limit lower="-3" upper="3" effort="10" velocity="10"/>' if kind != "continuous" else ""
        joints.append(
            f'<joint name="joint{child}" type="{kind}"><parent link="{_name(parent)}"/><child link="link{child}"/>'
            f'<origin xyz="{xyz}" rpy="{rpy}"/><axis xyz="{axis[0]:.17g} {axis[1]:.17g} {axis[2]:.17g}"/>{limit}</joint>'
        )
        parent_choices.append(child)
        count += 1
        if with_fixed and j == n_joints // 2:
            fixed = len(links)
            links.append(f'<link name="link{fixed}">{_inertial_xml(rng, rng.uniform(0.5, 2), planar)}</link>')
            joints.append(
                f'<joint name="fixed{fixed}" type="fixed"><parent link="link{child}"/><child link="link{fixed}"/>'
                f'<origin xyz="0.1 {0 if planar else 0.2} -0.1" rpy="{0 if planar else 0.3} -0.2 {0 if planar else 0.5}"/></joint>'
            )
            parent_choices.append(fixed)
    return '<robot name="random">' + "".join(links) + "".join(joints) + "</robot>"


def _name(index: int) -> str:
    return "base" if index == 0 else f"link{index}"


def write_random_robot(tmp_path, seed: int, n_joints: int, branched: bool, **kwargs):
    """Write a random URDF under ``tmp_path`` and return its path."""
    path = tmp_path / f"random_{seed}_{n_joints}_{int(branched)}.urdf"
    path.write_text(random_urdf(np.random.default_rng(seed), n_joints, branched, **kwargs))
    return path
