"""Snare-closing analysis: the quasi-static capture zone and closing angle (pure), the differentiable headline
numbers of a solve, and host-side helpers of the report (closing time, contact episodes)."""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Bool, Float

from ...bodies import equilibrium, parabolic_peak
from ...bodies.rope import assemble
from .model import ClosingModel, ClosingSample, ClosingState

ENERGY_TOLERANCE = 1e-4
"""Largest relative energy-balance residual of a run that counts as solved (:func:`energy_balance`)."""
ZONE_GRID = 61  # ring angles of the quasi-static capture zone
ZONE_BISECTIONS = 40


def axis_distance(x: Float[Array, "N1 3"]) -> Float[Array, ""]:
    """Distance [m] from the ring axis (``z``) to the rope's centre line (the polyline through its nodes)."""
    a, d = x[:-1, :2], x[1:, :2] - x[:-1, :2]
    u = jnp.clip(-jnp.sum(a * d, axis=-1) / jnp.sum(d * d, axis=-1), 0.0, 1.0)
    return jnp.min(jnp.linalg.norm(a + u[:, None] * d, axis=-1))


def static_rope(model: ClosingModel, psi, x_guess):
    """Rope 0 in static equilibrium (Eqs. (35)-(36)) at ring angle ``psi`` from interior nodes ``x_guess``:
    ``(interior nodes, capture-zone radius = axis distance - rope radius, converged)``."""
    a, b = model.rings.ends(psi)
    xi, ok = equilibrium(model.rope, x_guess, a, b)
    return xi, axis_distance(assemble(xi, a, b)) - model.rope.radius, ok


class CaptureZone(eqx.Module):
    """Radius [m] of the circle about the axis that the ropes' static shapes leave free, on a grid of ring
    angles ``psi`` [rad]; ``closing_angle`` [rad] where it equals the shaft radius (NaN if it stays wider);
    ``converged``: every static solve."""

    psi: Float[Array, " G"]
    radius: Float[Array, " G"]
    closing_angle: Float[Array, ""]
    converged: Bool[Array, ""]


def capture_zone(model: ClosingModel, x_start: Float[Array, "Nm1 3"]) -> CaptureZone:
    """Quasi-static capture zone from ``psi(0)`` to the drive's final angle (continuation: each Newton solve
    starts from the previous shape), and the closing angle by bisection between the last open and the first
    closed grid angle (every bisection solve starts from the last open shape). The ropes are turned copies of
    rope 0, so rope 0 decides. Pure (a ``lax.scan`` each)."""
    psi = jnp.linspace(model.drive.angle(0.0), model.drive.angle(model.drive.end_time), ZONE_GRID)

    def grid_step(xi, p):
        xn, r, ok = static_rope(model, p, xi)
        return xn, (xn, r, ok)

    _, (shapes, radius, ok) = jax.lax.scan(grid_step, x_start, psi)
    target = model.shaft.radius
    below = radius <= target
    j = jnp.argmax(below)
    start = jnp.maximum(j - 1, 0)

    def bisect(bracket, _):
        lo, hi = bracket
        mid = 0.5 * (lo + hi)
        _, r, ok_mid = static_rope(model, mid, shapes[start])
        return jnp.where(r > target, jnp.stack([mid, hi]), jnp.stack([lo, mid])), ok_mid

    bracket, ok_bisect = jax.lax.scan(bisect, jnp.stack([psi[start], psi[j]]), None, length=ZONE_BISECTIONS)
    closing = jnp.where(j > 0, 0.5 * (bracket[0] + bracket[1]), psi[0])
    return CaptureZone(psi, radius, jnp.where(jnp.any(below), closing, jnp.nan), jnp.all(ok) & jnp.all(ok_bisect))


SURROUND_RAYS = 64  # directions about the ring axis in which the ropes must stand for the shaft to be enclosed


def _nearest_rope(sections_a, sections_d, u) -> Float[Array, ""]:
    """Distance from the ring axis along the unit direction ``u`` to the nearest rope section ``a + s d``,
    ``s`` in ``[0, 1]`` (``inf`` if the ray meets none): ``u t - d s = a`` by Cramer's rule."""
    cross = lambda x, y: x[..., 0] * y[..., 1] - x[..., 1] * y[..., 0]  # noqa: E731
    det = cross(u, sections_d)
    safe = jnp.where(det != 0.0, det, 1.0)
    t, s = cross(sections_a, sections_d) / safe, cross(sections_a, u) / safe
    hits = (det != 0.0) & (s >= 0.0) & (s <= 1.0) & (t > 0.0)
    return jnp.min(jnp.where(hits, t, jnp.inf))


def enclosed(nodes_xy: Float[Array, "R N1 2"], shaft_xy: Float[Array, "2"]) -> Bool[Array, ""]:
    """The shaft's centre lies inside the region the ropes enclose about the ring axis: the ropes stand in every
    direction about the axis (rays in ``SURROUND_RAYS`` directions all meet a rope: no gap to leave by), and
    along the ray through the centre the nearest rope lies beyond it."""
    a, d = nodes_xy[:, :-1].reshape(-1, 2), (nodes_xy[:, 1:] - nodes_xy[:, :-1]).reshape(-1, 2)
    angles = 2.0 * jnp.pi * jnp.arange(SURROUND_RAYS) / SURROUND_RAYS
    around = jax.vmap(lambda u: _nearest_rope(a, d, u))(jnp.stack([jnp.cos(angles), jnp.sin(angles)], -1))
    distance = jnp.linalg.norm(shaft_xy)
    u = jnp.where(distance > 0.0, shaft_xy / jnp.where(distance > 0.0, distance, 1.0), jnp.array([1.0, 0.0]))
    return jnp.all(jnp.isfinite(around)) & (distance < _nearest_rope(a, d, u))


class Headline(eqx.Module):
    """Differentiable headline numbers of one solve: the largest force between one rope and the shaft [N]
    and the largest ``|ring torque|`` [N m] (parabolic refinement over the samples), the shaft axis's offset
    from the ring axis at the end [m]."""

    peak_contact_force: Float[Array, ""]
    peak_ring_torque: Float[Array, ""]
    final_offset: Float[Array, ""]


def energy_balance(samples: ClosingSample, ys: ClosingState) -> tuple[Float[Array, " T"], Float[Array, ""]]:
    """The energy budget ``E - E(0) - W_drive + W_c + D_rope`` [J] at the saved times (zero for the exact
    dynamics, so it measures the solver's error) and its largest magnitude relative to the energy exchanged
    (``max |W_drive|`` or the range of ``E``, whichever is larger). A solved run stays below
    :data:`ENERGY_TOLERANCE` (random closings: at most about 1e-6 at 2e-5 s steps); a run the fixed step could
    not follow (a contact it went wrong on: peaks of 1e4 N where finer steps give 600 N) is off by 3e-3 to 1e-2."""
    energy = samples.energy
    balance = energy - energy[0] - ys.work_drive + ys.work_contact + ys.rope_dissipated
    scale = jnp.maximum(jnp.maximum(jnp.max(jnp.abs(ys.work_drive)), jnp.ptp(energy)), 1e-300)
    return balance, jnp.max(jnp.abs(balance)) / scale


def headline(samples: ClosingSample, ys: ClosingState) -> Headline:
    return Headline(parabolic_peak(jnp.max(samples.rope_force_norm, axis=1)),
                    parabolic_peak(jnp.abs(samples.ring_torque)), jnp.linalg.norm(ys.p[-1, :2]))


def time_of_angle(model: ClosingModel, psi_target: float, ts: np.ndarray, bisections: int = 60) -> float | None:
    """First time in ``ts`` at which the drive reaches ``psi_target`` (bisection between samples; host side)."""
    angle = jax.jit(lambda t: model.drive.angle(t))
    psi = np.asarray(jax.vmap(angle)(jnp.asarray(ts)))
    hit = np.nonzero(psi >= psi_target)[0]
    if not hit.size:
        return None
    if hit[0] == 0:
        return float(ts[0])
    lo, hi = float(ts[hit[0] - 1]), float(ts[hit[0]])
    for _ in range(bisections):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if float(angle(mid)) < psi_target else (lo, mid)
    return 0.5 * (lo + hi)


def contact_episodes(force: np.ndarray) -> np.ndarray:
    """Distinct contact episodes (impacts) per rope: rising edges of ``force > 0`` over the samples ``(T, R)``
    (a contact already present at the first sample counts)."""
    on = np.asarray(force) > 0.0
    return on[0].astype(int) + np.sum(on[1:] & ~on[:-1], axis=0)
