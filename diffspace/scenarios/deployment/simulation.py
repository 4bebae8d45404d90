r"""One deployment run: the mast (:mod:`.model`) integrated by generalized-alpha (:mod:`diffspace.integrate.
generalized_alpha`) with the co-rotated iteration matrix, and the time series the results need.

Per step it records the drive angle and acceleration, the end module's absolute ``z`` angular velocity and
acceleration, the joint force and drive torque (multipliers), the constraint drift, the drive power
``tau theta_dot`` and the power of the interfaces' internal (elastic + damping) forces ``F . y_dot``; per
frame the state, the kinetic energy ``T`` and the strain energy ``U``. **Energy balance** (exact for the
continuous system, whose only working constraints are the drive rows):

.. math:: T(t) + \underbrace{\int_0^t F\cdot\dot y\,dt}_{U(t) + \int 2D\,dt} - \int_0^t \tau\dot\theta\,dt = 0,

with the work integrals by the trapezoidal rule over the steps. The damping loss is ``int F . y_dot dt - U``;
the residual's largest value over the frames is the ``energy_residual_J`` (time-discretisation and
algorithmic-damping error of the integration).
"""

from __future__ import annotations

import math

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float, Int

from ...integrate.generalized_alpha import (AlphaParameters, alpha_solve, consistent_state, constraint_jacobian,
                                             iteration_matrix)
from ...core.status import Status, first_failure, flag
from ..base import AbstractOutcome
from .model import DriveRotation, Mast, reference_coordinates

NEWTON_TOLERANCE = 1e-5  # Newton error of the accelerations relative to their largest value in the run
# (the time-discretisation error of the outputs is ~1e-3: an iteration that stalls above 1e-5 is broken)
DRIFT_TOLERANCE = 1e-8  # m


class Settings(eqx.Module):
    """Static integration settings: step [s], steps per frame, frames, Newton iterations, ``rho_inf``."""

    step: float = eqx.field(static=True)
    stride: int = eqx.field(static=True)
    n_frames: int = eqx.field(static=True)
    iterations: int = eqx.field(static=True, default=4)
    rho_inf: float = eqx.field(static=True, default=0.5)

    @classmethod
    def for_horizon(cls, horizon: float, step: float, stride: int = 10, **kw) -> "Settings":
        """Frames of ``stride`` steps covering ``horizon`` seconds with steps of at most ``step``."""
        n_frames = math.ceil(horizon / (step * stride))
        return cls(horizon / (n_frames * stride), stride, n_frames, **kw)

    @property
    def horizon(self) -> float:
        return self.step * self.stride * self.n_frames


class Outcome(AbstractOutcome):
    """Time series on the step grid ``t`` (``t[0] = 0``): drive angle [rad], end absolute angular rate
    [rad/s] and acceleration [rad/s^2] about ``z``, drive acceleration [rad/s^2], joint force (world) [N] and
    drive torque [N m], drift [m], cumulative drive work and internal-force work [J], the chord iteration's estimated error of the accelerations
    (relative to their largest value); on the frame grid: times, states ``y``, kinetic and strain
    energy [J]. ``motion_end``: end of the drive motion [s]."""

    t: Float[Array, " S"]
    theta: Float[Array, " S"]
    end_rate: Float[Array, " S"]
    end_acceleration: Float[Array, " S"]
    joint_force: Float[Array, "S 3"]
    drive_torque: Float[Array, " S"]
    drift: Float[Array, " S"]
    theta_acceleration: Float[Array, " S"]
    drive_work: Float[Array, " S"]
    internal_work: Float[Array, " S"]
    newton_error: Float[Array, " S"]
    frame_t: Float[Array, " F"]
    frame_y: Float[Array, "F n"]
    kinetic: Float[Array, " F"]
    strain: Float[Array, " F"]
    peak_strain: Float[Array, ""]  # largest principal strain at a shell face over the run (NaN for beams)
    axial_compression: Float[Array, ""]  # largest axial compression of a shell's mid-surface over the run
    buckling_strain: Float[Array, ""]  # axial strain at which the thin tube buckles (knocked-down classical)
    motion_end: Float[Array, ""]
    status: Int[Array, ""]


def _observe(mast: Mast):
    def observe(state, forces):
        t, y, v = state.t, state.q, state.v
        rate, acc = mast.end_angular(y, v, state.acc)
        force, torque = mast.joint_reactions(t, state.lam)
        theta, theta_rate = mast.drive.state(t)
        return dict(theta=theta, theta_acceleration=mast.drive.acceleration(t), end_rate=rate,
                    end_acceleration=acc, joint_force=force, drive_torque=torque, drift=mast.drift(t, y),
                    drive_power=torque * theta_rate, internal_power=-v @ forces)

    return observe


def _cumulative(power: Float[Array, " S"], h) -> Float[Array, " S"]:
    """Trapezoidal running integral on the uniform grid (first value 0)."""
    return jnp.concatenate([jnp.zeros(1), jnp.cumsum(0.5 * h * (power[1:] + power[:-1]))])


def buckling_strain(mast: Mast) -> Float[Array, ""]:
    r"""Axial strain at which a thin cylinder buckles: the classical
    $\varepsilon_{cl} = t / (R\sqrt{3(1-\nu^2)})$ times the knock-down factor of NASA SP-8007 (1968) for
    imperfect shells, $\gamma = 1 - 0.901(1 - e^{-\phi})$, $\phi = \sqrt{R/t}/16$ (0.77 for the paper's
    interface, $R/t = 21.5$: 2.2 %)."""
    p = mast.params
    radius = 0.5 * (p.inner_diameter + p.thickness)
    knockdown = 1.0 - 0.901 * (1.0 - jnp.exp(-jnp.sqrt(radius / p.thickness) / 16.0))
    return knockdown * p.thickness / (radius * jnp.sqrt(3.0 * (1.0 - p.poisson**2)))


def _peak_strains(mast: Mast, frames_q) -> tuple[Float[Array, ""], Float[Array, ""]]:
    """Largest face strain and axial compression of the shells over the frames (NaN for beam interfaces)."""
    if mast.shell is None:
        return jnp.asarray(jnp.nan), jnp.asarray(jnp.nan)
    peaks = jax.vmap(jax.vmap(mast.shell.peak_strains))(jax.vmap(mast.shell_coordinates)(frames_q))
    return jnp.max(peaks[0]), jnp.max(peaks[1])


def simulate_mast(mast: Mast, settings: Settings) -> Outcome:
    """Integrate the deployment from rest at the undeformed reference (pure; module docstring)."""
    params = AlphaParameters.from_spectral_radius(settings.rho_inf)
    y0 = reference_coordinates(mast)
    state0, forces0 = consistent_state(mast, 0.0, y0, None, params, settings.step)  # from rest
    rotation = DriveRotation(mast.drive)
    # the inverse carries no derivative (generalized_alpha.iteration_matrix): its inputs are formed without one
    arrays, static = eqx.partition(mast, eqx.is_inexact_array)
    fixed = eqx.combine(jax.lax.stop_gradient(arrays), static)

    def refactor(state):  # the tangents where the mast is now (the first step: at rest, undeformed)
        state = jax.lax.stop_gradient(state)
        k, c = fixed.tangent(state.t, state.q, state.v, state.lam)
        return iteration_matrix(fixed.mass, k, c, constraint_jacobian(fixed, state.t, state.q), params,
                                settings.step, rotation, t_ref=state.t)

    observe = _observe(mast)
    sol = alpha_solve(mast, None, params, settings.step, state0, settings.n_frames, settings.stride,
                      settings.iterations, observe, refactor, NEWTON_TOLERANCE)
    first = observe(state0, forces0)
    series = jax.tree.map(lambda a, rest: jnp.concatenate([a[None], rest]), first, sol.observed)
    h = settings.step
    n_steps = settings.n_frames * settings.stride
    frames = sol.frames
    kinetic = jax.vmap(mast.kinetic_energy)(frames.v)
    strain = jax.vmap(mast.strain_energy)(frames.q)
    finite = jnp.all(jnp.isfinite(frames.q)) & jnp.all(jnp.isfinite(series["end_acceleration"]))
    peak_strain, compression = _peak_strains(mast, frames.q)
    critical = buckling_strain(mast)
    status = first_failure(
        flag(~finite, Status.NON_FINITE),
        flag(~(jnp.max(sol.newton_error) <= NEWTON_TOLERANCE * jnp.max(jnp.abs(frames.acc))), Status.NOT_CONVERGED),
        flag(~(jnp.max(series["drift"]) <= DRIFT_TOLERANCE), Status.NOT_CONVERGED),
        flag(compression > critical, Status.BUCKLING_RISK),
    )
    return Outcome(
        t=h * jnp.arange(n_steps + 1), theta=series["theta"], end_rate=series["end_rate"],
        end_acceleration=series["end_acceleration"], joint_force=series["joint_force"],
        drive_torque=series["drive_torque"], drift=series["drift"],
        theta_acceleration=series["theta_acceleration"], drive_work=_cumulative(series["drive_power"], h),
        internal_work=_cumulative(series["internal_power"], h),
        newton_error=jnp.concatenate([jnp.zeros(1), sol.newton_error]) / jnp.max(jnp.abs(frames.acc)),
        frame_t=frames.t, frame_y=frames.q, kinetic=kinetic, strain=strain, peak_strain=peak_strain,
        axial_compression=compression, buckling_strain=critical, motion_end=mast.drive.end_time, status=status,
    )


__all__ = ["DRIFT_TOLERANCE", "NEWTON_TOLERANCE", "Outcome", "Settings", "buckling_strain", "simulate_mast"]
