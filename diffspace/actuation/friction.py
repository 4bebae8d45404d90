r"""Joint friction: hybrid stick-slip (events) and a smooth regularised model.

**Hybrid** (the ejection paper's joint model, section 3): a joint is *stuck* (``slip_dir = 0``) and held by an
exact constraint while the holding torque it must transmit satisfies $|\tau_h| \le \tau_s$ (static
torque). When $|\tau_h|$ reaches $\tau_s$ it breaks loose in the direction
$d = -\mathrm{sign}(\tau_h)$ and while slipping feels Coulomb plus viscous friction

$$
\tau_f = -\tau_c\, d - B\,\dot\theta .
$$

When its rate returns to zero it sticks again if the holding torque is below $\tau_s$, otherwise it
reverses (``d -> -d``). Modes are data (an integer array ``slip_dir`` in {-1, 0, +1}), so one jitted function
serves every mode combination and batches under ``vmap``; transitions are Diffrax events.

**Consistent modes at an event** (`JointFriction.rest_modes`). Several joints at rest at one instant interact:
releasing one changes the others' loads. With $a = a_0 + W f$ the accelerations of the joints at rest under
friction torques $f$ ($W$ the constrained inverse inertia on those joints, positive definite), each joint at
rest either sticks ($a_j = 0$, $|f_j| \le$ its level) or slips against its friction ($f_j = -\text{level}\,
\mathrm{sign}(a_j)$): a box-constrained LCP (Pfeiffer and Glocker's stick-slip LCP), whose solution is unique
for a given level ([`box_lcp`][diffspace.core.box_lcp.box_lcp]). Stiction is preferred: every joint at rest
is first tried at the static level $\tau_s$; those that cannot be held there break loose and feel $\tau_c$,
which may overload others, so the LCP is solved again until no further joint breaks (at most $n$ rounds).
The chosen mode is consistent: held joints need at most $\tau_s$, slipping joints accelerate along their
slip direction.

**Event margins.** Diffrax detects a condition that falls from positive to zero or below, never one that
starts at zero. A stuck joint's mode therefore ends at $|\tau_h| = \tau_s(1 + \text{BREAKAWAY})$ (the
transition, which holds up to $\tau_s$, then always breaks it loose: no stick-break-stick without time
passing), and a slipping joint's at $d\,\dot\theta = -\text{REST\_RATE}$ (a joint that starts slipping
from rest starts its mode at $+\text{REST\_RATE}$; the transition brings the joint to rest by an impulse).

**Smooth**: a regularised Stribeck law with the same parameters,

$$
\tau_f = -\big[\tau_c + (\tau_s - \tau_c)\,e^{-(\dot\theta/v_s)^2}\big]\tanh(\dot\theta/\varepsilon) - B\dot\theta,
\qquad v_s = 10\,\varepsilon,
$$

which converges to the hybrid model as $\varepsilon \to 0$ (sticking becomes creep at a rate
$O(\varepsilon)$, breakaway happens at $\tau_s$, slipping friction tends to $\tau_c$).
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float

from ..core.box_lcp import box_lcp

MODELS = ("hybrid", "smooth", "none", "locked")
STRIBECK_RATIO = 10.0
BREAKAWAY = 1e-8  # relative: a stuck joint breaks loose at tau_s (1 + BREAKAWAY) (module notes)
BREAKAWAY_FLOOR = 1e-12  # N m or N: the margin of a joint without static friction (tau_s = 0)
REST_RATE = 1e-9  # rad/s or m/s: a slipping joint's mode ends when d * rate falls to -REST_RATE (module notes)


class JointFriction(eqx.Module):
    """Per-joint friction parameters (arrays, differentiable) and the model name (static).

    Attributes:
        static_torque: Breakaway torque ``tau_s`` per joint, shape ``(n,)`` [N m].
        coulomb_torque: Sliding (Coulomb) torque ``tau_c`` per joint, shape ``(n,)`` [N m].
        viscous: Viscous coefficient ``B`` per joint, shape ``(n,)`` [N m s/rad].
        smooth_velocity: ``epsilon`` of the smooth model (scalar) [rad/s].
        model: One of ``MODELS``: ``"hybrid"``, ``"smooth"``, ``"none"``, ``"locked"``.
    """

    static_torque: Float[Array, " n"]
    coulomb_torque: Float[Array, " n"]
    viscous: Float[Array, " n"]
    smooth_velocity: Float[Array, ""]  # epsilon of the smooth model [rad/s]
    model: str = eqx.field(static=True, default="hybrid")

    @classmethod
    def uniform(cls, n: int, static, coulomb, viscous, model: str = "hybrid", smooth_velocity=1e-3):
        """The same friction on every joint.

        Args:
            n: Number of joints.
            static: Breakaway torque [N m].
            coulomb: Sliding torque [N m].
            viscous: Viscous coefficient [N m s/rad].
            model: The friction model.
            smooth_velocity: ``epsilon`` of the smooth model [rad/s].

        Raises:
            ValueError: Unknown model.
        """
        if model not in MODELS:
            raise ValueError(f"friction model must be one of {MODELS}, got {model!r}")
        full = lambda x: jnp.broadcast_to(jnp.asarray(x, dtype=float), (n,))  # noqa: E731
        return cls(full(static), full(coulomb), full(viscous), jnp.asarray(smooth_velocity, dtype=float), model)

    @property
    def is_hybrid(self) -> bool:
        """The model has stick-slip events."""
        return self.model == "hybrid"

    def torque(self, rates: Float[Array, " n"], slip_dir: Float[Array, " n"]) -> Float[Array, " n"]:
        """Friction torque on the joints for the current mode (zero on stuck joints: they are constrained).

        Args:
            rates: Joint rates, shape ``(n,)`` [rad/s].
            slip_dir: Per joint: 0 stuck, +-1 slipping in that direction (hybrid model), shape ``(n,)``.

        Returns:
            Friction torques, shape ``(n,)`` [N m].
        """
        if self.model == "hybrid":
            return jnp.where(slip_dir != 0, -self.coulomb_torque * slip_dir - self.viscous * rates, 0.0)
        if self.model == "smooth":
            eps = self.smooth_velocity
            stribeck = jnp.exp(-((rates / (STRIBECK_RATIO * eps)) ** 2))
            level = self.coulomb_torque + (self.static_torque - self.coulomb_torque) * stribeck
            return -level * jnp.tanh(rates / eps) - self.viscous * rates
        return jnp.zeros_like(rates)

    def free_mask(self, slip_dir: Float[Array, " n"]) -> Float[Array, " n"]:
        """1 where the joint moves freely under the dynamics, 0 where it is held by a constraint."""
        if self.model == "hybrid":
            return (slip_dir != 0).astype(float)
        if self.model == "locked":
            return jnp.zeros_like(slip_dir)
        return jnp.ones_like(slip_dir)

    def stick_margin(self, holding_torque, rates, slip_dir) -> Float[Array, " n"]:
        """Per joint, a value that stays positive while its mode holds and crosses zero at its transition
        (module notes: event margins).

        Stuck: $\\tau_s (1 + \\text{BREAKAWAY}) - |\\tau_h|$; slipping in direction d:
        $d\\,\\dot\\theta + \\text{REST\\_RATE}$.
        """
        breakaway = self.static_torque * (1.0 + BREAKAWAY) + BREAKAWAY_FLOOR
        return jnp.where(slip_dir == 0, breakaway - jnp.abs(holding_torque), slip_dir * rates + REST_RATE)

    def rest_modes(self, delassus: Float[Array, "n n"], free_accel: Float[Array, " n"], at_rest: Bool[Array, " n"]):
        """Stick or slip of the joints at rest, chosen consistently (module notes: a box LCP per level, stiction
        preferred).

        Args:
            delassus: ``W``: joint accelerations per unit friction torque on the joints at rest, with those
                joints free and every other constraint of the mode held, shape ``(n, n)``.
            free_accel: ``a_0``: joint accelerations with the joints at rest free and frictionless, shape ``(n,)``.
            at_rest: The joints to decide, shape ``(n,)``; the others are left out of the problem.

        Returns:
            ``(slip_dir, converged)``: 0 (stick) or the slip direction for the joints at rest (0 elsewhere),
            shape ``(n,)``; whether every LCP solve converged.
        """
        both = at_rest[:, None] & at_rest[None, :]
        W = jnp.where(both, delassus, jnp.eye(at_rest.shape[0]))  # joints not at rest: decoupled, f = 0
        a0 = jnp.where(at_rest, free_accel, 0.0)

        def solve(broken):
            level = jnp.where(broken, self.coulomb_torque, self.static_torque)
            return box_lcp(W, a0, -level, level)

        def round_(state):  # one solve (a single one in the program): the joints that slip there break loose
            broken, _, _, converged, _ = state
            solution = solve(broken)
            more = broken | (at_rest & (solution.w != 0.0))
            return more, jnp.any(more != broken), converged, converged & solution.converged, solution

        def breaking(state):  # solve again while joints break; after a failed solve once more, for its modes
            _, changed, converged_before, _, _ = state
            return changed & converged_before

        none = jnp.zeros_like(at_rest)
        start = jax.tree_util.tree_map(lambda a: jnp.zeros(a.shape, a.dtype), jax.eval_shape(solve, none))
        true = jnp.asarray(True)
        _, _, _, converged, final = jax.lax.while_loop(breaking, round_, (none, true, true, true, start))
        slip = jnp.where(at_rest, jnp.sign(final.w), 0.0).astype(int)
        return jnp.where(jnp.isfinite(final.w), slip, 0), converged
