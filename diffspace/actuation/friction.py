r"""Joint friction: hybrid stick-slip (events) and a smooth regularised model.

**Hybrid** (the ejection paper's joint model, section 3): a joint is *stuck* (``slip_dir = 0``) and held by an
exact constraint while the holding torque it must transmit satisfies $|\tau_h| \le \tau_s$ (static
torque). When $|\tau_h|$ reaches $\tau_s$ it breaks loose in the direction
$d = -\mathrm{sign}(\tau_h)$ and while slipping feels Coulomb plus viscous friction

$$
\tau_f = -\tau_c\, d - B\,\dot\theta .
$$

When its rate returns to zero it sticks again if the holding torque is below $\tau_s$, otherwise it
reverses (``d -> -d``). Modes are data (a float array ``slip_dir`` in {-1, 0, +1}), so one jitted function
serves every mode combination and batches under ``vmap``; transitions are Diffrax events.

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
import jax.numpy as jnp
from jaxtyping import Array, Float

MODELS = ("hybrid", "smooth", "none", "locked")
STRIBECK_RATIO = 10.0


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
        """Per joint, a value that stays positive while its mode holds and crosses zero at its transition.

        Stuck: $\\tau_s - |\\tau_h|$; slipping in direction d: $d\\,\\dot\\theta$.
        """
        return jnp.where(slip_dir == 0, self.static_torque - jnp.abs(holding_torque), slip_dir * rates)
