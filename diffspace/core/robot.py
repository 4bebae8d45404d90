r"""The robot model: a floating-base kinematic tree as an ``equinox.Module``.

Topology (parent indices, joint kinds, names) is static; joint placements, axes and mass properties
are arrays, so every dynamics quantity is differentiable with respect to geometry and inertia.

Body 0 is the floating base (the root link). Body ``i >= 1`` is moved by movable joint ``i - 1``;
movable joints are numbered in URDF/TOML declaration order. Fixed joints never appear as bodies: their
child links are merged into the parent body (composite mass, CoM, inertia) and kept as *frames*, exactly
as Pinocchio's URDF parser does. ``Robot.lock`` applies the same merge to movable joints frozen at given
angles (the ejection paper's "reconfiguration" of rigidly joined arms), so locking is exact.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Callable, Sequence

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from . import spatial
from .status import ConfigError, capped

JOINT_KINDS = ("revolute", "prismatic")


class Robot(eqx.Module):
    """Floating-base tree. Shapes: ``nb = n_joints + 1`` bodies, ``nf`` frames, ``n = n_joints``.

    The configuration is ``q = [base position (3, m), base quaternion (4, x y z w), joint values (n, rad or m)]``
    (``nq = 7 + n``), the velocity ``v = [base linear velocity (3, m/s), base angular velocity (3, rad/s),
    joint rates (n)]`` in the base frame (``nv = 6 + n``).

    Attributes:
        body_names: Name of each body (its root link), static.
        joint_names: Name of each movable joint (body ``i`` is moved by joint ``i - 1``), static.
        parents: Parent body of each body (``parents[0] == -1``), static.
        joint_kinds: ``"revolute"`` or ``"prismatic"`` per body (``""`` for the base), static.
        frame_names: Every link and extra frame, static.
        frame_bodies: The body each frame is attached to, static.
        attitudes: Named joint-angle sets ``(name, angles in rad)``, static.
        placement_rot: Joint frame in the parent body frame at zero joint value, shape ``(nb, 3, 3)``.
        placement_pos: Its origin, shape ``(nb, 3)`` [m].
        axis: Unit joint axis in the body frame, shape ``(nb, 3)``.
        mass: Body masses, shape ``(nb,)`` [kg].
        com: Centres of mass in the body frames, shape ``(nb, 3)`` [m].
        inertia: Inertia tensors about the CoM in body axes, shape ``(nb, 3, 3)`` [kg m²].
        frame_rot: Frame orientations in their bodies, shape ``(nf, 3, 3)``.
        frame_pos: Frame origins in their bodies, shape ``(nf, 3)`` [m].
        lower: Lower joint limits, shape ``(n,)`` [rad or m]; ``-inf`` when unlimited.
        upper: Upper joint limits, shape ``(n,)`` [rad or m]; ``+inf`` when unlimited.
    """

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
        """Number of movable joints."""
        return len(self.joint_names)

    @property
    def nq(self) -> int:
        """Configuration size, ``7 + n_joints``."""
        return 7 + self.n_joints

    @property
    def nv(self) -> int:
        """Velocity size, ``6 + n_joints``."""
        return 6 + self.n_joints

    @property
    def revolute_mask(self) -> np.ndarray:
        """1.0 for bodies moved by a revolute joint, 0.0 for prismatic joints and the base."""
        return np.array([1.0 if kind == "revolute" else 0.0 for kind in self.joint_kinds])

    @property
    def total_mass(self) -> Float[Array, ""]:
        """Sum of the body masses [kg]."""
        return jnp.sum(self.mass)

    def frame_index(self, name: str) -> int:
        """Index of a frame or link in ``frame_names``.

        Raises:
            KeyError: Unknown name (the message lists known ones).
        """
        if name not in self.frame_names:
            raise KeyError(f"unknown frame/link '{name}'; known: {capped(self.frame_names, 20)}")
        return self.frame_names.index(name)

    def joint_index(self, name: str) -> int:
        """0-based index of a movable joint.

        Raises:
            KeyError: Unknown joint (the message lists known ones).
        """
        if name not in self.joint_names:
            raise KeyError(f"unknown joint '{name}'; known: {capped(self.joint_names, 20)}")
        return self.joint_names.index(name)

    def attitude(self, name: str) -> Float[Array, " n"]:
        """Joint angles of a named attitude stored with the robot.

        Args:
            name: The attitude's name.

        Returns:
            Joint values, shape ``(n_joints,)`` [rad; m for prismatic joints].

        Raises:
            KeyError: Unknown attitude.
        """
        table = dict(self.attitudes)
        if name not in table:
            raise KeyError(f"unknown attitude '{name}'; known: {capped(table, 20) or 'none'}")
        return jnp.asarray(table[name])

    def neutral(self) -> Float[Array, " nq"]:
        """Configuration with the base at the origin, identity attitude and zero joint angles."""
        return jnp.concatenate([jnp.zeros(3), jnp.array([0.0, 0.0, 0.0, 1.0]), jnp.zeros(self.n_joints)])

    def lock(self, joints, angles) -> "Robot":
        """Reduced robot with the given movable joints frozen.

        Each locked link is merged into its parent with composite mass/CoM/inertia; its children and frames
        are re-attached to the parent. The result has the same dynamics as the full robot with those joints
        held by ideal constraints. Jitted as a whole (compiled once per robot structure and locked set;
        inlined inside an outer ``jit``); differentiable in ``angles``.

        Args:
            joints: Joint names or 0-based indices.
            angles: Their values, shape ``(len(joints),)`` or scalar [rad; m for prismatic joints].

        Returns:
            The reduced robot (``n_joints - len(joints)`` movable joints).

        Raises:
            KeyError: An unknown joint name.
            IndexError: A joint index out of range.
        """
        idx = tuple(self.joint_index(j) if isinstance(j, str) else int(j) for j in joints)
        for j in idx:
            if not 0 <= j < self.n_joints:
                raise IndexError(f"locked joint index {j} out of range 0..{self.n_joints - 1}")
        return _lock(self, idx, jnp.broadcast_to(jnp.asarray(angles, dtype=float), (len(idx),)))


@eqx.filter_jit
def _lock(robot: Robot, idx: tuple[int, ...], angles: Float[Array, " k"]) -> Robot:
    links = _links_of(robot)
    for k, j in enumerate(idx):
        body = j + 1
        rot, pos = _joint_motion(links.kinds[body], links.axis[body], angles[k])
        r, p = spatial.compose(links.rot[body], links.pos[body], rot, pos)
        links.rot, links.pos = links.rot.at[body].set(r), links.pos.at[body].set(p)
        links.kinds[body] = "fixed"
    attitudes = tuple((name, tuple(a for k, a in enumerate(vals) if k not in idx)) for name, vals in robot.attitudes)
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
MAX_BODIES = 10_000
"""Most bodies (the floating base plus one per movable joint) a robot may have.

One dynamics evaluation holds every body Jacobian (``Kinematics.jac``: 6 x bodies x (bodies + 5) doubles)
and the dense mass matrix: 4.8 GB and 0.8 GB at 10,000 bodies, all that a 16 GB workstation can give a
single call before ``vmap`` or a gradient multiplies it."""

MAX_LINKS = 100_000
"""Most links (bodies plus links merged by fixed joints, which are kept as frames) a description may have:
ten times ``MAX_BODIES``, so that loading stays within seconds (see experiments/robot_loading_bench.py)."""


@dataclass
class LinkTree:
    """One entry per link (fixed joints allowed): what the loaders and ``Robot.lock`` hand to ``build_robot``.

    Entry 0 is the root link and ``parents[i] < i``. ``kinds[i]`` is "revolute", "prismatic" or "fixed";
    ``rot/pos`` the joint frame in the parent link; ``axis`` the unit joint axis in the joint frame;
    ``lower/upper`` the joint limits (entry 0 unused). The numeric fields hold one value per link, as a
    stacked array (``(n, 3, 3)``, ``(n, 3)``, ``(n,)``) or a list of per-link values: NumPy from the
    loaders (no JAX call per link), JAX arrays (possibly traced) from ``lock``.
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
    tree = LinkTree(
        link_names=list(robot.body_names),
        joint_names=[""] + list(robot.joint_names),
        parents=list(robot.parents),
        kinds=["fixed"] + list(robot.joint_kinds[1:]),
        rot=robot.placement_rot,
        pos=robot.placement_pos,
        axis=robot.axis,
        mass=robot.mass,
        com=robot.com,
        inertia=robot.inertia,
        lower=jnp.concatenate([jnp.zeros(1), robot.lower]),
        upper=jnp.concatenate([jnp.zeros(1), robot.upper]),
    )
    for k, name in enumerate(robot.frame_names):
        if name not in robot.body_names:
            tree.frames.append((name, robot.frame_bodies[k], robot.frame_rot[k], robot.frame_pos[k]))
    return tree


def check_size(n_bodies: int, n_links: int, where: str) -> None:
    """Raise ``ConfigError`` when a description exceeds ``MAX_BODIES`` or ``MAX_LINKS``."""
    if n_bodies > MAX_BODIES:
        gigabytes = 8.0 * (6 * n_bodies * (n_bodies + 5) + (n_bodies + 5) ** 2) / 1e9
        raise ConfigError(
            f"{where}: {n_bodies} bodies (the base and {n_bodies - 1} movable joints) exceed the limit of "
            f"{MAX_BODIES}: one dynamics evaluation would need {gigabytes:.0f} GB"
        )
    if n_links > MAX_LINKS:
        raise ConfigError(f"{where}: {n_links} links exceed the limit of {MAX_LINKS} links per robot")


def validate_link_tree(tree: LinkTree, where: str) -> None:
    """Loader checks of a concrete (NumPy) tree: size limits, parents first, and mass on every moving part.

    A movable joint whose child link and descendants are all massless makes the mass matrix singular, so it
    is refused here rather than producing NaN accelerations later.
    """
    kinds = tree.kinds
    movable = [i for i in range(1, len(kinds)) if kinds[i] != "fixed"]
    check_size(1 + len(movable), len(kinds), where)
    _check_parent_order(tree, where)
    subtree = np.asarray(tree.mass, dtype=float).tolist()
    for i in reversed(range(1, len(kinds))):
        subtree[tree.parents[i]] += subtree[i]
    massless = [f"'{tree.joint_names[i]}'" for i in movable if not subtree[i] > 0.0]
    if massless:
        raise ConfigError(
            f"{where}: joint {capped(massless)} moves only massless links (the mass matrix would be singular); "
            "give its child link a mass"
        )


def _check_parent_order(tree: LinkTree, where: str) -> None:
    for i in range(1, len(tree.parents)):
        if not 0 <= tree.parents[i] < i:
            raise ConfigError(
                f"{where}: link '{tree.link_names[i]}' is declared before its parent; declare joints parent-first"
            )


def _holds_jax(tree: LinkTree) -> bool:
    values = [tree.rot, tree.pos, tree.axis, tree.mass, tree.com, tree.inertia, tree.lower, tree.upper]
    values += [x for frame in tree.frames for x in frame[2:]]
    return any(
        isinstance(v, jax.Array) or (isinstance(v, list) and any(isinstance(x, jax.Array) for x in v)) for v in values
    )


def _layout(parents, kinds) -> tuple[list[int], np.ndarray]:
    """The body links (the root and every link moved by a movable joint) and, for every link, the index of
    the body it is merged into (its nearest ancestor-or-self body link)."""
    target = list(range(len(parents)))
    for i in range(1, len(parents)):
        if kinds[i] == "fixed":
            target[i] = target[parents[i]]
    bodies = [i for i, t in enumerate(target) if t == i]
    index = {link: k for k, link in enumerate(bodies)}
    return bodies, np.asarray([index[t] for t in target], dtype=int)


def _segment_sum(xp, values, segments: np.ndarray, count: int):
    """Sum of ``values`` rows with equal (static) ``segments`` index. JAX (small robots in ``lock``): a
    one-hot matrix product, which compiles and differentiates faster than a scatter."""
    if xp is np:
        out = np.zeros((count,) + values.shape[1:])
        np.add.at(out, segments, values)
        return out
    return jnp.tensordot(jnp.asarray(np.arange(count)[:, None] == segments, dtype=float), values, axes=1)


def _take(xp, values, index) -> Array:
    """``values[index]`` for a static index array. JAX: static slices, which compile faster than a gather."""
    index = np.asarray(index, dtype=int)
    if xp is np or index.size == 0:
        return values[index]
    return jnp.stack([values[i] for i in index.tolist()])


def _fixed_chains(xp, parents, kinds, rot, pos):
    """Placement of every link frame in the frame of the body it is merged into: ``(n, 3, 3), (n, 3, 1)``."""
    rel_rot, rel_pos = [xp.eye(3)] * len(parents), [xp.zeros((3, 1))] * len(parents)
    for i in range(1, len(parents)):
        if kinds[i] == "fixed":
            p = parents[i]
            rel_rot[i], rel_pos[i] = spatial.compose(rel_rot[p], rel_pos[p], rot[i], pos[i])
    return xp.stack(rel_rot), xp.stack(rel_pos)


def _merged_mass(xp, body_of: np.ndarray, bodies: list[int], rel_rot, rel_pos, mass, com, inertia):
    r"""Composite mass properties of every body from its merged links (parallel-axis theorem):

    $$
    m_b = \sum_i m_i,\quad c_b = \frac{1}{m_b}\sum_i m_i \bar c_i,\quad
    I_b = \sum_i \big[R_i I_i R_i^T + m_i (|d_i|^2 \mathbf 1 - d_i d_i^T)\big],
    $$

    with $\bar c_i = p_i + R_i c_i$ the link CoM in the body frame and $d_i = \bar c_i - c_b$.
    A massless body keeps its own link's CoM (double ``where``: finite gradients at ``m_b = 0``).
    """
    nb = len(bodies)
    com_in_body = (rel_pos + rel_rot @ com)[:, :, 0]
    inertia_in_body = rel_rot @ inertia @ xp.swapaxes(rel_rot, 1, 2)
    total = _segment_sum(xp, mass, body_of, nb)
    moment = _segment_sum(xp, mass[:, None] * com_in_body, body_of, nb)
    positive = total > 0
    own_com = _take(xp, com_in_body, bodies)
    body_com = xp.where(positive[:, None], moment / xp.where(positive, total, 1.0)[:, None], own_com)
    d = com_in_body - _take(xp, body_com, body_of)
    shift = xp.sum(d * d, axis=1)[:, None, None] * xp.eye(3) - d[:, :, None] * d[:, None, :]
    return total, body_com, _segment_sum(xp, inertia_in_body + mass[:, None, None] * shift, body_of, nb)


def _merge(xp, topology: tuple, arrays: dict) -> dict:
    """The numeric part of ``build_robot``, vectorised over links; ``topology = (parents, kinds,
    frame_links)`` is static. Position vectors are carried as ``(..., 3, 1)`` columns so that
    ``spatial.compose`` works on stacks."""
    parents, kinds, frame_links = topology
    bodies, body_of = _layout(parents, kinds)
    take = partial(_take, xp)
    rot, pos = arrays["rot"], arrays["pos"][:, :, None]
    rel_rot, rel_pos = _fixed_chains(xp, parents, kinds, rot, pos)
    mass, com, inertia = _merged_mass(
        xp, body_of, bodies, rel_rot, rel_pos, arrays["mass"], arrays["com"][:, :, None], arrays["inertia"]
    )
    moving, up = bodies[1:], [parents[i] for i in bodies[1:]]
    joint_rot, joint_pos = spatial.compose(take(rel_rot, up), take(rel_pos, up), take(rot, moving), take(pos, moving))
    fixed = [i for i in range(1, len(kinds)) if kinds[i] == "fixed"]
    frame_rot, frame_pos = spatial.compose(
        take(rel_rot, frame_links), take(rel_pos, frame_links), arrays["frame_rot"], arrays["frame_pos"][:, :, None]
    )
    return dict(
        placement_rot=xp.concatenate([xp.eye(3)[None], joint_rot]),
        placement_pos=xp.concatenate([xp.zeros((1, 3)), joint_pos[:, :, 0]]),
        axis=take(arrays["axis"], bodies),
        mass=mass,
        com=com,
        inertia=inertia,
        frame_rot=xp.concatenate([xp.broadcast_to(xp.eye(3), (len(bodies), 3, 3)), take(rel_rot, fixed), frame_rot]),
        frame_pos=xp.concatenate([xp.zeros((len(bodies), 3)), take(rel_pos, fixed)[:, :, 0], frame_pos[:, :, 0]]),
        lower=take(arrays["lower"], moving),
        upper=take(arrays["upper"], moving),
    )


def build_robot(tree: LinkTree, attitudes=()) -> Robot:
    """Merge the fixed joints of a link tree and return the robot.

    The array work is vectorised over links in the tree's own array library: NumPy for the loaders (no JAX
    call per link, one conversion at the end), JAX for ``Robot.lock`` (traced inside its jit, differentiable
    in the locked angles).

    Args:
        tree: The links, parents before children (entry 0: the root link, the floating base).
        attitudes: Named joint-angle sets ``(name, angles in rad)`` stored with the robot.

    Returns:
        The robot, one body per movable joint plus the base; fixed-joint children become frames.

    Raises:
        ConfigError: A parent after its child, or more bodies or links than supported.
    """
    n = len(tree.link_names)
    _check_parent_order(tree, "robot")
    check_size(1 + sum(kind != "fixed" for kind in tree.kinds[1:]), n, "robot")
    xp = jnp if _holds_jax(tree) else np
    shapes = dict(rot=(3, 3), pos=(3,), axis=(3,), mass=(), com=(3,), inertia=(3, 3), lower=(), upper=())
    arrays = {name: xp.asarray(getattr(tree, name), dtype=float).reshape((n,) + sh) for name, sh in shapes.items()}
    arrays["frame_rot"] = xp.asarray([f[2] for f in tree.frames], dtype=float).reshape(-1, 3, 3)
    arrays["frame_pos"] = xp.asarray([f[3] for f in tree.frames], dtype=float).reshape(-1, 3)
    topology = (tuple(tree.parents), tuple(tree.kinds), tuple(f[1] for f in tree.frames))
    merged = _merge(xp, topology, arrays)
    bodies, body_of = _layout(tree.parents, tree.kinds)
    fixed = [i for i in range(1, n) if tree.kinds[i] == "fixed"]
    return Robot(
        body_names=tuple(tree.link_names[i] for i in bodies),
        joint_names=tuple(tree.joint_names[i] for i in bodies[1:]),
        parents=tuple([-1] + [int(body_of[tree.parents[i]]) for i in bodies[1:]]),
        joint_kinds=("",) + tuple(tree.kinds[i] for i in bodies[1:]),
        frame_names=tuple([tree.link_names[i] for i in bodies + fixed] + [f[0] for f in tree.frames]),
        frame_bodies=tuple(range(len(bodies))) + tuple(int(body_of[i]) for i in fixed + list(topology[2])),
        attitudes=tuple(attitudes),
        **{name: jnp.asarray(value) for name, value in merged.items()},
    )


def validate_mass_properties(
    mass, inertia, where: str, labels: Sequence[str] | Callable[[int], str] | None = None
) -> None:
    """Raise ``ConfigError`` unless every body is physical: mass finite and >= 0; CoM inertia finite and
    symmetric, positive definite when the mass is positive, and its principal moments obey the triangle
    inequality ``I_c <= I_a + I_b``.

    ``mass`` is a scalar or ``(k,)`` and ``inertia`` ``(3, 3)`` or ``(k, 3, 3)`` (validated in one NumPy
    pass); ``labels`` name the ``k`` entries ("link 'arm'"; a sequence, or a function of the index so that
    only offenders are formatted) and the message lists the first few offenders.
    """
    mass = np.atleast_1d(np.asarray(mass, dtype=float))
    inertia = np.asarray(inertia, dtype=float).reshape(-1, 3, 3)
    sound = np.isfinite(inertia).all(axis=(1, 2)) & np.isfinite(mass) & (mass >= 0)
    finite = inertia[sound]
    tolerance = 1e-12 + 1e-9 * np.abs(finite).max(axis=(1, 2), initial=0.0)  # rounding of rotated tensors
    sound[sound] = (np.abs(finite - np.swapaxes(finite, 1, 2)) <= tolerance[:, None, None]).all(axis=(1, 2))
    eig = np.full((len(mass), 3), np.nan)
    eig[sound] = np.linalg.eigvalsh(inertia[sound])  # ascending
    tolerance = 1e-9 * np.maximum(eig[:, 2], 1.0)

    def eigenvalues(k):
        return "eigenvalues " + ", ".join(f"{x:.6g}" for x in eig[k])

    checks = (
        (~(np.isfinite(mass) & (mass >= 0)), "mass must be finite and >= 0", lambda k: f"got {mass[k]:g}"),
        (np.isnan(eig[:, 0]), "inertia must be a finite symmetric 3x3 matrix", None),
        ((mass > 0) & (eig[:, 0] <= 0), "inertia is not positive definite", eigenvalues),
        (eig[:, 2] > eig[:, 0] + eig[:, 1] + tolerance, "inertia violates the triangle inequality", eigenvalues),
    )
    for bad, problem, detail in checks:
        offenders = np.flatnonzero(bad)
        if offenders.size == 0:
            continue
        first = int(offenders[0])
        note = f" ({detail(first)})" if detail else ""
        if labels is None:
            raise ConfigError(f"{where}: {problem}{note}")
        label = labels if callable(labels) else labels.__getitem__
        names = capped(label(int(k)) for k in offenders)
        note = f" ({label(first)}: {detail(first)})" if detail and offenders.size > 1 else note
        raise ConfigError(f"{where}: {names}: {problem}{note}")
