"""The in-rail ejection in MuJoCo: the benchmark's and the tests' independent engine for the separation.

The robot (locked joints merged) sits on a spring-loaded ``slide`` joint written by
:func:`diffspace.io.mjcf.robot_to_mjcf`; :func:`mujoco_separation` rolls batches out with ``mujoco.rollout`` and
locates the separation ``s = compression`` in each.
"""

from __future__ import annotations

import numpy as np

from ...core.robot import Robot
from ...io.mjcf import robot_to_mjcf

#: Friction-loss constraint settings that make MuJoCo's soft dry friction practically rigid: impedance
#: 0.9999 (the default 0.9 lets a "stuck" joint creep at ~(1 - d) of its unconstrained acceleration) and a
#: short reference time constant (clamped to 2 timesteps by MuJoCo). See tests/test_ejection_mujoco.py.
TIGHT_SOLIMPFRICTION = (0.9999, 0.9999, 0.001, 0.5, 2.0)
TIGHT_SOLREF_TIMECONST = 0.002


def ejection_mujoco_model(
    robot: Robot,
    *,
    stiffness: float,
    compression: float,
    rail_axis=(0.0, 0.0, 1.0),
    frictionloss=0.0,
    damping=0.0,
    timestep: float = 1e-4,
    integrator: str = "RK4",
    tight_friction: bool = True,
):
    """``mujoco.MjModel`` of the in-rail ejection: ``robot`` (locked joints merged) on a spring-loaded slide.

    The slide coordinate ``s`` starts at 0 and the spring force is ``stiffness * (compression - s)``;
    ``tight_friction`` applies :data:`TIGHT_SOLIMPFRICTION` and a ``solreffriction`` time constant of
    ``max(TIGHT_SOLREF_TIMECONST, 2 timestep)``; otherwise MuJoCo's defaults are kept.
    """
    import mujoco

    solref = solimp = None
    if tight_friction:
        solref = (max(TIGHT_SOLREF_TIMECONST, 2.0 * timestep), 1.0)
        solimp = TIGHT_SOLIMPFRICTION
    xml = robot_to_mjcf(
        robot, base_joint="slide", slide_axis=rail_axis, spring_stiffness=stiffness, spring_ref=compression,
        joint_frictionloss=frictionloss, joint_damping=damping, timestep=timestep, integrator=integrator,
        solreffriction=solref, solimpfriction=solimp,
    )
    return mujoco.MjModel.from_xml_string(xml)


def joint_addresses(model, joint_names) -> np.ndarray:
    """MuJoCo's ``qpos`` (= ``qvel``, hinges and slides only) address of each joint named in ``joint_names``
    (our declaration order): MuJoCo numbers the joints of a branched tree depth-first, which differs."""
    import mujoco

    return np.array([model.jnt_qposadr[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, name)]
                     for name in joint_names], dtype=int)  # integer also when no joint is free


def mujoco_separation(models, joint_angles, compression: float, t_max: float, data=None,
                      joint_names=None) -> dict:
    """Roll out in-rail ejections in MuJoCo and locate the separation ``s = compression`` in each.

    ``models``: one ``MjModel`` from :func:`ejection_mujoco_model` or a sequence, one per case (e.g.
    different stiffness; same timestep); ``joint_angles``: ``(batch, n)`` start angles (rad), from rest.
    Each case is stepped for ``ceil(t_max / timestep)`` steps by ``mujoco.rollout`` (one thread, or one
    per ``MjData`` when ``data`` is a list) and
    the crossing is interpolated linearly between the two steps around it (the spring force, hence the
    rail acceleration, vanishes there, so the interpolation error is far below the integrator's).
    Returns arrays ``t_s`` (separation time; NaN where not reached), ``v_m_s`` (slide velocity) and
    ``theta_rad`` (``(batch, n)`` joint angles) at separation. ``joint_names``: the robot's joint names in
    its declaration order, the order of ``joint_angles`` and ``theta_rad`` (needed for a branched tree; default:
    MuJoCo's order, the same for a serial chain).
    """
    import mujoco
    from mujoco import rollout

    model_list = list(models) if isinstance(models, (list, tuple)) else [models]
    first = model_list[0]
    angles = np.atleast_2d(np.asarray(joint_angles, dtype=float))
    batch = angles.shape[0]
    if len(model_list) not in (1, batch):
        raise ValueError(f"need 1 or {batch} models, got {len(model_list)}")
    data = mujoco.MjData(first) if data is None else data
    scratch = data[0] if isinstance(data, (list, tuple)) else data
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    size = mujoco.mj_stateSize(first, spec)
    init = np.zeros((batch, size))
    address = np.arange(1, 1 + angles.shape[1]) if joint_names is None else joint_addresses(first, joint_names)
    for b in range(batch):
        mujoco.mj_resetData(first, scratch)
        scratch.qpos[address] = angles[b]
        mujoco.mj_getState(first, scratch, init[b], spec)
    nstep = int(np.ceil(t_max / first.opt.timestep))
    state, _ = rollout.rollout(model_list if len(model_list) == batch else first, data, init, nstep=nstep)
    nq, nv = first.nq, first.nv
    traj = np.concatenate([init[:, None, :], state], axis=1)  # include the start
    t, s = traj[:, :, 0], traj[:, :, 1]
    qpos, qvel = traj[:, :, 1 : 1 + nq], traj[:, :, 1 + nq : 1 + nq + nv]
    crossed = s >= compression
    reached = crossed.any(axis=1)
    j = np.where(reached, np.argmax(crossed, axis=1), 1)
    j = np.maximum(j, 1)
    rows = np.arange(batch)
    s0, s1 = s[rows, j - 1], s[rows, j]
    a = np.clip((compression - s0) / np.where(s1 > s0, s1 - s0, 1.0), 0.0, 1.0)[:, None]
    lerp = lambda x: x[rows, j - 1] + a * (x[rows, j] - x[rows, j - 1])  # noqa: E731
    nan = np.where(reached, 1.0, np.nan)
    return {
        "t_s": lerp(t[:, :, None])[:, 0] * nan,
        "v_m_s": lerp(qvel)[:, 0] * nan,
        "theta_rad": lerp(qpos)[:, address] * nan[:, None],
    }
