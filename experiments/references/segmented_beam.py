r"""Independent reference for the flexible arm: the flexible link as a chain of rigid segments (Pinocchio + SciPy).

Shares nothing with diffspace but the parameters. The planar free-floating arm is a Pinocchio kinematic tree:
prismatic x, prismatic y and revolute z joints carry the base (the base moves in the x-y plane, like the
minimal-coordinate reference of the scenario); revolute joint 1 at the middle of the base's +x face carries
link 1; revolute joint 2 at the end of link 1 carries the clamp ("hub") of link 2. Link 2 is either

* rigid (``segments = 0``): mass ``m``, centre at mid-length, inertia ``J`` (the scenario's rigid arm), or
* a Hencky bar chain (``segments = N``): ``N`` rigid segments of length ``ds = L / N`` and mass ``m / N``
  (thin rods, ``m ds^2 / (12 N)`` about their centres) hinged one after the other, the first at the clamp.
  The hinge springs discretise the bending energy ``1/2 int EI w''^2 ds``: ``EI / ds`` between segments and
  ``2 EI / ds`` at the clamp (half a segment's curvature length). The hub carries the rest of the link's
  rotational inertia, ``J - m L^2 / 12`` (a thin uniform rod has ``m L^2 / 12``), so that the locked chain is the
  rigid link. ``EI`` follows from the first clamped-free frequency of the continuous beam,
  ``omega_1 = (beta_1 L)^2 sqrt(EI / (mu L^4))``, ``1 + cos(beta_1 L) cosh(beta_1 L) = 0``. The hinges have
  stiffness-proportional damping ``c = (2 zeta / omega_1) k``, which gives the first bending mode the damping
  ratio ``zeta`` (and the higher ones ``zeta omega_n / omega_1``; a 1 s torque barely excites them).

Both joints get ``A sin(2 pi t / T)``. The equations ``qdd = ABA(q, qd, tau)`` are integrated by SciPy's Radau
(the chain is stiff) with the exact Jacobian from Pinocchio's ABA derivatives. Reported on a uniform grid: the
end effector (free end of link 2) in the plane, and the elastic tip deflection, the free end's offset normal to
the clamp's axis in the clamp frame.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.integrate import solve_ivp
from scipy.optimize import brentq

import pinocchio as pin

BASE_DOFS = 3  # x, y, yaw
ARM_JOINTS = (3, 4)  # velocity indices of joints 1 and 2


@dataclass(frozen=True)
class ArmParameters:
    """The scenario's parameters (SI): base, links, first bending frequency and damping, joint torque."""

    base_mass: float = 4.0
    base_inertia: float = 0.4
    side: float = 1.0
    link_mass: float = 1.0
    link_inertia: float = 0.1
    link_length: float = 1.0
    frequency: float = 5.0
    damping: float = 0.03
    amplitude: float = 0.5
    period: float = 1.0
    t_final: float = 5.0

    def bending_stiffness(self) -> float:
        """``EI`` of the uniform beam whose first clamped-free frequency is ``frequency``."""
        beta_l = brentq(lambda x: 1.0 + np.cos(x) * np.cosh(x), 1.0, 3.0, xtol=1e-15)
        mu = self.link_mass / self.link_length
        return (2.0 * np.pi * self.frequency) ** 2 * mu * self.link_length**4 / beta_l**4


@dataclass(frozen=True)
class Chain:
    """Pinocchio model of the arm, with the hinge stiffness and damping of its segments (zero when rigid)."""

    model: object
    stiffness: np.ndarray  # per velocity coordinate
    damping: np.ndarray
    hub: int  # joint index of joint 2 (the clamp frame)
    tip: int  # frame index of the free end of link 2


def build_chain(p: ArmParameters, segments: int) -> Chain:
    """The arm with a rigid link 2 (``segments = 0``) or a chain of ``segments`` hinged rigid segments."""
    model = pin.Model()
    z_axis = pin.JointModelRZ()
    parent = model.addJoint(0, pin.JointModelPX(), pin.SE3.Identity(), "base_x")
    parent = model.addJoint(parent, pin.JointModelPY(), pin.SE3.Identity(), "base_y")
    base = model.addJoint(parent, z_axis, pin.SE3.Identity(), "base_yaw")
    model.appendBodyToJoint(base, rod(p.base_mass, 0.0, p.base_inertia), pin.SE3.Identity())
    link1 = model.addJoint(base, z_axis, translation(p.side / 2), "joint1")
    model.appendBodyToJoint(link1, rod(p.link_mass, p.link_length / 2, p.link_inertia), pin.SE3.Identity())
    hub = model.addJoint(link1, z_axis, translation(p.link_length), "joint2")
    length = p.link_length
    if segments == 0:
        model.appendBodyToJoint(hub, rod(p.link_mass, length / 2, p.link_inertia), pin.SE3.Identity())
        tip_parent, tip_offset = hub, length
    else:
        ds, rest = length / segments, p.link_inertia - p.link_mass * length**2 / 12.0
        model.appendBodyToJoint(hub, rod(0.0, 0.0, rest), pin.SE3.Identity())
        parent = hub
        for k in range(segments):
            parent = model.addJoint(parent, z_axis, translation(0.0 if k == 0 else ds), f"hinge{k}")
            mass = p.link_mass / segments
            model.appendBodyToJoint(parent, rod(mass, ds / 2, mass * ds**2 / 12.0), pin.SE3.Identity())
        tip_parent, tip_offset = parent, ds
    tip = model.addFrame(pin.Frame("tip", tip_parent, 0, translation(tip_offset), pin.FrameType.OP_FRAME))
    stiffness, damping = np.zeros(model.nv), np.zeros(model.nv)
    if segments:
        ei, ds = p.bending_stiffness(), length / segments
        hinges = np.full(segments, ei / ds)
        hinges[0] = 2.0 * ei / ds
        stiffness[BASE_DOFS + 2 :] = hinges
        damping[BASE_DOFS + 2 :] = 2.0 * p.damping / (2.0 * np.pi * p.frequency) * hinges
    return Chain(model, stiffness, damping, hub, tip)


def rod(mass: float, centre: float, inertia_z: float):
    """Spatial inertia of a body with its mass centre at ``(centre, 0, 0)`` and inertia ``inertia_z`` about z there
    (the same about x and y: only z matters in the plane)."""
    return pin.Inertia(mass, np.array([centre, 0.0, 0.0]), inertia_z * np.eye(3))


def translation(x: float):
    return pin.SE3(np.eye(3), np.array([x, 0.0, 0.0]))


@dataclass(frozen=True)
class ChainRun:
    """A run on the grid ``ts``: end effector (x, y) and the signed elastic tip deflection (clamp frame)."""

    ts: np.ndarray
    end_effector: np.ndarray
    tip_deflection: np.ndarray
    steps: int


def simulate(p: ArmParameters, segments: int, n_save: int = 501, rtol: float = 1e-10) -> ChainRun:
    """Integrate the arm from rest, stretched along +x, over ``p.t_final``."""
    chain = build_chain(p, segments)
    model, data = chain.model, chain.model.createData()
    nv = model.nv

    def torque(t, q, v):
        tau = -chain.stiffness * q - chain.damping * v
        tau[list(ARM_JOINTS)] += p.amplitude * np.sin(2.0 * np.pi * t / p.period)
        return tau

    def rhs(t, x):
        q, v = x[:nv], x[nv:]
        return np.concatenate([v, pin.aba(model, data, q, v, torque(t, q, v))])

    def jacobian(t, x):
        q, v = x[:nv], x[nv:]
        dq, dv, minv = pin.computeABADerivatives(model, data, q, v, torque(t, q, v))
        minv = np.triu(minv) + np.triu(minv, 1).T
        top = np.hstack([np.zeros((nv, nv)), np.eye(nv)])
        bottom = np.hstack([dq - minv * chain.stiffness, dv - minv * chain.damping])
        return np.vstack([top, bottom])

    ts = np.linspace(0.0, p.t_final, n_save)
    sol = solve_ivp(rhs, (0.0, p.t_final), np.zeros(2 * nv), method="Radau", t_eval=ts, jac=jacobian,
                    rtol=rtol, atol=rtol * 1e-2)
    if not sol.success:
        raise RuntimeError(f"segmented beam ({segments} segments): {sol.message}")
    tips, deflections = [], []
    for q in sol.y[:nv].T:
        pin.framesForwardKinematics(model, data, q)
        tip = data.oMf[chain.tip].translation
        tips.append(tip[:2].copy())
        deflections.append(data.oMi[chain.hub].actInv(tip)[1])
    return ChainRun(ts, np.array(tips), np.array(deflections), int(sol.nfev))


def peaks(p: ArmParameters, segments: int, rigid: ChainRun) -> np.ndarray:
    """``[end-effector difference max, |tip deflection| max]`` of the segmented beam against ``rigid``, m."""
    run = simulate(p, segments)
    difference = np.linalg.norm(run.end_effector - rigid.end_effector, axis=1)
    return np.array([difference.max(), np.abs(run.tip_deflection).max()])


def converged_peaks(p: ArmParameters, segments: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """:func:`peaks` for each segment count (doubling) and their limit, Richardson-extrapolated from the last two
    (the Hencky chain converges like ``1 / N^2``)."""
    rigid = simulate(p, 0)
    values = np.array([peaks(p, n, rigid) for n in segments])
    return values, values[-1] + (values[-1] - values[-2]) / 3.0
