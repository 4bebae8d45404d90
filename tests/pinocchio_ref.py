"""Pinocchio models of the same URDF, with joint order and continuous-joint coordinates mapped to ours."""

from __future__ import annotations

import numpy as np
import pytest

pin = pytest.importorskip("pinocchio")


class PinocchioReference:
    def __init__(self, urdf_path, robot):
        self.model = pin.buildModelFromUrdf(str(urdf_path), pin.JointModelFreeFlyer())
        self.model.gravity.linear[:] = 0.0
        self.data = self.model.createData()
        self.robot = robot
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

    def mass_matrix(self, q):
        h = pin.crba(self.model, self.data, self.q(q))
        h = np.triu(h) + np.triu(h, 1).T
        return h[np.ix_(self.v_perm, self.v_perm)]

    def bias(self, q, v):
        return pin.nonLinearEffects(self.model, self.data, self.q(q), self.v(v))[self.v_perm]

    def aba(self, q, v, tau):
        return pin.aba(self.model, self.data, self.q(q), self.v(v), self.v(tau))[self.v_perm]

    def frame(self, q, name):
        pin.framesForwardKinematics(self.model, self.data, self.q(q))
        placement = self.data.oMf[self.model.getFrameId(name)]
        return placement.rotation.copy(), placement.translation.copy()

    def jacobian(self, q, name):
        jac = pin.computeFrameJacobian(
            self.model, self.data, self.q(q), self.model.getFrameId(name), pin.LOCAL_WORLD_ALIGNED
        )
        return jac[:, self.v_perm]

    def com(self, q):
        return pin.centerOfMass(self.model, self.data, self.q(q)).copy()

    def momentum(self, q, v):
        pin.computeCentroidalMomentum(self.model, self.data, self.q(q), self.v(v))
        return self.data.hg.linear.copy(), self.data.hg.angular.copy(), self.data.com[0].copy()
