r"""The ejection paper's semi-analytic recursion (``method = "paper"``): a fast baseline for the full simulation.

Seed: Cai, Wang, Deng, Yang (2023), section 3. Same :class:`~.ejection.EjectionModel` and free-joint
angles as :func:`~.ejection.simulate_ejection`; same result quantities. The inertia matrices come from
:func:`~diffspace.core.dynamics.mass_matrix` and the constrained (Schur-complement) responses from
:func:`~diffspace.core.restricted.masked_solve` (the KKT / Schur machinery of ``restricted_dynamics``); no
second dynamics engine.

Time is cut into segments of at most ``dt`` (paper: 0.02 s). A segment also ends at zero-force
separation or when a slipping joint's rate returns to zero. Each segment is a linear system with frozen
inertia: the current attitude and the set of joints still slipping give, through one masked solve per
unit force, the response operator :math:`Y` (accelerations per generalised force, rail or planar/free
base and stuck joints held). Then

* **Equivalent mass** (eqs. 13-15, 19): :math:`m_{b,j} = 1/(e^T Y_{bb} e)`, i.e. the Schur complement
  :math:`M - h^T H_r^{-1} h` over the slipping joints (total mass when all are stuck).
* **Variable-mass oscillator** (eqs. 20a-20e): :math:`m_{b,j}\ddot z + k z = 0`, :math:`z_0 = -l`,
  advanced segment by segment with :math:`\omega_j = \sqrt{k/m_{b,j}}`; separation (t_r) at :math:`z = 0`
  inside a segment, located in closed form (eq. 20c). Spring force in a segment, ``spring="paper"``
  (default, the paper's eq. 20d): :math:`F = kl(\cos\omega_j t - \Delta\psi_j)`; ``spring="oscillator"``:
  :math:`F = -k z(t)` from eqs. 20a-b (the force of the segment's own oscillator; needed with
  ``backaction``).
* **Joint response** (eqs. 21-30 in the rail, 31-33 in flight): :math:`\ddot\theta + \hat H_\theta^{-1}B
  \dot\theta = \hat H_\theta^{-1}(\hat J_\theta F - \tau_c d)` with :math:`\hat H_\theta^{-1} = Y_{\theta\theta}`,
  :math:`\hat H_\theta^{-1}\hat J_\theta = Y_{\theta b}e`. The impulse response (eqs. 25-27,
  :math:`h = (1 - e^{-\beta t})/\beta`) and the Duhamel integral (eq. 28) are evaluated in closed form
  (eqs. 29-30) for each *mode* of :math:`\hat H_\theta^{-1}B` (see assumption 2). Static/Coulomb/viscous
  friction (eq. 23): a stuck joint breaks loose when its holding torque exceeds :math:`\tau_s`, a slipping
  joint stops when its rate returns to zero (eq. 34 generalised) and sticks again or reverses.
* **Base velocity** (eqs. 35-39): :math:`\Delta v = Y_{bb}e\int F\,dt - Y_{b\theta}(\tau_c d\,\Delta t
  + B\Delta\theta)`, eq. 37 in the rail (:math:`\zeta_b = kl/m_b`), eq. 39 in flight.
* **Stable ejection** (t_s): first instant in flight with every joint stuck. Angular velocity by
  conservation of angular momentum about the CoM from t_r (eqs. 41-42) with the rigid inertia at the
  final attitude; stable velocity by the energy balance eq. 40,
  :math:`v_s = \sqrt{(kl^2 - \omega_s^T I_{all}\omega_s - 2\eta)/M}` with :math:`\eta` the friction loss
  (Coulomb part exact, viscous part by Gauss-Legendre quadrature); the CoM speed from conservation of
  linear momentum is returned too (``stable_velocity_momentum_m_s``).

Options (defaults = the paper): ``coriolis=True`` keeps the velocity terms :math:`b(q, v)` (held
constant over a segment); ``backaction=True`` adds to the oscillator the push of the joint friction (and
velocity terms) on the base, held constant over a segment (:math:`m_{b,j}\ddot z + kz = G_j`). With both
on, the recursion solves the full model's equations up to the frozen inertia and converges to
:func:`~.ejection.simulate_ejection` as ``dt -> 0`` (esd_arm7, dt = 0.005 s: <= 0.02 % in t_r, v_r),
which cross-checks both implementations and attributes the paper method's error to these two terms.

Assumptions where the paper is ambiguous or inconsistent:

1. Velocity terms :math:`\hat c` are ignored (paper, after eq. 23) unless ``coriolis=True``.
2. Eqs. 24-33 are written per joint with scalar :math:`\beta_{\theta k}`; with several slipping joints
   :math:`\hat H_\theta^{-1}B` is a full matrix. We apply eqs. 25-30 to its eigen-coordinates
   (:math:`Y_{\theta\theta} = LL^T`, :math:`L^T B L = U\Lambda U^T`, :math:`\theta = LU\eta`): exact for the
   frozen linear system and identical to the paper's formulas for one slipping joint.
3. The oscillator (eq. 20) ignores the back-action of joint friction on the base (the paper does so
   implicitly; eq. 14's "friction as inertia" :math:`\lambda` is not usable, it is singular as F -> 0)
   while the base velocity (eq. 37) includes it: t_r comes from eq. 20, v(t_r) from eq. 37. This makes
   the method underestimate t_r and v(t_r) when joints slip (``backaction=True`` removes it).
4. Eq. 20c as printed has the wrong sign; we use the first rising root of z(t) in closed form. Eq. 20d's
   :math:`\Delta\psi_j` is read as the offset keeping F continuous at segment starts.
5. In flight the paper freezes :math:`{}^0\bar H` until t_s (eqs. 32-34); we keep recomputing it per
   segment (attitude and slipping set), as in the rail (eq. 39 with m = 0..3 is the same idea). The
   equations are in base axes, where the base attitude does not enter; the attitude is only tracked
   (midpoint rule per segment) to express eq. 42 in the base axes at t_s and report :math:`\omega_s` in
   world axes (exact in plane mode, where the rotation is about one axis).
6. Stick/slip decisions use the hybrid rule of :mod:`diffspace.friction` (the rule of
   ``ejection.settle``) at segment boundaries only; a stuck joint cannot break loose inside a segment.
   Joint stops are searched on a dt/16 grid then bisected (two zero crossings closer than dt/16 are
   missed). ``smooth`` friction is treated as hybrid with the same parameters.
7. The separation velocity is the base velocity along the rail (the paper's monitoring point O); the
   stable velocity is the CoM speed, the stable angular velocity the magnitude of the rigid body's rate
   at t_s (in space mode it is not constant afterwards: torque-free motion about a non-principal axis).

Pure and jit/vmap-able; reverse-mode gradients are exact (joint-stop and separation times are
differentiated by the implicit function theorem), except where two slipping modes share a damping
eigenvalue (e.g. B = 0 with several slipping joints: ``eigh`` is then degenerate).
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Bool, Float, Int

from ...core.dynamics import center_of_mass, mass_matrix, mass_matrix_and_bias, momentum
from ...core.restricted import masked_solve
from ...actuation.friction import JointFriction
from ...core.spatial import safe_norm, so3_exp
from .model import FLIGHT, RAIL, EjectionModel

_RATE_TOL = 1e-8  # rad/s, as ejection.settle
_SEP_TOL = 1e-9  # relative to the compression
_BIG = 1e9
_GRID = 16  # sub-samples per segment when looking for a joint stop
_BISECT = 40  # bracket dt/16 -> 1e-14 dt
_GL_X, _GL_W = np.polynomial.legendre.leggauss(6)


class RecursionState(eqx.Module):
    """The recursion's state at a segment boundary (base axes; rail coordinate ``z = s - l``)."""

    t: Float[Array, ""]
    z: Float[Array, ""]  # oscillator coordinate (travel - compression)
    zd: Float[Array, ""]
    psi: Float[Array, ""]  # eq. 20d's phase offset
    om: Float[Array, ""]  # the last segment's oscillator frequency
    theta: Float[Array, " n"]
    thetad: Float[Array, " n"]
    vb: Float[Array, "6"]  # base twist
    slip: Int[Array, " n"]
    phase: Int[Array, ""]
    loss: Float[Array, ""]  # friction loss so far [J]
    force: Float[Array, ""]  # spring force at the boundary
    n: Int[Array, ""]  # segments done
    m_eq0: Float[Array, ""]  # equivalent mass of the first segment
    done: Bool[Array, ""]  # stable ejection reached
    t_r: Float[Array, ""]
    theta_r: Float[Array, " n"]
    v_r: Float[Array, " nv"]
    t_s: Float[Array, ""]
    rot: Float[Array, "3 3"]  # base attitude (flight)


class PaperResult(eqx.Module):
    """The recursion's results (SI, radians; NaN where undefined). :meth:`summary` names them as the full model's
    summary does."""

    equivalent_mass: Float[Array, ""]
    separated: Bool[Array, ""]
    separation_time: Float[Array, ""]
    separation_velocity: Float[Array, ""]
    joint_change_at_separation: Float[Array, " n"]
    stable: Bool[Array, ""]
    stable_time: Float[Array, ""]
    stable_velocity: Float[Array, ""]  # energy balance, eq. 40
    stable_velocity_momentum: Float[Array, ""]  # conservation of linear momentum
    stable_angular_velocity: Float[Array, "3"]  # world axes [rad/s]
    joint_change_final: Float[Array, " n"]
    friction_loss: Float[Array, ""]
    n_segments: Int[Array, ""]
    negative_kinetic_energy: Bool[Array, ""]  # eq. 40's budget does not close (stable velocity NaN)

    @property
    def tumbling_rate(self) -> Float[Array, ""]:
        """|omega| at the stable time [rad/s] (NaN when not stable; finite gradient at zero)."""
        return safe_norm(self.stable_angular_velocity)

    def summary(self) -> dict:
        """Host side: the keys of the full model's summary (angles in degrees)."""
        deg = np.rad2deg
        scalar = lambda x: None if not np.isfinite(float(x)) else float(x)  # noqa: E731
        return {
            "equivalent_mass_kg": float(self.equivalent_mass), "separated": bool(self.separated),
            "separation_time_s": scalar(self.separation_time),
            "separation_velocity_m_s": scalar(self.separation_velocity),
            "joint_angle_change_at_separation_deg": deg(np.asarray(self.joint_change_at_separation)).tolist(),
            "stable": bool(self.stable), "stable_time_s": scalar(self.stable_time),
            "stable_velocity_m_s": scalar(self.stable_velocity),
            "stable_velocity_momentum_m_s": scalar(self.stable_velocity_momentum),
            "stable_angular_velocity_deg_s": scalar(deg(self.tumbling_rate)),
            "stable_angular_velocity_vector_deg_s": deg(np.asarray(self.stable_angular_velocity)).tolist(),
            "joint_angle_change_final_deg": deg(np.asarray(self.joint_change_final)).tolist(),
            "friction_loss_J": float(self.friction_loss), "n_segments": int(self.n_segments),
            "negative_kinetic_energy": bool(self.negative_kinetic_energy),
        }


def _hybrid(friction: JointFriction) -> tuple[JointFriction, jax.Array, jax.Array]:
    """Friction as the paper models it (hybrid) and the Coulomb / viscous coefficients the recursion uses."""
    if friction.model in ("hybrid", "smooth"):
        fr = JointFriction(friction.static_torque, friction.coulomb_torque, friction.viscous,
                           friction.smooth_velocity, "hybrid")
        return fr, fr.coulomb_torque, fr.viscous
    zero = jnp.zeros_like(friction.coulomb_torque)
    return friction, zero, zero


def _config(model: EjectionModel, travel, theta):
    return model.robot.neutral().at[:3].set(travel * model.rail_axis).at[7:].set(theta)


def _masked(model: EjectionModel, fr: JointFriction, phase, slip):
    """Basis change and free mask of ``restricted.masked_solve``: base restricted by ``phase``, stuck joints held."""
    base = model.base_motion(phase)
    basis = jax.scipy.linalg.block_diag(base.basis, jnp.eye(model.robot.n_joints))
    return basis, jnp.concatenate([base.allowed, fr.free_mask(slip)])


def _response(h, basis, mask):
    """``Y`` with ``a = Y f`` for any generalised force ``f`` (the constrained inverse of eqs. 9-13 / 31)."""
    solve = lambda f: masked_solve(h, f, basis, mask)[0]  # noqa: E731
    return jax.vmap(solve, in_axes=1, out_axes=1)(jnp.eye(h.shape[0]))


def _modal(y_jj, free, damping):
    """Decouple ``theta'' + Y_jj B theta' = g`` (assumption 2): returns ``lam``, ``to_modal``, ``from_modal``."""
    n = free.shape[0]
    q = 0.5 * (y_jj + y_jj.T) + jnp.diag(1.0 - free)  # SPD; identity rows for stuck joints
    chol = jnp.linalg.cholesky(q)
    # stuck joints get distinct dummy damping: their modes are never excited, and eigh stays non-degenerate
    d = damping * free + 1e4 * (1.0 + jnp.arange(n)) * (1.0 - free)
    lam, u = jnp.linalg.eigh(chol.T @ (d[:, None] * chol))
    to_modal = lambda x: u.T @ jax.scipy.linalg.solve_triangular(chol, x, lower=True)  # noqa: E731
    from_modal = lambda eta: chol @ (u @ eta)  # noqa: E731
    return jnp.maximum(lam, 0.0), to_modal, from_modal


def _duhamel(s, lam, om, k0, a, b, u0):
    r"""Modal displacement and rate after ``s`` for :math:`\ddot\eta + \lambda\dot\eta = k_0 + a\cos\omega s
    + b\sin\omega s`, :math:`\eta(0) = 0`, :math:`\dot\eta(0) = u_0` (eqs. 27-30; series for small ``lam s``)."""
    x = lam * s
    small = x < 1e-3
    lam_s = jnp.where(small, 1.0, lam)
    e1 = jnp.where(small, s * (1 - x / 2 + x**2 / 6 - x**3 / 24), -jnp.expm1(-lam_s * s) / lam_s)
    e2 = jnp.where(small, s**2 * (0.5 - x / 6 + x**2 / 24 - x**3 / 120), (s - e1) / lam_s)
    ex, den = jnp.exp(-x), lam**2 + om**2
    c, sn = jnp.cos(om * s), jnp.sin(om * s)
    rate = u0 * ex + k0 * e1 + a * (lam * c + om * sn - lam * ex) / den + b * (lam * sn - om * c + om * ex) / den
    disp = (u0 * e1 + k0 * e2 + a * (lam / om * sn + 1 - c - lam * e1) / den
            + b * (lam / om * (1 - c) - sn + om * e1) / den)
    return disp, rate


def _settle(model, fr, static, h, bias, z, v, phase, slip, force):
    """Separation and stick/slip at a segment start: the rule of ``ejection.settle`` (eq. 23) with the
    segment's mass matrix ``h``, the recursion's own spring force and velocity terms ``bias``."""
    phase = jnp.where((phase == RAIL) & (z >= -_SEP_TOL * model.compression), FLIGHT, phase)
    if not fr.is_hybrid:
        return v, phase, slip
    stopped = (slip != 0) & (slip * v[6:] <= _RATE_TOL)
    slip = jnp.where(stopped, 0, slip)
    v = v.at[6:].set(jnp.where(stopped, 0.0, v[6:]))
    f_base = jnp.concatenate([jnp.where(phase == RAIL, force, 0.0) * model.rail_axis, jnp.zeros(3)])

    def release_one(_, slip):
        tau = jnp.concatenate([f_base, fr.torque(v[6:], slip)])
        _, constraint = masked_solve(h, tau - bias, *_masked(model, fr, phase, slip))
        holding = jax.lax.stop_gradient(constraint[6:])
        excess = jnp.where(slip == 0, jnp.abs(holding) - static * (1 - _SEP_TOL), -jnp.inf)
        worst = jnp.argmax(excess)
        direction = -jnp.sign(holding[worst]).astype(slip.dtype)
        return slip.at[worst].set(jnp.where(excess[worst] > 0, direction, slip[worst]))

    return v, phase, jax.lax.fori_loop(0, model.robot.n_joints, release_one, slip)


def _first_stop(rate_of, slip, dt):
    """Earliest ``s`` in (0, dt] where a slipping joint's rate ``d * theta'`` returns to zero (``_BIG`` if none).

    Grid search then bisection; a final Newton step with frozen slope makes ``s`` differentiable (implicit
    function theorem)."""
    def margin(s):
        return jnp.min(jnp.where(slip != 0, slip * rate_of(s), _BIG))

    grid = dt * jnp.arange(1, _GRID + 1) / _GRID
    crossed = jax.vmap(margin)(grid) <= 0.0
    first = jnp.argmax(crossed)
    lo0, hi0 = jnp.where(first > 0, grid[first - 1], 0.0), grid[first]

    def bisect(_, bounds):
        lo, hi = bounds
        mid = 0.5 * (lo + hi)
        neg = margin(mid) <= 0.0
        return jnp.where(neg, lo, mid), jnp.where(neg, mid, hi)

    _, s0 = jax.lax.fori_loop(0, _BISECT, bisect, (lo0, hi0))
    s0 = jax.lax.stop_gradient(s0)
    slope = jax.lax.stop_gradient(jax.grad(margin)(s0))
    s = s0 - margin(s0) / jnp.where(jnp.abs(slope) > 0, slope, 1.0)
    return jnp.where(jnp.any(crossed), s, _BIG)


def paper_ejection(model: EjectionModel, joint_angles, dt: float = 0.02, max_segments: int = 300,
                   spring: str = "paper", coriolis: bool = False, backaction: bool = False) -> PaperResult:
    """Run the paper's recursion from rest at ``joint_angles`` (free joints of ``model.robot``). Pure; jit it.
    The stable velocity is NaN where eq. 40 leaves less than the rotational energy (not clipped to zero)."""
    if spring not in ("oscillator", "paper"):
        raise ValueError(f"spring must be 'oscillator' or 'paper', got {spring!r}")
    if backaction and spring == "paper":
        raise ValueError("backaction=True needs spring='oscillator' (eq. 20d has no place for the push)")
    robot, k, l, e = model.robot, model.stiffness, model.compression, model.rail_axis
    n = robot.n_joints
    e6 = jnp.concatenate([e, jnp.zeros(3 + n)])  # spring direction as a generalised force
    fr, coulomb, viscous = _hybrid(model.friction)
    static = fr.static_torque
    theta0 = jnp.asarray(joint_angles, dtype=float)
    slip0 = jnp.ones(n, dtype=int) if fr.model == "none" else jnp.zeros(n, dtype=int)

    def segment(c: RecursionState, _):
        q = _config(model, l + c.z, c.theta)
        if coriolis:
            h, bias = mass_matrix_and_bias(robot, q, jnp.concatenate([c.vb, c.thetad]))
        else:
            h, bias = mass_matrix(robot, q), jnp.zeros(robot.nv)
        v, phase, slip = _settle(model, fr, static, h, bias, c.z, jnp.concatenate([c.vb, c.thetad]), c.phase, c.slip,
                                 c.force)
        separates = (c.phase == RAIL) & (phase == FLIGHT)
        stable = (phase == FLIGHT) & jnp.all(slip == 0) if fr.model != "none" else jnp.asarray(False)
        rail = phase == RAIL
        y = _response(h, *_masked(model, fr, phase, slip))
        m_eq = 1.0 / (e6 @ y @ e6)  # eq. 15 / 19 (used in the rail only)
        om = jnp.where(rail, jnp.sqrt(k / jnp.where(rail, m_eq, 1.0)), 1.0)
        t, z, zd = c.t, c.z, c.zd
        # friction (and velocity-term) push on the base, held over the segment (backaction only; assumption 3)
        tau_f0 = -coulomb * slip - viscous * v[6:]
        push = m_eq * (e6 @ y) @ (jnp.concatenate([jnp.zeros(6), tau_f0]) - bias) if backaction else 0.0
        zg = z - push / k  # oscillator about its shifted equilibrium
        if spring == "oscillator":  # F = -k z(s), eqs. 20a-b
            psi, fa, fb, f0 = c.psi, -k * zg, -k * zd / om, -push
        else:  # eq. 20d with t = t_j + s
            psi = c.psi + jnp.cos(om * t) - jnp.cos(c.om * t)
            fa, fb, f0 = k * l * jnp.cos(om * t), -k * l * jnp.sin(om * t), -k * l * psi
        fa, fb, f0 = (jnp.where(rail, x, 0.0) for x in (fa, fb, f0))
        free = fr.free_mask(slip)
        lam, to_modal, from_modal = _modal(y[6:, 6:], free, viscous)
        p = to_modal(y[6:] @ e6)  # zeta_theta / (k l) per mode
        r = to_modal(-y[6:, 6:] @ (coulomb * slip) - y[6:] @ bias)  # -gamma_theta (+ velocity terms)
        u0 = to_modal(v[6:])

        def state(s):
            disp, rate = _duhamel(s, lam, om, p * f0 + r, p * fa, p * fb, u0)
            return from_modal(disp), from_modal(rate)

        # eq. 20c (assumption 4): first rising zero of z = push/k + R cos(om s - phi)
        amp = jnp.hypot(zg, zd / om)
        cos_sep = -push / k / jnp.where(amp > 0, amp, 1.0)
        phase_sep = jnp.mod(jnp.arctan2(zd / om, zg) - jnp.arccos(jnp.clip(cos_sep, -1.0, 1.0)), 2 * jnp.pi)
        s_sep = jnp.where(rail & (jnp.abs(cos_sep) <= 1.0), phase_sep / om, _BIG)
        s_stop = _first_stop(lambda s: state(s)[1], slip, dt) if fr.is_hybrid else _BIG
        s = jnp.minimum(jnp.minimum(dt, s_sep), s_stop)
        d_theta, thetad = state(s)
        # oscillator, eqs. 20a-b; exactly zero at separation
        z_new = jnp.where(rail & (s_sep <= s), 0.0, push / k + zg * jnp.cos(om * s) + zd / om * jnp.sin(om * s))
        zd_new = -zg * om * jnp.sin(om * s) + zd * jnp.cos(om * s)
        impulse = f0 * s + fa / om * jnp.sin(om * s) + fb / om * (1 - jnp.cos(om * s))
        # base velocity, eqs. 37 / 39
        joint_impulse = (coulomb * slip + bias[6:]) * s + viscous * d_theta
        dv = y[:6] @ (e6 * impulse - jnp.concatenate([bias[:6] * s, joint_impulse]))
        # friction loss (eq. 40): Coulomb exact, viscous by Gauss-Legendre quadrature
        nodes = 0.5 * s * (_GL_X + 1.0)
        rates = jax.vmap(lambda x: state(x)[1])(nodes)
        loss = coulomb @ (slip * d_theta) + 0.5 * s * jnp.einsum("i,ij,j,ij->", _GL_W, rates, viscous * free, rates)
        moved = RecursionState(
            t=t + s, z=z_new, zd=jnp.where(rail, zd_new, zd), psi=psi, om=om, theta=c.theta + d_theta,
            thetad=thetad, vb=v[:6] + dv[:6], slip=slip, phase=phase, loss=c.loss + loss,
            force=f0 + fa * jnp.cos(om * s) + fb * jnp.sin(om * s), n=c.n + 1, m_eq0=jnp.where(c.n == 0, m_eq, c.m_eq0),
            done=c.done, t_r=c.t_r, theta_r=c.theta_r, v_r=c.v_r, t_s=c.t_s,
            rot=c.rot @ so3_exp(0.5 * s * (v[3:6] + v[3:6] + dv[3:6])))  # base attitude (flight)
        new = jax.tree_util.tree_map(lambda old, x: jnp.where(stable, old, x), c, moved)  # stable: no more motion
        return RecursionState(
            t=new.t, z=new.z, zd=new.zd, psi=new.psi, om=new.om, theta=new.theta,
            thetad=jnp.where(stable, v[6:], thetad), vb=jnp.where(stable, v[:6], new.vb), slip=slip, phase=phase,
            loss=new.loss, force=new.force, n=new.n, m_eq0=new.m_eq0, done=stable,
            t_r=jnp.where(separates, t, c.t_r), theta_r=jnp.where(separates, c.theta, c.theta_r),
            v_r=jnp.where(separates, v, c.v_r), t_s=jnp.where(stable, t, c.t_s), rot=new.rot), None

    def segment_or_skip(c, _):  # finished runs skip the work (unbatched; under vmap both branches run)
        return jax.lax.cond(c.done, lambda c: (c, None), lambda c: segment(c, None), c)

    zero = jnp.asarray(0.0)
    carry = RecursionState(
        t=zero, z=-l, zd=zero, psi=zero, om=zero, theta=theta0, thetad=jnp.zeros(n), vb=jnp.zeros(6), slip=slip0,
        phase=jnp.asarray(RAIL), loss=zero, force=k * l, n=jnp.asarray(0), m_eq0=zero, done=jnp.asarray(False),
        t_r=jnp.asarray(jnp.nan), theta_r=theta0, v_r=jnp.zeros(robot.nv), t_s=jnp.asarray(jnp.nan), rot=jnp.eye(3))
    c, _ = jax.lax.scan(segment_or_skip, carry, None, length=max_segments)

    # eqs. 41-42: angular momentum about the CoM at t_r (world = base axes: no rotation in the rail), rigid
    # inertia at the final attitude; solved in base axes at t_s (base attitude ``rot``), reported in world axes
    q_r = _config(model, l, c.theta_r)
    mass = robot.total_mass
    p_lin, l_ang = momentum(robot, q_r, c.v_r)
    l_com = l_ang - jnp.cross(center_of_mass(robot, q_r), p_lin)
    q_s = _config(model, 0.0, c.theta)
    com_s = center_of_mass(robot, q_s)
    i_all = mass_matrix(robot, q_s)[3:6, 3:6] - mass * (com_s @ com_s * jnp.eye(3) - jnp.outer(com_s, com_s))
    rot, allowed = model.flight.basis[3:6, 3:6], model.flight.allowed[3:6]
    reduced = allowed[:, None] * (rot.T @ i_all @ rot) * allowed[None, :] + jnp.diag(1.0 - allowed)
    omega_base = rot @ jnp.linalg.solve(reduced, allowed * (rot.T @ c.rot.T @ l_com))
    omega = c.rot @ omega_base
    spring_energy = 0.5 * k * l**2
    kinetic = 2.0 * (spring_energy - c.loss) - omega_base @ i_all @ omega_base  # eq. 40: 2 x translational KE
    negative = kinetic < 0.0  # the recursion's energy budget does not close: no stable velocity from eq. 40
    v_energy = jnp.where(negative, jnp.nan, jnp.sqrt(jnp.where(negative, 1.0, kinetic) / mass))
    separated, stable = c.phase == FLIGHT, c.done
    nan_unless = lambda ok, x: jnp.where(ok, x, jnp.nan)  # noqa: E731
    norm = lambda x: jnp.sqrt(jnp.where(x @ x > 0, x @ x, 1.0)) * (x @ x > 0)  # noqa: E731  (NaN-free grad at 0)
    return PaperResult(
        equivalent_mass=c.m_eq0, separated=separated, separation_time=c.t_r,
        separation_velocity=nan_unless(separated, e @ c.v_r[:3]), joint_change_at_separation=c.theta_r - theta0,
        stable=stable, stable_time=c.t_s, stable_velocity=nan_unless(stable, v_energy),
        stable_velocity_momentum=nan_unless(separated, norm(p_lin) / mass),
        stable_angular_velocity=nan_unless(stable, omega), joint_change_final=c.theta - theta0,
        friction_loss=c.loss, n_segments=c.n, negative_kinetic_energy=negative)
