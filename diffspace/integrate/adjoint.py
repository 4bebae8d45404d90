r"""How the ODE solves are differentiated: reverse mode (default) or forward mode.

Every ``diffrax.diffeqsolve`` of diffspace takes its ``adjoint`` from :func:`solve_adjoint`:

* ``diffrax.RecursiveCheckpointAdjoint()`` (default): reverse mode (``jax.grad``, ``jax.vjp``) with
  checkpointing; forward mode (``jax.jvp``) raises.
* ``diffrax.ForwardMode()`` inside ``with forward_mode():``: forward mode only. For few inputs it is the
  cheaper derivative: on the 2-core machine the gradient of the ejection's headline metric with respect to
  one design variable compiles in 25 s instead of 74 s (flexible arm: 13 s against 71 s; capture 47 s
  against 138 s), because the solve's linearisation is not transposed and no checkpointing loop is built.

The choice is read when a solve is *traced*: a ``jax.jit`` program traced in one mode keeps that mode when it
is called later inside or outside the context. :func:`diffspace.design.design_metrics` enters the context
only while it traces its own Jacobian-vector products.
"""

from __future__ import annotations

import contextlib
import contextvars

import diffrax

_FORWARD = contextvars.ContextVar("diffspace_forward_mode", default=False)


@contextlib.contextmanager
def forward_mode():
    """Solves traced inside this context support ``jax.jvp`` (``diffrax.ForwardMode``), not reverse mode."""
    token = _FORWARD.set(True)
    try:
        yield
    finally:
        _FORWARD.reset(token)


def solve_adjoint() -> diffrax.AbstractAdjoint:
    """The ``adjoint`` every ``diffeqsolve`` of diffspace passes (see the module docstring)."""
    return diffrax.ForwardMode() if _FORWARD.get() else diffrax.RecursiveCheckpointAdjoint()
