"""Pinocchio models of the same URDF, with joint order and continuous-joint coordinates mapped to ours."""

from __future__ import annotations

import numpy as np
import pytest

pin = pytest.importorskip("pinocchio")

from diffspace.io.pinocchio import PinocchioModel  # noqa: E402


class PinocchioReference(PinocchioModel):
    """Adds the quantities the tests compare, in our ordering."""

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
