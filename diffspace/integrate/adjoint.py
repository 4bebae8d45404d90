r"""How the ODE solves are differentiated: reverse mode (default) or forward mode, passed explicitly.

Every solve of diffspace (``hybrid_solve``, ``simulate``,
``solve_constrained`` and the bodies' and scenarios' own ``diffeqsolve`` calls) takes
an ``adjoint=`` argument, as ``diffrax.diffeqsolve`` does; ``None`` means reverse mode. A scenario carries
its choice as data (``AbstractScenario.differentiation``) and passes ``adjoint_for`` of it to its solves:

* ``"reverse"``: ``diffrax.RecursiveCheckpointAdjoint()``: reverse mode (``jax.grad``, ``jax.vjp``) with
  checkpointing; forward mode (``jax.jvp``) raises.
* ``"forward"``: ``diffrax.ForwardMode()``: forward mode only. For few inputs it is the cheaper derivative: on
  the 2-core machine the gradient of the ejection's headline metric with respect to one design variable
  compiles in 25 s instead of 74 s (flexible arm: 13 s against 71 s; capture 47 s against 138 s), because the
  solve's linearisation is not transposed and no checkpointing loop is built.
  ``diffspace.design.design_metrics`` differentiates a copy of the scenario set to ``"forward"``.
"""

from __future__ import annotations

import diffrax

DIFFERENTIATION = ("reverse", "forward")


def adjoint_for(differentiation: str = "reverse") -> diffrax.AbstractAdjoint:
    """The ``adjoint`` of ``diffeqsolve`` for a differentiation mode.

    Args:
        differentiation: ``"reverse"`` or ``"forward"``.

    Returns:
        ``diffrax.RecursiveCheckpointAdjoint()`` (reverse) or ``diffrax.ForwardMode()`` (forward).

    Raises:
        ValueError: Another mode.
    """
    if differentiation not in DIFFERENTIATION:
        raise ValueError(f"differentiation must be one of {DIFFERENTIATION}, got {differentiation!r}")
    return diffrax.ForwardMode() if differentiation == "forward" else diffrax.RecursiveCheckpointAdjoint()


def solve_adjoint(adjoint: diffrax.AbstractAdjoint | None = None) -> diffrax.AbstractAdjoint:
    """The adjoint a solve uses.

    Args:
        adjoint: A Diffrax adjoint, or ``None``.

    Returns:
        ``adjoint``, or reverse mode (``diffrax.RecursiveCheckpointAdjoint()``) when it is ``None`` (the
        default of every solve).
    """
    return diffrax.RecursiveCheckpointAdjoint() if adjoint is None else adjoint
