r"""MJCF (MuJoCo XML) export of a :class:`~diffspace.core.robot.Robot`, for cross-validation against MuJoCo.

The writer maps our model one to one:

* every body becomes a ``<body>`` whose ``pos``/``quat`` is its joint placement in the parent body
  (``placement_pos``/``placement_rot``, at zero joint angle), with an ``<inertial>`` holding ``mass``,
  ``pos = com`` and ``fullinertia`` = the inertia about the CoM in body axes (no geoms, so no contacts and
  no geometry-derived inertia);
* every movable joint becomes a ``hinge`` (revolute) or ``slide`` (prismatic) joint at the body origin
  with the body-frame ``axis``; no joint limits;
* the floating base is either a ``<freejoint/>`` (``base_joint="free"``) or a single ``slide`` joint
  along ``slide_axis`` (base frame, ``base_joint="slide"``) carrying a spring: MuJoCo's passive spring
  force is :math:`-k(s - s_{ref})`, so ``stiffness = k`` and ``springref = l`` give the separation
  springs' :math:`F = k(l - s)` with ``ref = 0`` (the slide coordinate ``s`` is 0 in the start pose);
* zero gravity; joint friction as MuJoCo's ``frictionloss`` (one friction level: our static = Coulomb
  torque) and viscous ``damping`` (our ``B``); the optional ``solreffriction``/``solimpfriction``
  tighten MuJoCo's soft friction-loss constraint.

Coordinates. With the base at the world origin and identity attitude (the only start pose written),
MuJoCo's ``qpos`` of a free base is ``[p, quat (w x y z), theta]`` and its ``qvel`` is ``[v (world),
omega (body), theta_dot]``; ours is ``[v_B (base), omega_B (base), theta_dot]``, so the two velocity
vectors differ by the base rotation on the linear part only (``v_world = R v_B``). For the slide base
``qpos = [s, theta]`` and ``qvel = [s_dot, theta_dot]`` with ``s`` the travel along ``slide_axis``.
Joint order is ours (declaration order), since bodies are written parent-first in body order.
"""

from __future__ import annotations

from typing import Sequence
from xml.sax.saxutils import quoteattr

import numpy as np

from ..core.robot import Robot

INTEGRATORS = ("Euler", "RK4", "implicit", "implicitfast")


def _fmt(values) -> str:
    """Space-separated numbers with full double precision (``repr`` round-trips exactly)."""
    return " ".join(repr(float(x)) for x in np.atleast_1d(np.asarray(values, dtype=float)))


def _quat_wxyz(rot) -> np.ndarray:
    """Unit quaternion ``[w, x, y, z]`` of a rotation matrix (Shepperd's method, numpy, w >= 0)."""
    r = np.asarray(rot, dtype=float)
    trace = np.trace(r)
    candidates = np.array(
        [
            [1.0 + trace, r[2, 1] - r[1, 2], r[0, 2] - r[2, 0], r[1, 0] - r[0, 1]],
            [r[2, 1] - r[1, 2], 1.0 + r[0, 0] - r[1, 1] - r[2, 2], r[0, 1] + r[1, 0], r[0, 2] + r[2, 0]],
            [r[0, 2] - r[2, 0], r[0, 1] + r[1, 0], 1.0 - r[0, 0] + r[1, 1] - r[2, 2], r[1, 2] + r[2, 1]],
            [r[1, 0] - r[0, 1], r[0, 2] + r[2, 0], r[1, 2] + r[2, 1], 1.0 - r[0, 0] - r[1, 1] + r[2, 2]],
        ]
    )
    q = candidates[int(np.argmax([trace, r[0, 0], r[1, 1], r[2, 2]]))]
    q = q / np.linalg.norm(q)
    return -q if q[0] < 0 else q


def _per_joint(value, n: int, name: str) -> np.ndarray:
    arr = np.broadcast_to(np.asarray(value, dtype=float), (n,)).copy()
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError(f"{name} must be finite and >= 0, got {arr.tolist()}")
    return arr


def robot_to_mjcf(
    robot: Robot,
    *,
    base_joint: str = "free",
    slide_axis: Sequence[float] = (0.0, 0.0, 1.0),
    spring_stiffness: float = 0.0,
    spring_ref: float = 0.0,
    joint_frictionloss=0.0,
    joint_damping=0.0,
    timestep: float = 1e-3,
    integrator: str = "implicitfast",
    solreffriction: Sequence[float] | None = None,
    solimpfriction: Sequence[float] | None = None,
    noslip_iterations: int = 0,
    model_name: str | None = None,
) -> str:
    """MJCF text of ``robot`` (see the module docstring for the mapping and the coordinates).

    ``base_joint``: ``"free"`` (6-DOF free-flyer) or ``"slide"`` (translation along ``slide_axis`` in the
    base frame, with a spring of ``spring_stiffness`` whose force is ``k (spring_ref - s)``).
    ``joint_frictionloss``/``joint_damping``: scalars or one value per movable joint (N m, N m s/rad).
    ``solreffriction``/``solimpfriction``: MuJoCo's solver parameters of the friction-loss constraints
    (defaults: MuJoCo's). ``noslip_iterations``: MuJoCo's post-processing noslip solver (0: off).
    """
    if base_joint not in ("free", "slide"):
        raise ValueError(f"base_joint must be 'free' or 'slide', got {base_joint!r}")
    if integrator not in INTEGRATORS:
        raise ValueError(f"integrator must be one of {INTEGRATORS}, got {integrator!r}")
    if not timestep > 0:
        raise ValueError(f"timestep must be > 0, got {timestep}")
    n = robot.n_joints
    friction = _per_joint(joint_frictionloss, n, "joint_frictionloss")
    damping = _per_joint(joint_damping, n, "joint_damping")
    axis = np.asarray(slide_axis, dtype=float)
    if axis.shape != (3,) or not np.linalg.norm(axis) > 0:
        raise ValueError(f"slide_axis must be a non-zero 3-vector, got {slide_axis}")
    axis = axis / np.linalg.norm(axis)

    rots = np.asarray(robot.placement_rot)
    poss = np.asarray(robot.placement_pos)
    axes = np.asarray(robot.axis)
    masses = np.asarray(robot.mass)
    coms = np.asarray(robot.com)
    inertias = np.asarray(robot.inertia)
    children: dict[int, list[int]] = {i: [] for i in range(len(robot.parents))}
    for i, p in enumerate(robot.parents[1:], start=1):
        children[p].append(i)

    joint_extra = ""
    if solreffriction is not None:
        joint_extra += f" solreffriction={quoteattr(_fmt(solreffriction))}"
    if solimpfriction is not None:
        joint_extra += f" solimpfriction={quoteattr(_fmt(solimpfriction))}"

    def inertial(i: int) -> str:
        j = inertias[i]
        full = [j[0, 0], j[1, 1], j[2, 2], j[0, 1], j[0, 2], j[1, 2]]
        return f'<inertial pos="{_fmt(coms[i])}" mass="{_fmt(masses[i])}" fullinertia="{_fmt(full)}"/>'

    lines: list[str] = []

    def body(i: int, depth: int) -> None:
        pad = "  " * depth
        name = quoteattr(robot.body_names[i])
        if i == 0:
            lines.append(f'{pad}<body name={name} pos="0 0 0" quat="1 0 0 0">')
            if base_joint == "free":
                lines.append(f'{pad}  <freejoint name="base_free"/>')
            else:
                lines.append(
                    f'{pad}  <joint name="base_slide" type="slide" axis="{_fmt(axis)}" ref="0" '
                    f'stiffness="{_fmt(spring_stiffness)}" springref="{_fmt(spring_ref)}" limited="false"/>'
                )
        else:
            lines.append(
                f'{pad}<body name={name} pos="{_fmt(poss[i])}" quat="{_fmt(_quat_wxyz(rots[i]))}">'
            )
            kind = "hinge" if robot.joint_kinds[i] == "revolute" else "slide"
            k = i - 1
            lines.append(
                f'{pad}  <joint name={quoteattr(robot.joint_names[k])} type="{kind}" pos="0 0 0" '
                f'axis="{_fmt(axes[i])}" limited="false" frictionloss="{_fmt(friction[k])}" '
                f'damping="{_fmt(damping[k])}"{joint_extra}/>'
            )
        lines.append(f"{pad}  {inertial(i)}")
        for c in children[i]:
            body(c, depth + 1)
        lines.append(f"{pad}</body>")

    body(0, 2)
    head = [
        f"<mujoco model={quoteattr(model_name or 'diffspace_robot')}>",
        '  <compiler angle="radian" inertiafromgeom="false" autolimits="true"/>',
        f'  <option timestep="{_fmt(timestep)}" integrator="{integrator}" gravity="0 0 0" '
        f'noslip_iterations="{int(noslip_iterations)}">',
        '    <flag contact="disable" gravity="disable"/>',
        "  </option>",
        '  <default><geom contype="0" conaffinity="0"/></default>',
        "  <worldbody>",
    ]
    return "\n".join(head + lines + ["  </worldbody>", "</mujoco>", ""])


def mujoco_velocity_map(robot: Robot, base_joint: str = "free", slide_axis=(0.0, 0.0, 1.0), base_rotation=None):
    """Matrix ``P`` with ``v_ours = P qvel_mujoco``, so that ``H_mujoco = P^T H_ours P``.

    ``"free"``: ``diag(R^T, I, I)`` with ``R`` the base rotation (world from base; identity by default),
    since MuJoCo's free-joint linear velocity is in world axes and ours in base axes. ``"slide"``: the
    ``nv x (1 + n)`` map ``v = [axis * s_dot, 0, theta_dot]`` (base at identity attitude).
    """
    n = robot.n_joints
    if base_joint == "free":
        p = np.eye(6 + n)
        if base_rotation is not None:
            p[:3, :3] = np.asarray(base_rotation, dtype=float).T
        return p
    axis = np.asarray(slide_axis, dtype=float)
    axis = axis / np.linalg.norm(axis)
    p = np.zeros((6 + n, 1 + n))
    p[:3, 0] = axis
    p[6:, 1:] = np.eye(n)
    return p
