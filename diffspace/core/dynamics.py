r"""Floating-base rigid-body dynamics (Featherstone's spatial algebra, Pinocchio's free-flyer convention).

Configuration ``q = [p (3, world), quat (4, xyzw, base->world), theta (n)]`` and velocity
``v = [v_B (3), omega_B (3), theta_dot (n)]`` with the base twist expressed in the base frame. Spatial
vectors are ``[linear; angular]``. The equations of motion are

$$H(q)\,\dot v + b(q, v) = \tau,$$

with ``H`` from the composite-rigid-body algorithm (CRBA) and ``b`` (Coriolis, centrifugal and optionally
gravity) from the recursive Newton-Euler algorithm (RNEA) [Featherstone 2008, ch. 5-6]; this is the
paper's eq. (8) with ``H`` of eq. (7).

**Kernels.** ``forward_dynamics`` and ``mass_matrix`` take ``kernel="auto"`` (default) or a name:

* ``"aba"``: the O(n) articulated-body algorithm (`diffspace.core.aba`) on the shared base-frame
  kinematics pass (`diffspace.core.tree_pass`); ``"crba"``: ``H`` by the recursive composite-rigid-body
  algorithm on the same pass (`diffspace.core.crba`), and for forward dynamics the RNEA bias and the
  branch-sparse ``L^T D L`` solve; ``"dense"``: ``H = sum_i J_i^T I_i J_i`` from the body Jacobians of
  `kinematics` and a dense Cholesky solve (the original formulation, kept as the reference).
* Rule (``"auto"``): forward dynamics uses ``"aba"`` and the mass matrix ``"crba"`` for every tree and
  batch size. Measured on the 2-core CPU (``diffspace.app.bench.kernels``) for 3-30 joints, chains and
  branched trees, batches 1-16384, the tree-pass kernels were faster than ``"dense"`` everywhere
  (ABA 4-6x, CRBA 3-6x at batch 1024) and ABA faster than CRBA + ``LTDL``; their cost is compile time,
  which grows with the number of bodies because the recursions are unrolled.

All functions are pure. The public ones compile once per robot topology for eager calls
(`diffspace.core.eager.eager_jit`: the robot's arrays are passed as arguments, so a call from Python costs
tens of microseconds) and nest inside an outer ``jit``/``vmap``/``grad`` as that same jit, traced once per
program however many places call them.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from . import spatial
from .aba import articulated_body_algorithm
from .crba import composite_mass_matrix, crba_forward_dynamics
from .eager import eager_jit
from .linalg import spd_solve
from .robot import Robot, joint_transforms, motion_subspaces
from .tree_pass import tree_frames


class Kinematics(eqx.Module):
    r"""One forward pass over the tree, shared by every dynamics quantity (all in body frames).

    ``rot/pos``: body placement in the base frame; ``jac``: body Jacobians ``J_i`` (``v_i = J_i v``, body
    frame); ``twist``: body twists ``v_i``; ``bias_accel``: velocity-product accelerations
    ``c_i = X_i c_p + v_i \times S_i \dot\theta_i`` (plus the gravity field, if any, as a base acceleration).
    """

    rot: Float[Array, "nb 3 3"]
    pos: Float[Array, "nb 3"]
    jac: Float[Array, "nb 6 nv"]
    twist: Float[Array, "nb 6"]
    bias_accel: Float[Array, "nb 6"]


def kinematics(robot: Robot, q: Float[Array, " nq"], v: Float[Array, " nv"] | None = None, gravity=None) -> Kinematics:
    """Body placements, Jacobians, twists and bias accelerations by one ``lax.scan`` over the bodies.

    The recursion runs in topological order (parents first); scanning instead of unrolling keeps the
    compiled program small whatever the number of bodies.

    Args:
        robot: The robot (``nb`` bodies, ``n`` joints; ``nq = 7 + n``, ``nv = 6 + n``).
        q: Configuration ``(nq,)``: base position [m, world], base quaternion (xyzw, base to world), joint
            values [rad or m].
        v: Velocity ``(nv,)``: base twist ``[v_B, omega_B]`` in the base frame [m/s, rad/s], joint rates
            [rad/s or m/s]; ``None``: zero.
        gravity: World gravity vector ``(3,)`` [m/s^2] folded into the bias accelerations; ``None``: none.

    Returns:
        `Kinematics` in body frames, relative to the base frame (not the world): ``rot (nb, 3, 3)``,
            ``pos (nb, 3)`` [m], ``jac (nb, 6, nv)``, ``twist (nb, 6)``, ``bias_accel (nb, 6)``.

    Examples:
        >>> import numpy as np, diffspace
        >>> robot = diffspace.load_robot("configs/robots/generic_arm7.urdf")  # 7 joints on a 40 kg base
        >>> kin = diffspace.kinematics(robot, robot.neutral())
        >>> kin.jac.shape  # 8 bodies (base + 7 links), 6 + 7 velocities
        (8, 6, 13)
        >>> round(float(kin.pos[-1, 2]), 6)  # link 7 above the base origin: the sum of the joint spacings [m]
        1.261
    """
    nb, nv = len(robot.parents), robot.nv
    v = jnp.zeros(nv) if v is None else v
    rots, poss = joint_transforms(robot, q[7:])
    transforms = jax.vmap(spatial.motion_transform)(rots, poss)
    subspaces = motion_subspaces(robot)
    rates = jnp.concatenate([jnp.zeros(1), v[6:]])
    base_accel = jnp.zeros(6)
    if gravity is not None:
        base_accel = jnp.concatenate([-base_pose(q)[0].T @ jnp.asarray(gravity), jnp.zeros(3)])
    init = Kinematics(
        rot=jnp.zeros((nb, 3, 3)).at[0].set(jnp.eye(3)),
        pos=jnp.zeros((nb, 3)),
        jac=jnp.zeros((nb, 6, nv)).at[0, :, :6].set(jnp.eye(6)),
        twist=jnp.zeros((nb, 6)).at[0].set(v[:6]),
        bias_accel=jnp.zeros((nb, 6)).at[0].set(base_accel),
    )

    def step(kin: Kinematics, body):
        i, parent, rot, pos, transform, subspace, rate = body  # body i's own data arrives sliced by the scan
        read = lambda x: _row(x, parent)  # noqa: E731  the parent's entry
        write = lambda x, value: jax.lax.dynamic_update_index_in_dim(x, value, i, 0, allow_negative_indices=False)  # noqa: E731
        joint_twist = subspace * rate
        twist = transform @ read(kin.twist) + joint_twist
        jac = transform @ read(kin.jac)
        jac = jax.lax.dynamic_update_index_in_dim(jac, _row(jac.T, 5 + i) + subspace, 5 + i, 1,
                                                  allow_negative_indices=False)  # + S_i in its own column
        return Kinematics(
            rot=write(kin.rot, read(kin.rot) @ rot),
            pos=write(kin.pos, read(kin.pos) + read(kin.rot) @ pos),
            jac=write(kin.jac, jac),
            twist=write(kin.twist, twist),
            bias_accel=write(kin.bias_accel, transform @ read(kin.bias_accel) + spatial.cross_motion(twist, joint_twist)),
        ), None

    bodies = (jnp.arange(1, nb), jnp.asarray(robot.parents[1:], dtype=int), rots[1:], poss[1:], transforms[1:],
              subspaces[1:], rates[1:])
    kin, _ = jax.lax.scan(step, init, bodies)
    return kin


def _row(x, index):
    """``x[index]`` for an index known to be non-negative (no wrap-around of negative indices traced)."""
    return jax.lax.dynamic_index_in_dim(x, index, keepdims=False, allow_negative_indices=False)


def base_pose(q: Float[Array, " nq"]):
    """World rotation and position of the base."""
    return spatial.quat_to_rotation(q[3:7]), q[:3]


@eager_jit
def body_placements(robot: Robot, q: Float[Array, " nq"]):
    """World placement of every body.

    Args:
        robot: The robot.
        q: Configuration ``(nq,)`` (see `kinematics`).

    Returns:
        ``(rot, pos)``: body-to-world rotations ``(nb, 3, 3)`` and body origins ``(nb, 3)`` [m, world].
    """
    return _world(q, kinematics(robot, q))


def _world(q, kin: Kinematics):
    rot_b, pos_b = base_pose(q)
    return rot_b @ kin.rot, pos_b + kin.pos @ rot_b.T


def _body_inertias(robot: Robot) -> Float[Array, "nb 6 6"]:
    return jax.vmap(spatial.spatial_inertia)(robot.mass, robot.com, robot.inertia)


def mass_matrix_from_kinematics(robot: Robot, kin: Kinematics):
    """``H = sum_i J_i^T I_i J_i`` (the CRBA result, assembled from the body Jacobians)."""
    return jnp.einsum("bki,bkl,blj->ij", kin.jac, _body_inertias(robot), kin.jac)


def bias_from_kinematics(robot: Robot, kin: Kinematics, accel: Float[Array, " nv"] | None = None):
    """``b = sum_i J_i^T (I_i c_i + v_i x* I_i v_i)``: the RNEA backward pass written with the Jacobians.

    With ``accel`` given, the body accelerations ``J_i a + c_i`` replace ``c_i``: the result is then the
    inverse dynamics ``H a + b`` in O(n_b n_v) (no mass matrix formed).
    """
    inertias = _body_inertias(robot)
    body_accel = kin.bias_accel if accel is None else kin.bias_accel + jnp.einsum("bki,i->bk", kin.jac, accel)
    momenta = jnp.einsum("bkl,bl->bk", inertias, kin.twist)
    forces = jnp.einsum("bkl,bl->bk", inertias, body_accel) + jax.vmap(spatial.cross_force)(kin.twist, momenta)
    return jnp.einsum("bki,bk->i", kin.jac, forces)


@eager_jit
def mass_matrix(robot: Robot, q: Float[Array, " nq"], kernel: str = "auto") -> Float[Array, "nv nv"]:
    """Joint-space inertia matrix ``H(q)`` (eq. (7) of the ejection paper), symmetric positive definite.

    Args:
        robot: The robot.
        q: Configuration ``(nq,)`` (see `kinematics`).
        kernel: ``"auto"``/``"crba"`` (recursive CRBA) or ``"dense"`` (``sum J^T I J``); see the module
            docstring.

    Returns:
        ``H`` ``(nv, nv)`` in the velocity coordinates of `kinematics` (base twist in the base frame):
            kinetic energy ``T = v^T H v / 2`` [J]; blocks in kg, kg m and kg m^2.

    Examples:
        >>> import numpy as np, diffspace
        >>> robot = diffspace.load_robot("configs/robots/generic_arm7.urdf")  # 7 joints on a 40 kg base
        >>> H = diffspace.mass_matrix(robot, robot.neutral())
        >>> H.shape
        (13, 13)
        >>> print(np.round(np.diag(H[:3, :3]), 6))  # a translating base carries the total mass [kg]
        [63.1 63.1 63.1]
        >>> bool(np.allclose(H, H.T))
        True
    """
    if _kernel(kernel, ("crba", "dense"), "crba") == "crba":
        return _crba(robot, q)
    return _dense_mass_matrix(robot, q)


def _dense_mass_matrix(robot: Robot, q):
    return mass_matrix_from_kinematics(robot, kinematics(robot, q))


@jax.custom_jvp
def _crba(robot: Robot, q):
    return composite_mass_matrix(robot, *tree_frames(robot, q[7:]))


@_crba.defjvp
def _crba_jvp(primals, tangents):
    """Value from the recursive CRBA, derivative from the compact (scan-based) ``sum J^T I J``: the same
    function, and reverse mode then transposes the small scan instead of the unrolled recursion."""
    return _crba(*primals), jax.jvp(_dense_mass_matrix, primals, tangents)[1]


def _kernel(name: str, known: tuple[str, ...], auto: str) -> str:
    if name == "auto":
        return auto
    if name not in known:
        raise ValueError(f"unknown kernel {name!r}; choose 'auto' or one of {', '.join(known)}")
    return name


@eager_jit
def bias_forces(
    robot: Robot, q: Float[Array, " nq"], v: Float[Array, " nv"], gravity: Float[Array, "3"] | None = None
) -> Float[Array, " nv"]:
    """Coriolis and centrifugal forces ``b(q, v)`` (plus gravity if a world ``gravity`` vector is given), RNEA.

    Args:
        robot: The robot.
        q: Configuration ``(nq,)`` (see `kinematics`).
        v: Velocity ``(nv,)`` (see `kinematics`).
        gravity: World gravity ``(3,)`` [m/s^2]; ``None``: none.

    Returns:
        ``b`` ``(nv,)``: base wrench ``[force, torque]`` in the base frame [N, N m], then joint torques [N m]
            (forces [N] for prismatic joints).
    """
    return bias_from_kinematics(robot, kinematics(robot, q, v, gravity))


@eager_jit
def inverse_dynamics(robot: Robot, q, v, a, gravity=None) -> Float[Array, " nv"]:
    """Generalised forces ``tau = H(q) a + b(q, v)`` (RNEA, written with the body Jacobians).

    Args:
        robot: The robot.
        q: Configuration ``(nq,)`` (see `kinematics`).
        v: Velocity ``(nv,)`` (see `kinematics`).
        a: Acceleration ``(nv,)``: base ``[dv_B/dt, domega_B/dt]`` in the base frame [m/s^2, rad/s^2], joint
            accelerations [rad/s^2 or m/s^2].
        gravity: World gravity ``(3,)`` [m/s^2]; ``None``: none.

    Returns:
        ``tau`` ``(nv,)``: base wrench in the base frame [N, N m], then joint torques [N m] (or forces [N]).

    Examples:
        >>> import numpy as np, diffspace
        >>> robot = diffspace.load_robot("configs/robots/generic_arm7.urdf")  # 7 joints on a 40 kg base
        >>> q, v = robot.neutral(), np.zeros(robot.nv)
        >>> free_fall = np.zeros(robot.nv); free_fall[2] = -9.81  # the base falls, the joints hold still
        >>> tau = diffspace.inverse_dynamics(robot, q, v, free_fall, gravity=np.array([0.0, 0.0, -9.81]))
        >>> bool(np.abs(tau).max() < 1e-9)  # falling freely needs no force
        True
    """
    return bias_from_kinematics(robot, kinematics(robot, q, v, gravity), a)


@eager_jit
def mass_matrix_and_bias(robot: Robot, q, v, gravity=None):
    """``H(q)`` and ``b(q, v)`` from a single kinematics pass.

    Args:
        robot: The robot.
        q: Configuration ``(nq,)`` (see `kinematics`).
        v: Velocity ``(nv,)`` (see `kinematics`).
        gravity: World gravity ``(3,)`` [m/s^2]; ``None``: none.

    Returns:
        ``(H, b)``: ``(nv, nv)`` and ``(nv,)``, as `mass_matrix` and `bias_forces`.
    """
    kin = kinematics(robot, q, v, gravity)
    return mass_matrix_from_kinematics(robot, kin), bias_from_kinematics(robot, kin)


@eager_jit
def forward_dynamics(robot: Robot, q, v, tau, kernel: str = "auto") -> Float[Array, " nv"]:
    """Accelerations ``dv/dt = H^{-1}(tau - b)`` of the free-floating system (no gravity).

    For many states use ``jax.vmap(forward_dynamics, in_axes=(None, 0, 0, 0))``; for a time loop,
    ``jax.lax.scan`` inside one ``jax.jit``.

    Args:
        robot: The robot.
        q: Configuration ``(nq,)`` (see `kinematics`).
        v: Velocity ``(nv,)`` (see `kinematics`).
        tau: Generalised forces ``(nv,)``: base wrench in the base frame [N, N m], joint torques [N m] (forces
            [N] for prismatic joints).
        kernel: ``"auto"``/``"aba"`` (O(n) articulated-body algorithm), ``"crba"`` (CRBA + RNEA + sparse
            ``L^T D L``) or ``"dense"`` (``sum J^T I J`` + Cholesky); see the module docstring.

    Returns:
        ``dv/dt`` ``(nv,)``: base ``[dv_B/dt, domega_B/dt]`` in the base frame [m/s^2, rad/s^2], joint
            accelerations [rad/s^2 or m/s^2].

    Examples:
        >>> import numpy as np, diffspace
        >>> robot = diffspace.load_robot("configs/robots/generic_arm7.urdf")  # 7 joints on a 40 kg base
        >>> q, v = robot.neutral(), np.zeros(robot.nv)
        >>> tau = np.zeros(robot.nv); tau[6] = 1.0  # 1 N m at joint 1
        >>> a = diffspace.forward_dynamics(robot, q, v, tau)
        >>> bool(np.allclose(diffspace.inverse_dynamics(robot, q, v, a), tau))  # the two are inverses
        True
        >>> bool(np.allclose(diffspace.mass_matrix(robot, q) @ a, tau))
        True
    """
    kernel = _kernel(kernel, ("aba", "crba", "dense"), "aba")
    if kernel == "aba":
        return _aba(robot, q, v, tau)
    if kernel == "crba":
        return crba_forward_dynamics(robot, q, v, tau)
    h, b = mass_matrix_and_bias(robot, q, v)
    return spd_solve(h, tau - b)


@jax.custom_jvp
def _aba(robot: Robot, q, v, tau):
    return articulated_body_algorithm(robot, q, v, tau)


@_aba.defjvp
def _aba_jvp(primals, tangents):
    r"""Derivative by implicit differentiation of ``ID(q, v, a) = tau`` (the approach of Pinocchio's ABA
    derivatives): :math:`\dot a = H^{-1}(\dot\tau - \partial_{q,v,\theta} ID\,[\dot q, \dot v, \dot\theta])`
    with the compact scan-based inverse dynamics and :math:`H^{-1}x` = ABA at zero velocity. Reverse mode
    transposes this linear map instead of the unrolled ABA: gradients compile several times faster."""
    robot, q, v, tau = primals
    d_robot, dq, dv, dtau = tangents
    accel = _aba(robot, q, v, tau)
    _, d_id = jax.jvp(
        lambda r, q_, v_: bias_from_kinematics(r, kinematics(r, q_, v_), accel), (robot, q, v), (d_robot, dq, dv)
    )
    return accel, articulated_body_algorithm(robot, q, jnp.zeros_like(v), dtau - d_id)


@eager_jit
def base_momentum(robot: Robot, q, v) -> Float[Array, "6"]:
    """Spatial momentum of the whole system about the base origin, in the base frame: the base rows of ``H v``.

    Returns:
        ``(6,)``: linear [kg m/s] and angular [kg m^2/s] momentum.
    """
    kin = kinematics(robot, q, v)
    momenta = jnp.einsum("bkl,bl->bk", _body_inertias(robot), kin.twist)
    return jnp.einsum("bki,bk->i", kin.jac[:, :, :6], momenta)


@eager_jit
def momentum(robot: Robot, q, v) -> tuple[Float[Array, "3"], Float[Array, "3"]]:
    """Linear momentum and angular momentum about the world origin, both in the world frame.

    Args:
        robot: The robot.
        q: Configuration ``(nq,)`` (see `kinematics`).
        v: Velocity ``(nv,)`` (see `kinematics`).

    Returns:
        ``(p, L)``: linear momentum ``(3,)`` [kg m/s] and angular momentum ``(3,)`` [kg m^2/s], world axes.

    Examples:
        >>> import numpy as np, diffspace
        >>> robot = diffspace.load_robot("configs/robots/generic_arm7.urdf")  # 7 joints on a 40 kg base
        >>> v = np.zeros(robot.nv); v[0] = 0.1  # the whole system translating at 0.1 m/s
        >>> p, L = diffspace.momentum(robot, robot.neutral(), v)
        >>> round(float(p[0]), 6)  # 63.1 kg x 0.1 m/s
        6.31
    """
    rot_b, pos_b = base_pose(q)
    h = spatial.force_to_parent(rot_b, pos_b, base_momentum(robot, q, v))
    return h[:3], h[3:]


@eager_jit
def center_of_mass(robot: Robot, q) -> Float[Array, "3"]:
    """World position of the system's centre of mass.

    Args:
        robot: The robot.
        q: Configuration ``(nq,)`` (see `kinematics`).

    Returns:
        ``(3,)`` [m], world frame.

    Examples:
        >>> import numpy as np, diffspace
        >>> robot = diffspace.load_robot("configs/robots/generic_arm7.urdf")  # 7 joints on a 40 kg base
        >>> q = np.asarray(robot.neutral())
        >>> moved = q.copy(); moved[0] += 1.0  # the base 1 m further along world x
        >>> shift = diffspace.center_of_mass(robot, moved) - diffspace.center_of_mass(robot, q)
        >>> print(np.round(np.asarray(shift), 9))
        [1. 0. 0.]
    """
    rots, poss = body_placements(robot, q)
    points = poss + jnp.einsum("bij,bj->bi", rots, robot.com)
    return robot.mass @ points / robot.total_mass


@eager_jit
def kinetic_energy(robot: Robot, q, v) -> Float[Array, ""]:
    """Kinetic energy ``T = sum_i v_i^T I_i v_i / 2`` of all bodies (equal to ``v^T H(q) v / 2``).

    Args:
        robot: The robot.
        q: Configuration ``(nq,)`` (see `kinematics`).
        v: Velocity ``(nv,)`` (see `kinematics`).

    Returns:
        ``T`` [J], a scalar.

    Examples:
        >>> import numpy as np, diffspace
        >>> robot = diffspace.load_robot("configs/robots/generic_arm7.urdf")  # 7 joints on a 40 kg base
        >>> v = np.zeros(robot.nv); v[0] = 0.1  # the whole system translating at 0.1 m/s
        >>> round(float(diffspace.kinetic_energy(robot, robot.neutral(), v)), 6)  # 63.1 kg x (0.1 m/s)^2 / 2
        0.3155
    """
    kin = kinematics(robot, q, v)
    return 0.5 * jnp.einsum("bk,bkl,bl->", kin.twist, _body_inertias(robot), kin.twist)


def frame_pose(robot: Robot, q, name: str):
    """World rotation and position of a named frame (any link of the description, merged or not).

    Args:
        robot: The robot.
        q: Configuration ``(nq,)`` (see `kinematics`).
        name: A frame of ``robot.frame_names``.

    Returns:
        ``(rot, pos)``: frame-to-world rotation ``(3, 3)`` and origin ``(3,)`` [m, world].
    """
    return _frame_pose(robot, q, jnp.asarray(robot.frame_index(name)))


@eager_jit
def _frame_pose(robot: Robot, q, k):
    rots, poss = body_placements(robot, q)
    body = jnp.asarray(robot.frame_bodies)[k]
    return spatial.compose(rots[body], poss[body], robot.frame_rot[k], robot.frame_pos[k])


def frame_jacobian(robot: Robot, q, name: str, reference: str = "world") -> Float[Array, "6 nv"]:
    """Jacobian of a frame's twist ``[v; omega]`` with respect to ``v``.

    Args:
        robot: The robot.
        q: Configuration ``(nq,)`` (see `kinematics`).
        name: A frame of ``robot.frame_names``.
        reference: ``"world"``: velocity of the frame origin and angular velocity in world axes (Pinocchio's
            LOCAL_WORLD_ALIGNED); ``"local"``: both in the frame's own axes (Pinocchio's LOCAL).

    Returns:
        ``J`` ``(6, nv)``: the frame twist [m/s, rad/s] is ``J @ v``.

    Examples:
        >>> import numpy as np, diffspace
        >>> robot = diffspace.load_robot("configs/robots/generic_arm7.urdf")  # 7 joints on a 40 kg base
        >>> J = diffspace.frame_jacobian(robot, robot.neutral(), "ee")
        >>> J.shape
        (6, 13)
        >>> bool(np.allclose(J[:3, :3], np.eye(3)))  # translating the base moves the end effector alike
        True
    """
    if reference not in ("world", "local"):
        raise ValueError(f"reference must be 'world' or 'local', got {reference!r}")
    return _frame_jacobian(robot, q, jnp.asarray(robot.frame_index(name)), reference == "local")


@eager_jit
def _frame_jacobian(robot: Robot, q, k, local: bool):
    kin = kinematics(robot, q)
    body = jnp.asarray(robot.frame_bodies)[k]
    jac = kin.jac[body]
    lin = jac[:3] - spatial.skew(robot.frame_pos[k]) @ jac[3:]  # velocity of the frame origin, body axes
    rot = robot.frame_rot[k].T if local else base_pose(q)[0] @ kin.rot[body]
    return jnp.concatenate([rot @ lin, rot @ jac[3:]])


def generalized_jacobian(robot: Robot, q, name: str) -> Float[Array, "6 n"]:
    r"""Generalised Jacobian of a free-floating arm [Umetani & Yoshida 1989].

    With zero system momentum the base twist follows the joint rates, :math:`v_b = -H_b^{-1} H_{bm}\dot\theta`,
    so the frame twist (world axes) is :math:`J^* \dot\theta` with :math:`J^* = J_m - J_b H_b^{-1} H_{bm}`.

    Args:
        robot: The robot (``n`` joints).
        q: Configuration ``(nq,)`` (see `kinematics`).
        name: A frame of ``robot.frame_names``.

    Returns:
        ``J*`` ``(6, n)``: the frame twist ``[v; omega]`` [m/s, rad/s], world axes, per joint rate.
    """
    h = mass_matrix(robot, q)
    jac = frame_jacobian(robot, q, name, "world")
    base_from_joints = -jnp.linalg.solve(h[:6, :6], h[:6, 6:])
    return jac[:, 6:] + jac[:, :6] @ base_from_joints


def configuration_derivative(q, v, quat_gain: float = 10.0) -> Float[Array, " nq"]:
    r"""``dq/dt`` for the free-flyer: :math:`\dot p = R v_B`, :math:`\dot{\mathbf q} = \tfrac12 \mathbf q \otimes
    [\omega_B, 0] + k (1 - |\mathbf q|^2)\mathbf q` (the last term pulls the quaternion back to unit norm)."""
    quat = q[3:7]
    rot = spatial.quat_to_rotation(quat)
    omega = jnp.concatenate([v[3:6], jnp.zeros(1)])
    quat_dot = 0.5 * spatial.quat_multiply(quat, omega) + quat_gain * (1.0 - quat @ quat) * quat
    return jnp.concatenate([rot @ v[:3], quat_dot, v[6:]])
