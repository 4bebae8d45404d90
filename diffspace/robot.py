r"""The robot model: a floating-base kinematic tree as an ``equinox.Module``.

Topology (parent indices, joint kinds, names) is static; joint placements, axes and mass properties
are arrays, so every dynamics quantity is differentiable with respect to geometry and inertia.

Body 0 is the floating base (the root link). Body ``i >= 1`` is moved by movable joint ``i - 1``;
movable joints are numbered in declaration order (SPEC 3). Fixed joints never appear as bodies: their
child links are merged into the parent body (composite mass, CoM, inertia) and kept as *frames*, exactly
as Pinocchio's URDF parser does. ``Robot.lock`` applies the same merge to movable joints frozen at given
angles (the ejection paper's "reconfiguration" of rigidly joined arms), so locking is exact.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import equinox as eqx
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from . import spatial

JOINT_KINDS = ("revolute", "prismatic")


class Robot(eqx.Module):
    """Floating-base tree. Shapes: ``nb = n_joints + 1`` bodies, ``nf`` frames."""

    body_names: tuple[str, ...] = eqx.field(static=True)
    joint_names: tuple[str, ...] = eqx.field(static=True)
    parents: tuple[int, ...] = eqx.field(static=True)  # parents[0] == -1
    joint_kinds: tuple[str, ...] = eqx.field(static=True)  # per body; "" for the base
    frame_names: tuple[str, ...] = eqx.field(static=True)
    frame_bodies: tuple[int, ...] = eqx.field(static=True)
    attitudes: tuple[tuple[str, tuple[float, ...]], ...] = eqx.field(static=True)
    placement_rot: Float[Array, "nb 3 3"]  # joint frame in the parent body frame (at zero angle)
    placement_pos: Float[Array, "nb 3"]
    axis: Float[Array, "nb 3"]  # unit joint axis in the body frame
    mass: Float[Array, " nb"]
    com: Float[Array, "nb 3"]  # body frame
    inertia: Float[Array, "nb 3 3"]  # about the CoM, body axes
    frame_rot: Float[Array, "nf 3 3"]  # frame placement in its body
    frame_pos: Float[Array, "nf 3"]
    lower: Float[Array, " n"]  # joint limits (rad or m); +-inf when unlimited
    upper: Float[Array, " n"]

    @property
    def n_joints(self) -> int:
        return len(self.joint_names)

    @property
    def nq(self) -> int:
        return 7 + self.n_joints

    @property
    def nv(self) -> int:
        return 6 + self.n_joints

    @property
    def revolute_mask(self) -> np.ndarray:
        """1.0 for bodies moved by a revolute joint, 0.0 for prismatic joints and the base."""
        return np.array([1.0 if kind == "revolute" else 0.0 for kind in self.joint_kinds])

    @property
    def total_mass(self) -> Float[Array, ""]:
        return jnp.sum(self.mass)

    def frame_index(self, name: str) -> int:
        if name not in self.frame_names:
            raise KeyError(f"unknown frame/link '{name}'; known: {', '.join(self.frame_names)}")
        return self.frame_names.index(name)

    def joint_index(self, name: str) -> int:
        if name not in self.joint_names:
            raise KeyError(f"unknown joint '{name}'; known: {', '.join(self.joint_names)}")
        return self.joint_names.index(name)

    def attitude(self, name: str) -> Float[Array, " n"]:
        """Joint angles (rad) of a named attitude stored with the robot."""
        table = dict(self.attitudes)
        if name not in table:
            raise KeyError(f"unknown attitude '{name}'; known: {', '.join(table) or 'none'}")
        return jnp.asarray(table[name])

    def neutral(self) -> Float[Array, " nq"]:
        """Configuration with the base at the origin, identity attitude and zero joint angles."""
        return jnp.concatenate([jnp.zeros(3), jnp.array([0.0, 0.0, 0.0, 1.0]), jnp.zeros(self.n_joints)])

    def lock(self, joints, angles) -> "Robot":
        """Reduced robot with the given movable joints frozen at ``angles`` (rad or m).

        ``joints`` are joint names or 0-based indices. Each locked link is merged into its parent with
        composite mass/CoM/inertia; its children and frames are re-attached to the parent. The result
        has the same dynamics as the full robot with those joints held by ideal constraints.
        """
        idx = [self.joint_index(j) if isinstance(j, str) else int(j) for j in joints]
        for j in idx:
            if not 0 <= j < self.n_joints:
                raise IndexError(f"locked joint index {j} out of range 0..{self.n_joints - 1}")
        angles = jnp.broadcast_to(jnp.asarray(angles, dtype=float), (len(idx),))
        links = _links_of(self)
        for j, angle in zip(idx, angles):
            body = j + 1
            rot, pos = _joint_motion(links.kinds[body], links.axis[body], angle)
            r, p = spatial.compose(links.rot[body], links.pos[body], rot, pos)
            links.rot[body], links.pos[body], links.kinds[body] = r, p, "fixed"
        attitudes = tuple(
            (name, tuple(a for k, a in enumerate(vals) if k not in idx)) for name, vals in self.attitudes
        )
        return build_robot(links, attitudes)


def _joint_motion(kind: str, axis, value):
    """Placement of a joint's child frame in its joint frame at joint coordinate ``value``."""
    if kind == "revolute":
        return spatial.axis_angle_rotation(axis, value), jnp.zeros(3)
    return jnp.eye(3), axis * value


def joint_transforms(robot: Robot, q_joints: Float[Array, " n"]):
    """Placement (R, p) of every body in its parent at joint coordinates ``q_joints``: ``(nb,3,3), (nb,3)``.

    Computed for all bodies at once (entry 0, the base, is the identity).
    """
    revolute = jnp.asarray(robot.revolute_mask)[:, None]
    values = jnp.concatenate([jnp.zeros(1), q_joints])
    joint_rot = spatial.axis_angle_rotation(robot.axis, values)
    rot_motion = jnp.where(revolute[:, :, None] > 0, joint_rot, jnp.eye(3))
    pos_motion = (1.0 - revolute) * robot.axis * values[:, None]
    rots = robot.placement_rot @ rot_motion
    poss = robot.placement_pos + jnp.einsum("bij,bj->bi", robot.placement_rot, pos_motion)
    return rots, poss


def motion_subspaces(robot: Robot) -> Float[Array, "nb 6"]:
    """Joint motion subspace ``S_i`` of every body in its own frame ([linear; angular]); row 0 unused."""
    revolute = jnp.asarray(robot.revolute_mask)[:, None]
    return jnp.concatenate([(1.0 - revolute) * robot.axis, revolute * robot.axis], axis=1)


# ----------------------------------------------------------------------------- construction
@dataclass
class LinkTree:
    """Mutable description used by the loaders and by ``lock``: one entry per link, fixed joints allowed.

    Entry 0 is the root link. ``kinds[i]`` is "revolute", "prismatic" or "fixed"; ``rot/pos`` the joint
    frame in the parent link; ``axis`` the unit joint axis in the joint frame.
    """

    link_names: list[str]
    joint_names: list[str]
    parents: list[int]
    kinds: list[str]
    rot: list = field(default_factory=list)
    pos: list = field(default_factory=list)
    axis: list = field(default_factory=list)
    mass: list = field(default_factory=list)
    com: list = field(default_factory=list)
    inertia: list = field(default_factory=list)
    lower: list = field(default_factory=list)
    upper: list = field(default_factory=list)
    frames: list = field(default_factory=list)  # (name, link index, rot, pos) of extra frames


def _links_of(robot: Robot) -> LinkTree:
    nb = len(robot.parents)
    tree = LinkTree(
        link_names=list(robot.body_names),
        joint_names=[""] + list(robot.joint_names),
        parents=list(robot.parents),
        kinds=["fixed"] + list(robot.joint_kinds[1:]),
        rot=[robot.placement_rot[i] for i in range(nb)],
        pos=[robot.placement_pos[i] for i in range(nb)],
        axis=[robot.axis[i] for i in range(nb)],
        mass=[robot.mass[i] for i in range(nb)],
        com=[robot.com[i] for i in range(nb)],
        inertia=[robot.inertia[i] for i in range(nb)],
        lower=[jnp.array(0.0)] + [robot.lower[i] for i in range(nb - 1)],
        upper=[jnp.array(0.0)] + [robot.upper[i] for i in range(nb - 1)],
    )
    for k, name in enumerate(robot.frame_names):
        if name not in robot.body_names:
            tree.frames.append((name, robot.frame_bodies[k], robot.frame_rot[k], robot.frame_pos[k]))
    return tree


def build_robot(tree: LinkTree, attitudes=()) -> Robot:
    """Merge fixed joints of a link tree and return the ``Robot`` (parents must precede children)."""
    n = len(tree.link_names)
    for i in range(1, n):
        if not 0 <= tree.parents[i] < i:
            raise ValueError(
                f"link '{tree.link_names[i]}' is declared before its parent; declare joints parent-first"
            )
    target = list(range(n))  # body a link is merged into
    rel_rot = [jnp.eye(3)] * n  # link frame in that body
    rel_pos = [jnp.zeros(3)] * n
    mass = [jnp.asarray(m, dtype=float) for m in tree.mass]
    com = [jnp.asarray(c, dtype=float) for c in tree.com]
    inertia = [jnp.asarray(i, dtype=float) for i in tree.inertia]
    for i in range(1, n):
        if tree.kinds[i] == "fixed":
            p = target[tree.parents[i]]
            target[i] = p
            rel_rot[i], rel_pos[i] = spatial.compose(
                rel_rot[tree.parents[i]], rel_pos[tree.parents[i]], jnp.asarray(tree.rot[i]), jnp.asarray(tree.pos[i])
            )
    # accumulate merged mass properties leaf-first so nested fixed links are handled
    for i in reversed(range(1, n)):
        if tree.kinds[i] == "fixed":
            p = target[i]
            m2, c2, i2 = spatial.transform_inertia(rel_rot[i], rel_pos[i], mass[i], com[i], inertia[i])
            mass[p], com[p], inertia[p] = spatial.combine_inertia(mass[p], com[p], inertia[p], m2, c2, i2)
            mass[i] = jnp.array(0.0)
    bodies = [i for i in range(n) if i == 0 or tree.kinds[i] != "fixed"]
    body_of = {link: k for k, link in enumerate(bodies)}
    parents, rots, poss = [-1], [jnp.eye(3)], [jnp.zeros(3)]
    for i in bodies[1:]:
        par = tree.parents[i]
        parents.append(body_of[target[par]])
        r, p = spatial.compose(rel_rot[par], rel_pos[par], jnp.asarray(tree.rot[i]), jnp.asarray(tree.pos[i]))
        rots.append(r)
        poss.append(p)
    frame_names = [tree.link_names[i] for i in bodies]
    frame_bodies = list(range(len(bodies)))
    frame_rot, frame_pos = [jnp.eye(3)] * len(bodies), [jnp.zeros(3)] * len(bodies)
    for i in range(1, n):
        if tree.kinds[i] == "fixed":
            frame_names.append(tree.link_names[i])
            frame_bodies.append(body_of[target[i]])
            frame_rot.append(rel_rot[i])
            frame_pos.append(rel_pos[i])
    for name, link, r, p in tree.frames:
        rr, pp = spatial.compose(rel_rot[link], rel_pos[link], jnp.asarray(r), jnp.asarray(p))
        frame_names.append(name)
        frame_bodies.append(body_of[target[link]])
        frame_rot.append(rr)
        frame_pos.append(pp)

    def stack(values, idx):
        return jnp.stack([jnp.asarray(values[i], dtype=float) for i in idx])

    moving = bodies[1:]
    return Robot(
        body_names=tuple(tree.link_names[i] for i in bodies),
        joint_names=tuple(tree.joint_names[i] for i in moving),
        parents=tuple(parents),
        joint_kinds=("",) + tuple(tree.kinds[i] for i in moving),
        frame_names=tuple(frame_names),
        frame_bodies=tuple(frame_bodies),
        attitudes=tuple(attitudes),
        placement_rot=jnp.stack(rots),
        placement_pos=jnp.stack(poss),
        axis=stack(tree.axis, bodies),
        mass=stack(mass, bodies),
        com=stack(com, bodies),
        inertia=stack(inertia, bodies),
        frame_rot=jnp.stack(frame_rot),
        frame_pos=jnp.stack(frame_pos),
        lower=stack(tree.lower, moving) if moving else jnp.zeros(0),
        upper=stack(tree.upper, moving) if moving else jnp.zeros(0),
    )


def validate_mass_properties(mass, inertia, where: str) -> None:
    """Raise ``ValueError`` naming ``where`` for negative mass or a non-physical inertia."""
    mass = float(mass)
    inertia = np.asarray(inertia, dtype=float)
    if not np.isfinite(mass) or mass < 0:
        raise ValueError(f"{where}: mass must be >= 0, got {mass}")
    if not np.all(np.isfinite(inertia)) or not np.allclose(inertia, inertia.T, atol=1e-12):
        raise ValueError(f"{where}: inertia must be a finite symmetric 3x3 matrix")
    eig = np.linalg.eigvalsh(inertia)
    if mass > 0 and eig[0] <= 0:
        raise ValueError(f"{where}: inertia is not positive definite (eigenvalues {eig.round(6).tolist()})")
    a, b, c = np.sort(eig)
    if c > a + b + 1e-9 * max(c, 1.0):
        raise ValueError(f"{where}: inertia violates the triangle inequality (eigenvalues {eig.tolist()})")
