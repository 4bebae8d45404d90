r"""How an adaptive solve runs: one settings Module for every driver and every scenario.

Tolerances are data (traced: a new tolerance reuses the compiled program); the output grid and the budgets are
structure (static: they set array shapes and loop bounds, so a new value compiles a new program). Every driver
([`solve_smooth`][diffspace.integrate.smooth.solve_smooth],
[`hybrid_solve`][diffspace.integrate.hybrid.hybrid_solve], [`simulate`][diffspace.integrate.free.simulate],
[`solve_constrained`][diffspace.integrate.constrained_solve.solve_constrained]) takes one, and every scenario
reads it from its ``[simulation]`` table.

The step-size controller is Diffrax's PID controller on the error estimate of the embedded pair,
``|err_i| <= atol + rtol max(|y_i(t_n)|, |y_i(t_{n+1})|)`` (Hairer, Norsett & Wanner, Sec. II.4).
"""

from __future__ import annotations

import diffrax
import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Float


def _scalar(value) -> Array:
    return jnp.asarray(value, dtype=float)


class SolverSettings(eqx.Module):
    """Tolerances (traced), output grid and budgets (static) of a solve.

    Attributes:
        rtol: Relative tolerance of the step-size controller.
        atol: Absolute tolerance of the step-size controller.
        n_save: Number of equally spaced saved times (both ends included).
        max_steps: Step budget of each solve (of each segment of a hybrid solve); a run that needs more ends with
            status ``SOLVER_FAILURE``.
        max_segments: Bound on a hybrid solve's segments (events + 1); a run that needs more ends with status
            ``EVENT_BUDGET``. Smooth solves ignore it.
    """

    rtol: Float[Array, ""] = eqx.field(default=1e-8, converter=_scalar)
    atol: Float[Array, ""] = eqx.field(default=1e-10, converter=_scalar)
    n_save: int = eqx.field(default=301, static=True)
    max_steps: int = eqx.field(default=100_000, static=True)
    max_segments: int = eqx.field(default=16, static=True)

    def controller(self, dtmax=None) -> diffrax.PIDController:
        """The step-size controller at these tolerances (``dtmax``: largest step, ``None`` for no bound)."""
        return diffrax.PIDController(rtol=self.rtol, atol=self.atol, dtmax=dtmax)
