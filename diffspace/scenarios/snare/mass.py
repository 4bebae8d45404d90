"""Striking mass of the snare tests (Cai et al. 2021, Section 4.2): effective mass of the air-table arm at
the capture rod, from the multibody core."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ...core.dynamics import frame_jacobian, frame_pose, mass_matrix
from ...core.restricted import BaseMotion


def arm_effective_mass(robot, joint_angles, free_joints, frame: str = "rod_tip", direction: str = "rod_normal",
                       plane_normal=(0.0, 1.0, 0.0)) -> dict:
    r"""Effective mass of an arm on the air table at ``frame`` along the contact direction, ``1 / (J H^-1 J^T)``.

    ``joint_angles``: all joint angles [rad]; ``free_joints``: 0-based joints left free (frictionless), all
    others locked (:meth:`Robot.lock`). The base moves in the table plane (``BaseMotion.planar``). Directions:
    ``rod_axis`` (the frame's z axis) or ``rod_normal`` (in the table plane, normal to the rod: a side hit of
    the capture rod, as a grapple shaft meets a rope). Returns masses for both directions and all-locked.
    """
    angles = jnp.asarray(joint_angles, float)
    n = angles.shape[0]
    out = {}
    for label, free in (("free", tuple(free_joints)), ("locked", ())):
        locked = [j for j in range(n) if j not in free]
        arm = robot.lock(locked, angles[jnp.asarray(locked)]) if locked else robot
        q = jnp.concatenate([jnp.zeros(3), jnp.array([0.0, 0.0, 0.0, 1.0]), angles[jnp.asarray(free, dtype=int)]])
        motion = BaseMotion.planar(plane_normal)
        basis = jax.scipy.linalg.block_diag(motion.basis, jnp.eye(len(free)))
        keep = [i for i, m in enumerate(list(motion.allowed) + [1.0] * len(free)) if m > 0]
        h = (basis.T @ mass_matrix(arm, q) @ basis)[jnp.ix_(jnp.asarray(keep), jnp.asarray(keep))]
        jac = (frame_jacobian(arm, q, frame, "world")[:3] @ basis)[:, jnp.asarray(keep)]
        mobility = jac @ jnp.linalg.solve(h, jac.T)
        axis = frame_pose(arm, q, frame)[0][:, 2]
        normal = jnp.cross(jnp.asarray(plane_normal, float), axis)
        for name, d in (("rod_axis", axis), ("rod_normal", normal / jnp.linalg.norm(normal))):
            out[f"{label}_{name}"] = float(1.0 / (d @ mobility @ d))
    out["selected"] = out[f"free_{direction}"] if free_joints else out[f"locked_{direction}"]
    return out
