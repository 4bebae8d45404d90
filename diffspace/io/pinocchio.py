"""Pinocchio model of the same URDF, with our joint order and coordinates (for benchmarks and cross-checks).

Pinocchio orders joints depth-first and stores continuous joints as (cos, sin); this maps our ``q``/``v``
(declaration order, one angle per joint) to its vectors. Needs the optional ``pin`` package.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np


class PinocchioModel:
    """``model``/``data`` of a free-flyer Pinocchio model (zero gravity) and our-to-Pinocchio maps."""

    def __init__(self, urdf: Path, robot):
        import pinocchio as pin

        self.pin = pin
        self.model = pin.buildModelFromUrdf(str(urdf), pin.JointModelFreeFlyer())
        self.model.gravity.linear[:] = 0.0
        self.data = self.model.createData()
        ids = [self.model.getJointId(name) for name in robot.joint_names]
        self.v_perm = np.r_[0:6, [self.model.idx_vs[j] for j in ids]].astype(int)
        self.q_slots = [(self.model.idx_qs[j], self.model.nqs[j]) for j in ids]

    def q(self, q):
        out = np.zeros(self.model.nq)
        out[:7] = q[:7]
        for k, (iq, nq) in enumerate(self.q_slots):
            out[iq : iq + nq] = [np.cos(q[7 + k]), np.sin(q[7 + k])] if nq == 2 else [q[7 + k]]
        return out

    def v(self, v):
        out = np.zeros(self.model.nv)
        out[self.v_perm] = v
        return out
