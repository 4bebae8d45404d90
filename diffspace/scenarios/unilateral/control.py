r"""Inputs of the contact task: tabulated base force/torque and joint torques, plus a task-space controller.

The paper computed its inputs offline by constrained quadratic programming and shows them only as
figures (Figs. 4, 5), so they cannot be reproduced. Here the generalised input ``Q = [F_Bx, F_By, F_Btheta,
tau_1, tau_2, tau_3]`` (paper eq. (6): ``S_B^T F_B + S_J^T tau``; world force at the base centre of mass,
base torque, joint torques) is the sum of

* **profiles** from the config: piecewise-linear in time through knots ``(t_k, Q_k)``, holding the end
  values outside the knots (:class:`InputProfiles`); zero by default;
* the built-in **task-space controller** (:class:`TaskController`), which presses the tip onto the plane
  and slides it along ``+x``. With the tip ``P = (x, y)``, its arm Jacobian ``J_a = dP / d theta_J``
  (``2 x 3``, base treated as fixed), the reference ``x_r(t) = x_P(0) + s(t)`` (``s`` a quintic
  rest-to-rest move of length ``slide`` from ``slide_start`` over ``slide_duration``) and the pressing
  force ramped in by the same quintic shape over ``press_ramp``,

  .. math:: F = \begin{bmatrix} k_t (x_r - x) + d_t (\dot x_r - \dot x) \\ -F_{press}(t) - d_n \dot y
            \end{bmatrix},\qquad \tau = J_a^\top F + N\,(-k_p(\theta_J - \theta_{J0}) - d_p\dot\theta_J),

  ``N`` the null-space projector of the redundant arm (its posture is held without disturbing the tip
  force), and the base is held at its initial pose by a PD law ``F_B = -K_B (q_B - q_B0) - D_B q_B'``
  (world ``x, y`` and the base angle; zero gains leave it free).

**Singularity robustness.** The exact projector ``I - J_a^T (J_a J_a^T)^{-1} J_a`` changes rank where the arm
is stretched (``J_a J_a^T`` singular): near such a pose ``(J_a J_a^T)^{-1}`` is ill-conditioned, the projector
swings by a full rank within a step and the projected posture torque jumps (0.16 -> 83 N m when a commanded
path ran past the reach). The projector is therefore the damped least-squares one (singularity-robust
inverse of Nakamura & Hanafusa, *J. Dyn. Sys. Meas. Control* 108 (1986) 163-171, with their damping
law):

.. math:: N = I - J_a^\top (J_a J_a^\top + k I)^{-1} J_a,\qquad
          k = \begin{cases} k_0 (1 - w / w_0)^2 & w < w_0 \\ 0 & w \ge w_0 \end{cases},\qquad
          w = \sqrt{\det(J_a J_a^\top)},

``w`` the manipulability measure [m^2]: exact away from singular poses (``k = 0``), and on a direction whose
singular value ``sigma`` falls below ``sqrt(k)`` the projector's weight ``sigma^2 / (sigma^2 + k)`` goes
smoothly to zero instead of jumping. ``w < w_0`` is reported (the pose is near a singularity: the tip force
and the posture are no longer decoupled).
"""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Float

from ...actuation import RestToRest
from ...core.linalg import spd_solve
from ..declare import declared

SINGULAR_MANIPULABILITY_M2 = 0.05
SINGULAR_DAMPING_M2 = 1e-3


class InputProfiles(eqx.Module):
    """Piecewise-linear input profiles ``Q(t)`` through knots ``times (K,)``, ``values (K, 6)``."""

    times: Float[Array, " K"]
    values: Float[Array, "K 6"]

    def __call__(self, t) -> Float[Array, "6"]:
        return jnp.stack([jnp.interp(t, self.times, self.values[:, i]) for i in range(6)])


class TaskController(eqx.Module):
    """Press-and-slide task-space controller (see the module text); gains in SI units, each declared with its
    ``[controller]`` config key."""

    stiffness: Float[Array, ""] = declared("controller.stiffness_N_m", 200.0, min=0.0, design=(20.0, 5000.0),
                                           log=True, label="tangential tracking gain")  # k_t
    damping: Float[Array, ""] = declared("controller.damping_N_s_m", 60.0, min=0.0, design=(1.0, 500.0), log=True,
                                         label="tangential damping")  # d_t
    press_force: Float[Array, ""] = declared("controller.press_force_N", 5.0, min=0.0, design=(0.5, 20.0),
                                             label="commanded pressing force")  # F_press
    normal_damping: Float[Array, ""] = declared("controller.normal_damping_N_s_m", 20.0, min=0.0)  # d_n
    slide: RestToRest  # s(t): 0 -> slide length [m]
    press_ramp: Float[Array, ""] = declared("controller.press_ramp_s", 0.5, gt=0.0)
    posture_stiffness: Float[Array, ""] = declared("controller.posture_stiffness_N_m_rad", 50.0, min=0.0)  # k_p
    posture_damping: Float[Array, ""] = declared("controller.posture_damping_N_m_s_rad", 20.0, min=0.0)  # d_p
    base_stiffness: Float[Array, "3"] = declared("controller.base_stiffness", [1000.0] * 3, min=0.0,
                                                 help="[N/m, N/m, N m/rad]")  # K_B
    base_damping: Float[Array, "3"] = declared("controller.base_damping", [2000.0] * 3, min=0.0,
                                               help="[N s/m, N s/m, N m s/rad]")  # D_B
    singular_manipulability: Float[Array, ""] = declared(
        "controller.singular_manipulability_m2", SINGULAR_MANIPULABILITY_M2, min=0.0,
        help="w_0: the null-space projector is damped (and the pose flagged singular) below this manipulability")
    singular_damping: Float[Array, ""] = declared("controller.singular_damping_m2", SINGULAR_DAMPING_M2, min=0.0,
                                                  help="k_0: the damping at w = 0")

    def switched_off(self) -> "TaskController":
        """The same controller with every gain, force and slide zero (``controller.enabled = false``)."""
        gains = lambda c: (c.stiffness, c.damping, c.press_force, c.normal_damping, c.slide.end,  # noqa: E731
                           c.posture_stiffness, c.posture_damping, c.base_stiffness, c.base_damping,
                           c.singular_manipulability, c.singular_damping)
        return eqx.tree_at(gains, self, replace_fn=lambda x: 0.0 * x)

    def pressing(self, t) -> Float[Array, ""]:
        ramp = RestToRest(0.0, 1.0, self.press_ramp)
        return self.press_force * ramp.angle(t)

    def projector_damping(self, manipulability) -> Float[Array, ""]:
        """Nakamura-Hanafusa damping ``k(w)`` [m^2] (module text)."""
        shortfall = jnp.maximum(1.0 - manipulability / self.singular_manipulability, 0.0)
        return self.singular_damping * shortfall**2

    def __call__(self, t, q, u, tip_position, tip_jacobian, reference) -> tuple[Float[Array, "6"], Float[Array, ""]]:
        """``(Q, w)`` at time ``t``: the inputs and the arm's manipulability; ``reference``: the initial state
        ``(q0, tip x0)``."""
        q0, tip_x0 = reference
        offset, rate = self.slide.state(t)
        velocity = tip_jacobian @ u
        force = jnp.stack([
            self.stiffness * (tip_x0 + offset - tip_position[0]) + self.damping * (rate - velocity[0]),
            -self.pressing(t) - self.normal_damping * velocity[1],
        ])
        arm = tip_jacobian[:, 3:]
        gram = arm @ arm.T
        determinant = gram[0, 0] * gram[1, 1] - gram[0, 1] * gram[1, 0]  # 2x2 closed form: no LAPACK call
        manipulability = jnp.sqrt(jnp.maximum(determinant, jnp.finfo(float).tiny))  # finite derivative
        damped = gram + self.projector_damping(manipulability) * jnp.eye(2)  # SPD
        null = jnp.eye(3) - arm.T @ spd_solve(damped, arm)
        posture = -self.posture_stiffness * (q[3:] - q0[3:]) - self.posture_damping * u[3:]
        base = -self.base_stiffness * (q[:3] - q0[:3]) - self.base_damping * u[:3]
        return jnp.concatenate([base, arm.T @ force + null @ posture]), manipulability
