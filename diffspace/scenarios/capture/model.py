r"""Manipulator capture of a free-floating rigid target: multibody arm + rigid body + compliant contact.

Seed: Cai et al. (2021), *Dynamic Modeling and Analysis of Impact in Space Operation Tasks*, Aerospace
8:381 (``impact_space_operations.txt``), Section 2 (contact law) and Section 4 / Table 4 (target).

**Arm** (floating base = root link): :math:`H(q)\dot v + b(q, v) = J_c^T f_c + Q_c` (ejection paper eq. 8;
free-flyer ``q``, ``v``), with the rod-tip Jacobian :math:`J_c` (linear rows, world axes, ``dynamics.frame_jacobian``),
the contact force :math:`f_c = F\,n` and the constraint forces :math:`Q_c` of held joints and a restricted
base (masked KKT solve, ``restricted.masked_solve``). One kinematics pass gives ``H``, ``b`` and ``J_c``.

**Target** (one rigid body, mass :math:`m_T`, CoM :math:`c_T` and CoM inertia :math:`I_T` in its own frame):
Newton-Euler with the CoM position :math:`x_T` (world), attitude quaternion (xyzw, body->world), CoM
velocity :math:`v_T` (world) and angular velocity :math:`\omega` (body axes):

.. math:: m_T\dot v_T = -F n, \qquad I_T\dot\omega + \omega\times I_T\omega = R^T\big((c - x_T)\times(-F n)\big),
          \qquad \dot{\mathbf q} = \tfrac12\,\mathbf q\otimes[\omega, 0].

**Contact**: the rod tip is a sphere of radius :math:`r` centred at the tip frame origin :math:`c`. The
target surface is a plane patch or a grapple-shaft cylinder (:class:`~diffspace.contact.Surface`, target frame) with signed
distance :math:`g(s)` and unit outward normal :math:`n_0 = \nabla g` at the sphere centre
:math:`s = R^T(c - o_T)`. Indentation :math:`\delta = r - g(s)`, normal :math:`n = R\,n_0`, and its exact
rate :math:`\dot\delta = -n\cdot(\dot c - v_T - R\omega\times(c - x_T))`. The normal force is the paper's
eq. (1) :math:`F = k\delta^n + \lambda\delta^n\dot\delta` with :math:`\lambda = \chi k / v_0` (eq. 2 for
Zhiying-Qishao; any Hunt-Crossley-family law of :class:`~diffspace.contact.ContactLaw`), clamped at zero.
The force pair acts along one line through :math:`c`, so total linear and angular momentum are conserved.

**Phases** (modes of :func:`~diffspace.integrate.hybrid_solve`, events located by root finds, so all
event times are differentiable): approach (no force; ends when :math:`\delta` rises through 0) ->
loading (ends at a force maximum, :math:`\dot F = 0`) -> unloading (ends when :math:`\delta` falls to 0
or the law's force releases with :math:`\delta > 0` -> separated; or at a force minimum, :math:`\dot F = 0`
again -> loading: a second hump) -> separated (free flight; a new touch starts another contact). The peak
force is the largest force at a loading->unloading event: exact, and so is its gradient (at :math:`\dot F = 0` it does not
depend on the event time; module note on compile time). :math:`\dot F = k\delta^{n-1}[n\dot\delta(1 + \chi\dot\delta/v_0) + \chi\delta\ddot\delta/v_0]`
is exact: :math:`\ddot\delta` combines the tip's classical acceleration (from the arm's spatial acceleration
:math:`J_b\dot v + c_b` of the tip body) with a Jacobian-vector product of the contact-rate formula along the
target's and the tip's derivatives (no second kinematics pass).

Compile time: the held joints are merged into rigid links by default (``Robot.lock``, the same dynamics as
holding them by constraints), the free-flight and release conditions use a placements-only tip position, the
peak and the valley are :func:`~diffspace.integrate.neutral_event` s (the force law is one formula in loading
and unloading and the state is kept, so these events move nothing: their force-rate indicator, which needs
the dynamics, is evaluated but never differentiated, and the gradients stay exact; in unloading the transition
tells a release from a valley by the release condition alone, at the root or within
``integrate.neutral.OTHER_EVENT_AT_ROOT`` of it, so the dynamics are not compiled into it once more), and every
choice that is data (surface kind, air table or space, law, tolerances, approach) shares one compiled program.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float, Int

from ...core import spatial
from ...contact import AbstractContactLaw, Surface
from ...core.dynamics import (
    base_pose,
    bias_from_kinematics,
    configuration_derivative,
    kinematics,
    kinetic_energy,
    mass_matrix_from_kinematics,
    momentum,
)
from ...core.restricted import BaseMotion, masked_solve
from ...core.robot import Robot, joint_transforms
from ...integrate import (EXTREMUM_MARGIN, AbstractHybridSystem, HybridSolution, SolverSettings, hybrid_solve,
                          neutral_event)
from ...integrate.neutral import OTHER_EVENT_AT_ROOT

APPROACH, LOADING, UNLOADING, SEPARATED = 0, 1, 2, 3
PHASE_NAMES = ("approach", "loading", "unloading", "separated")
_RECONTACT_OFFSET = 1e-9  # a new touch is an indentation of 1e-9 d_ref (keeps the condition off zero at release)
_QUAT_GAIN = 10.0


class ContactMode(eqx.Module):
    """Discrete state: ``phase`` and the contact bookkeeping that changes only at events."""

    phase: Int[Array, ""]  # APPROACH, LOADING, UNLOADING or SEPARATED
    impact_speed: Float[Array, ""]  # v0 of the current contact
    first_impact_speed: Float[Array, ""]
    peak_force: Float[Array, ""]  # max over contacts so far
    first_touch: Float[Array, ""]  # time of the first touch
    touch: Float[Array, ""]  # time of the current touch
    duration: Float[Array, ""]  # summed duration of finished contacts
    contacts: Int[Array, ""]  # number of touches

    @classmethod
    def initial(cls) -> "ContactMode":
        z = jnp.zeros(())
        return cls(phase=jnp.asarray(APPROACH), impact_speed=z, first_impact_speed=z, peak_force=z, first_touch=z - 1.0,
                   touch=z, duration=z, contacts=jnp.asarray(0))


class CaptureModel(AbstractHybridSystem):
    """Arm (``robot``, held joints where ``joint_free == 0``, base restricted by ``base_motion``), target
    and contact. ``scales = [d_ref, v_ref]`` normalise the event conditions (no effect on the solution)."""

    robot: Robot
    law: AbstractContactLaw
    base_motion: BaseMotion
    joint_free: Float[Array, " n"]
    target_mass: Float[Array, ""]
    target_com: Float[Array, "3"]
    target_inertia: Float[Array, "3 3"]
    surface: Surface
    tip_radius: Float[Array, ""]
    plane_normal: Float[Array, "3"]  # world; used when ``planar``
    planar: Float[Array, ""]  # 1: air table (target and base restricted to the plane), 0: space
    scales: Float[Array, "2"]
    tip: int = eqx.field(static=True)

    # ------------------------------------------------------------------ arm
    def arm(self, q, v):
        """One kinematics pass: ``H``, ``b``, rod-tip position and velocity (world), its linear Jacobian
        (3, nv, world) and what :meth:`tip_acceleration` needs."""
        robot = self.robot
        kin = kinematics(robot, q, v)
        body = robot.frame_bodies[self.tip]
        rot_b, pos_b = base_pose(q)
        rot = rot_b @ kin.rot[body]
        offset = robot.frame_pos[self.tip]
        tip = pos_b + rot_b @ kin.pos[body] + rot @ offset
        jac_body = kin.jac[body]
        jac = rot @ (jac_body[:3] - spatial.skew(offset) @ jac_body[3:])  # as dynamics.frame_jacobian
        tip_kin = (rot, kin.twist[body], kin.bias_accel[body], jac_body)
        return mass_matrix_from_kinematics(robot, kin), bias_from_kinematics(robot, kin), tip, jac @ v, jac, tip_kin

    def tip_point(self, q):
        """World position of the tip: placements along the tip's ancestor chain only (a small unrolled
        product, cheap to compile; used by the event conditions, whose root finds differentiate it)."""
        robot = self.robot
        chain, body = [], robot.frame_bodies[self.tip]
        while body > 0:
            chain.append(body)
            body = robot.parents[body]
        rots, poss = joint_transforms(robot, q[7:])
        rot, pos = base_pose(q)
        for i in reversed(chain):
            pos, rot = pos + rot @ poss[i], rot @ rots[i]
        return pos + rot @ robot.frame_pos[self.tip]

    def lean_gap(self, y):
        """:meth:`gap` with the tip velocity from a JVP of :meth:`tip_point` (no mass matrix, no Jacobians)."""
        q, v, x, quat, vel, omega, _ = y
        tip, tip_vel = jax.jvp(self.tip_point, (q,), (configuration_derivative(q, v),))
        return self.gap(tip, tip_vel, x, quat, vel, omega)

    def tip_acceleration(self, tip_kin, accel):
        """Classical acceleration (world) of the tip point from the body's spatial acceleration
        ``A = J_b a + c_b``: ``R (a_s + alpha x r + omega x (v_o + omega x r))``."""
        rot, twist, bias, jac_body = tip_kin
        r = self.robot.frame_pos[self.tip]
        spatial_acc = jac_body @ accel + bias
        v_o, omega = twist[:3], twist[3:]
        return rot @ (spatial_acc[:3] + jnp.cross(spatial_acc[3:], r) + jnp.cross(omega, v_o + jnp.cross(omega, r)))

    def constrained_accel(self, h, rhs):
        """Accelerations and constraint forces (base reaction, holding torques): the masked KKT solve."""
        n = self.robot.n_joints
        basis = jax.scipy.linalg.block_diag(self.base_motion.basis, jnp.eye(n))
        mask = jnp.concatenate([self.base_motion.allowed, self.joint_free])
        return masked_solve(h, rhs, basis, mask)

    # ------------------------------------------------------------------ target
    def target_accel(self, quat, omega, force, torque_world):
        """CoM acceleration (world) and angular acceleration (body) under a force and a moment about the CoM."""
        rot = spatial.quat_to_rotation(quat)
        torque = torque_world @ rot  # body frame
        inertia = self.target_inertia
        free_lin = force / self.target_mass
        free_ang = spatial.solve3(inertia, torque - jnp.cross(omega, inertia @ omega))
        # air table: translation in the plane, rotation about its normal only (the table takes the rest)
        normal = self.plane_normal
        axis = normal @ rot
        plane_lin = (force - (force @ normal) * normal) / self.target_mass
        plane_ang = axis * (axis @ torque) / (axis @ inertia @ axis)
        planar = self.planar > 0.5
        return jnp.where(planar, plane_lin, free_lin), jnp.where(planar, plane_ang, free_ang)

    # ------------------------------------------------------------------ contact
    def gap(self, tip, tip_vel, x, quat, vel, omega):
        """``(delta, delta_dot, normal (world), on-surface margin)`` from the tip point and the target state."""
        rot = spatial.quat_to_rotation(quat)
        s = (tip - x) @ rot + self.target_com  # rot^T (tip - x)
        distance, normal0 = self.surface.distance(s)
        normal = rot @ normal0
        rel = tip_vel - vel - jnp.cross(rot @ omega, tip - x)
        return self.tip_radius - distance, -(normal @ rel), normal, self.surface.margin(s)

    def contact(self, y):
        """Dict: ``delta``, ``delta_dot``, ``normal``, ``margin``, ``tip``, ``tip_vel``, ``jac``, ``lever``
        (tip - target CoM) and the arm's ``h``, ``b``, ``tip_kin``."""
        q, v, x, quat, vel, omega, _ = y
        h, b, tip, tip_vel, jac, tip_kin = self.arm(q, v)
        delta, delta_dot, normal, margin = self.gap(tip, tip_vel, x, quat, vel, omega)
        return dict(delta=delta, delta_dot=delta_dot, normal=normal, margin=margin, tip=tip, tip_vel=tip_vel,
                    jac=jac, lever=tip - x, h=h, b=b, tip_kin=tip_kin)

    def force(self, c, mode: ContactMode):
        in_contact = (mode.phase == LOADING) | (mode.phase == UNLOADING)
        f = self.law.force(c["delta"], c["delta_dot"], mode.impact_speed)
        return jnp.where(in_contact, f, 0.0), in_contact

    def dynamics(self, y, mode: ContactMode, c=None):
        """``(dy/dt, contact dict, arm accelerations, constraint forces)``."""
        q, v, x, quat, vel, omega, _ = y
        c = self.contact(y) if c is None else c
        f, in_contact = self.force(c, mode)
        push = f * c["normal"]  # on the arm's tip; the target gets -push on the same line
        accel, constraint = self.constrained_accel(c["h"], c["jac"].T @ push - c["b"])
        lin, ang = self.target_accel(quat, omega, -push, jnp.cross(c["lever"], -push))
        quat_dot = 0.5 * spatial.quat_multiply(quat, jnp.concatenate([omega, jnp.zeros(1)]))
        quat_dot = quat_dot + _QUAT_GAIN * (1.0 - quat @ quat) * quat
        loss_rate = jnp.where(in_contact, (f - self.law.elastic_force(c["delta"])) * c["delta_dot"], 0.0)
        aux = jnp.stack([f, loss_rate])
        return (configuration_derivative(q, v), accel, vel, quat_dot, lin, ang, aux), c, accel, constraint

    def vector_field(self, t, y, mode: ContactMode):
        """``dy/dt`` for ``y = (q, v, x_T, quat_T, v_T, omega_T, [impulse, damping loss])``."""
        return self.dynamics(y, mode)[0]

    def delta_ddot(self, y, mode: ContactMode, c=None):
        """Exact second derivative of the indentation: the tip acceleration from the arm's spatial
        acceleration, the rest by a Jacobian-vector product of :meth:`gap` (no kinematics inside)."""
        q, v, x, quat, vel, omega, _ = y
        dy, c, accel, _ = self.dynamics(y, mode, c)
        tip_acc = self.tip_acceleration(c["tip_kin"], accel)
        primals = (c["tip"], c["tip_vel"], x, quat, vel, omega)
        tangents = (c["tip_vel"], tip_acc, dy[2], dy[3], dy[4], dy[5])
        return jax.jvp(lambda *a: self.gap(*a)[1], primals, tangents)[1]

    def extremum_indicator(self, y, mode: ContactMode):
        r"""Positive until a force peak (loading) or a valley (unloading): the law's dimensionless
        :math:`\pm\dot F` with the exact :meth:`delta_ddot`. Loading ends exactly at the peak (the peak force
        is recorded there); unloading starts ``integrate.EXTREMUM_MARGIN`` away from it."""
        c = self.contact(y)
        rate = self.law.force_rate_indicator(c["delta"], c["delta_dot"], self.delta_ddot(y, mode, c),
                                             self._contact_speed(mode))
        return jnp.where(mode.phase == LOADING, rate, EXTREMUM_MARGIN - rate)

    def conditions(self, t, y, mode: ContactMode, segment_start):
        """One condition, positive while ``mode`` holds (dimensionless): see the module docstring for each phase.
        Free flight
        and the release need only the placements-only gap; a peak or a valley is an
        :func:`~diffspace.integrate.neutral_event` (the same force law on both sides and the state kept: the
        event moves nothing, and the peak force does not depend on its time), so the dynamics in its indicator
        are evaluated but not differentiated."""
        d_ref, _ = jax.lax.stop_gradient(self.scales)
        delta, u, _, _ = self.lean_gap(y)
        x = delta / d_ref

        def free_flight():  # approach: until the touch; separated: until a new approach past the offset
            return jnp.where(mode.phase == APPROACH, -x, _RECONTACT_OFFSET - x)

        def in_contact():  # loading: until a peak; unloading: until the release, or a valley (a second hump)
            released = self._released(delta, u, self._contact_speed(mode), x)
            other = jnp.where(mode.phase == UNLOADING, released, jnp.inf)
            return neutral_event(CaptureModel.extremum_indicator, t, segment_start, self, y, mode, other=other)

        return (jax.lax.cond((mode.phase == LOADING) | (mode.phase == UNLOADING), in_contact, free_flight),)

    def _contact_speed(self, mode: ContactMode):
        """``v0`` of the current contact (the reference speed before the first touch is recorded)."""
        return jnp.where(mode.impact_speed > 0, mode.impact_speed, jax.lax.stop_gradient(self.scales)[1])

    def _released(self, delta, u, v0, x):
        return jnp.minimum(x, self.law.release_indicator(delta, u, v0))

    def transition(self, t, y, mode: ContactMode):
        """Touch -> loading (records ``v0``), peak -> unloading (records the force: the peak is the largest
        over every hump of every contact), in unloading a valley -> loading again, release -> separated (adds
        the contact's duration); a sign change in ``separated`` that is not an approach (the tail of a force
        release with ``delta > 0``) keeps the mode."""
        delta, delta_dot, _, _ = self.lean_gap(y)
        d_ref, _ = jax.lax.stop_gradient(self.scales)
        phase = mode.phase
        touching = ((phase == APPROACH) | (phase == SEPARATED)) & (delta_dot > 0)
        at_peak = phase == LOADING
        # the release fired where its condition is at the root (the rule of neutral_event's derivative), so the
        # valley's indicator, which runs the dynamics, is not evaluated here
        released = (phase == UNLOADING) & (self._released(delta, delta_dot, self._contact_speed(mode),
                                                          delta / d_ref) <= OTHER_EVENT_AT_ROOT)
        at_valley = (phase == UNLOADING) & ~released
        f = self.law.force(delta, delta_dot, mode.impact_speed)
        first = touching & (mode.contacts == 0)
        new_phase = jnp.where(touching | at_valley, LOADING, jnp.where(at_peak, UNLOADING,
                                                                       jnp.where(released, SEPARATED, phase)))
        return y, ContactMode(
            phase=new_phase,
            impact_speed=jnp.where(touching, delta_dot, mode.impact_speed),
            first_impact_speed=jnp.where(first, delta_dot, mode.first_impact_speed),
            peak_force=jnp.where(at_peak, jnp.maximum(mode.peak_force, f), mode.peak_force),
            first_touch=jnp.where(first, t, mode.first_touch),
            touch=jnp.where(touching, t, mode.touch),
            duration=mode.duration + jnp.where(released, t - mode.touch, 0.0),
            contacts=mode.contacts + jnp.where(touching, 1, 0),
        )

    # ------------------------------------------------------------------ invariants
    def momentum(self, y):
        """Total linear momentum and angular momentum about the world origin (arm + target, world)."""
        q, v, x, quat, vel, omega, _ = y
        p_arm, l_arm = momentum(self.robot, q, v)
        rot = spatial.quat_to_rotation(quat)
        p_t = self.target_mass * vel
        return p_arm + p_t, l_arm + jnp.cross(x, p_t) + rot @ (self.target_inertia @ omega)

    def kinetic_energy(self, y):
        q, v, x, quat, vel, omega, _ = y
        target = 0.5 * self.target_mass * vel @ vel + 0.5 * omega @ self.target_inertia @ omega
        return kinetic_energy(self.robot, q, v) + target

    def effective_masses(self, y):
        """Arm and target effective masses along the contact normal at state ``y`` (at rest):
        ``1 / (n^T J Hbar^{-1} J^T n)`` (held joints and base restriction included) and
        ``1 / (n . a_P)`` for a unit force on the target at the contact point."""
        q, v, x, quat, vel, omega, aux = y
        rest = (q, jnp.zeros_like(v), x, quat, jnp.zeros_like(vel), jnp.zeros_like(omega), aux)
        c = self.contact(rest)
        n = c["normal"]
        accel, _ = self.constrained_accel(c["h"], c["jac"].T @ n)
        lin, ang = self.target_accel(quat, jnp.zeros(3), n, jnp.cross(c["lever"], n))
        rot = spatial.quat_to_rotation(quat)
        target_mobility = n @ (lin + jnp.cross(rot @ ang, c["lever"]))
        return 1.0 / (n @ c["jac"] @ accel), 1.0 / target_mobility


def reference_scales(model: CaptureModel, y0, closing_speed):
    """``[d_ref, v_ref]``: undamped Hertz maximum indentation of the equivalent mass at ``closing_speed``."""
    m_arm, m_target = model.effective_masses(y0)
    m = m_arm * m_target / (m_arm + m_target)
    n = model.law.exponent
    d_ref = ((n + 1.0) * m * closing_speed**2 / (2.0 * model.law.stiffness)) ** (1.0 / (n + 1.0))
    return jax.lax.stop_gradient(jnp.stack([d_ref, closing_speed]))


def simulate_capture(model: CaptureModel, y0, t_final, settings: SolverSettings, dtmax=None,
                     adjoint=None) -> HybridSolution:
    """One capture simulation from ``y0`` over ``[0, t_final]`` with the solver ``settings`` (pure; jit it).
    ``model.scales`` must be set.

    ``dtmax`` bounds the step: force-free flight has zero local error, so without a bound the controller
    grows the step tenfold per step and can jump over (or deep into) the target before the touch event is
    checked; a quarter of the approach time keeps the sign change of the indentation inside a step on
    which it is monotonic (contact steps are far smaller anyway)."""
    return hybrid_solve(model, y0, ContactMode.initial(), t_final, settings, dtmax=dtmax, adjoint=adjoint)
