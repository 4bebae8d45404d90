"""Outcome status codes, the two user-facing error types and two helpers that keep their messages short
(the lowest layer: everything may import it).

Every simulated outcome carries an integer ``status`` (a JAX array, so it batches under ``vmap``) with one
of the :class:`Status` codes. Codes 1-9 are *failures*: the numbers of such
a run are not results and every consumer (``run``, ``sweep``, ``optimize``, ``fit``) excludes them and
counts them. The higher codes are *warnings*: the run is valid, but something the user asked to watch for
happened (e.g. the arm was still slipping at the end, a joint crossed its limit).
"""

from __future__ import annotations

import enum

import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Bool, Int


FIRST_WARNING = 10


class Status(enum.IntEnum):
    """Outcome status; ``int(status)`` is what outcomes store."""

    OK = 0
    SOLVER_FAILURE = 1  # the ODE solver stopped: max steps or step-size collapse
    EVENT_BUDGET = 2  # more events than the simulation's max_segments
    NO_EVENT = 3  # an event the result needs (separation, contact, release) did not happen in the horizon
    NON_FINITE = 4  # NaN or inf in the state or a result
    NOT_CONVERGED = 5  # an inner solver (LCP pivoting, Newton, projection) did not converge
    OUT_OF_RANGE = 6  # the motion left the model's range of validity (e.g. the contact left the surface)
    EVENT_MISSED = 7  # a hybrid run ended with a mode condition below zero whose event never fired
    NOT_SETTLED = 10  # warning: valid run that had not settled at the end (e.g. joints still slipping)
    LIMIT_CROSSED = 11  # warning: a joint crossed its limit (joint limits = "flag")
    SINGULAR_POSE = 12  # warning: a controlled arm came near a kinematic singularity (damped inverse active)
    PENETRATION = 13  # warning: a rigid contact penetrated deeper than its tolerance
    BUCKLING_RISK = 14  # warning: a thin-walled part was compressed past its buckling strain

    @property
    def failed(self) -> bool:
        return 0 < self.value < FIRST_WARNING

    @property
    def label(self) -> str:
        return self.name.lower()

    @property
    def description(self) -> str:
        return _DESCRIPTIONS[self]


_DESCRIPTIONS = {
    Status.OK: "ok",
    Status.SOLVER_FAILURE: "the ODE solver failed (max steps reached or step size collapsed)",
    Status.EVENT_BUDGET: "more events than simulation.max_segments allows",
    Status.NO_EVENT: "an event the result needs did not happen within the horizon",
    Status.NON_FINITE: "non-finite numbers in the state or the results",
    Status.NOT_CONVERGED: "an inner solver did not converge",
    Status.OUT_OF_RANGE: "the motion left the model's range of validity",
    Status.EVENT_MISSED: ("an event went undetected: the run ended with one of its mode's end conditions crossed "
                          "(a mode entered with its end condition already met, or a step that skipped a double "
                          "crossing; tighter simulation tolerances may help, otherwise please report the case)"),
    Status.NOT_SETTLED: "the motion had not settled at the end of the horizon",
    Status.LIMIT_CROSSED: "a joint crossed its limit",
    Status.SINGULAR_POSE: "the arm came near a kinematic singularity (the controller's damped inverse was active)",
    Status.PENETRATION: "a contact penetrated deeper than its tolerance",
    Status.BUCKLING_RISK: ("a thin-walled tube was compressed past the strain at which it would buckle (the model "
                           "has no buckling: results beyond it are not those of the real part)"),
}



def failed(status: Int[ArrayLike, "..."]) -> Bool[Array, "..."]:
    """``True`` where a status code is a failure (traceable)."""
    status = jnp.asarray(status)
    return (status > 0) & (status < FIRST_WARNING)


def first_failure(*codes: Int[ArrayLike, "..."]) -> Int[Array, "..."]:
    """Combine status codes in order of importance: the first failure, else the first warning, else OK."""
    result = jnp.asarray(Status.OK.value)
    for code in reversed(codes):  # earlier arguments win among equals
        code = jnp.asarray(code)
        result = jnp.where(failed(code) | (~failed(result) & (code != 0)), code, result)
    return result


def flag(condition: Bool[ArrayLike, "..."], code: Status) -> Int[Array, "..."]:
    """``code`` where ``condition`` holds, else OK."""
    return jnp.where(condition, code.value, Status.OK.value)


def capped(items, limit: int = 5, sep: str = ", ") -> str:
    """At most ``limit`` of ``items`` joined by ``sep``, then "and N more": messages stay short whatever the input."""
    items = list(items)
    head = sep.join(str(item) for item in items[:limit])
    rest = "" if len(items) <= limit else f"{sep if chr(10) in sep else ' '}and {len(items) - limit} more"
    return head + rest


def shown(value, width: int = 60, bare: bool = False) -> str:
    """``repr(value)`` (``bare``: a string as it is) for a message, cut to ``width`` characters: a 25 MB
    attribute must not become the message."""
    try:
        text = value if bare and isinstance(value, str) else repr(value)
    except ValueError:  # an integer beyond Python's 4300-digit conversion limit
        return "<a number too large to print>"
    return text if len(text) <= width else f"{text[:width]}... ({len(text)} characters)"


class ConfigError(ValueError):
    """A user error in a config or input file; the command line prints it in one line per problem, exit 2."""


class SolverFailure(RuntimeError):
    """A simulation that did not produce a result (raised on the host, naming the phase); exit status 3."""


def describe(status: int) -> str:
    """Host-side text of a status code."""
    try:
        return Status(int(status)).description
    except ValueError:
        return f"unknown status {int(status)}"
