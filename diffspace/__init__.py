"""diffspace: differentiable space-mechanism dynamics in JAX.

**Public API.** The names in ``diffspace.__all__`` are the documented, stable interface: the rigid-body
dynamics functions (`diffspace.core.dynamics`: ``kinematics``, ``mass_matrix``, ``forward_dynamics``,
``inverse_dynamics``, ``center_of_mass``, ``momentum``, ...), the robot model (``Robot``, ``LinkTree``,
``build_robot``, ``load_robot``, ``compile_robot``), the joint drive laws (``Drive``, ``RestToRest``,
``Tabulated``), scenarios (``load_scenario``; a scenario's ``simulate``, ``metrics``, ``with_design``,
``design_space`` and ``summary`` are its protocol, `diffspace.scenarios.AbstractScenario`), the warm
start (``enable_cache``; ``simulate``, ``metrics`` and ``metric_gradient``, whose traced programs a later session
reuses) and the outcome codes and errors (``Status``, ``ConfigError``, ``SolverFailure``).
The documented modules they come from (``diffspace.core.dynamics``, ``diffspace.scenarios``, ...) keep their
documented names too. Everything else (names starting with ``_``, modules and functions the documentation does
not describe) is internal and may change without notice. ``import diffspace`` loads only the dynamics core;
``load_scenario``, ``simulate``, ``metrics``, ``metric_gradient`` and ``enable_cache`` import the scenarios, the
design layer and the cache machinery on first call.

**Units.** Inside diffspace every quantity is SI (m, kg, s, rad). Configs give revolute joint values in degrees
and prismatic ones in metres (keys say their unit); `load_scenario` converts them.

float64 is enabled at import (``jax_enable_x64``): the physics checks need 1e-9 agreement. ``import diffspace``
leaves ``XLA_FLAGS`` and every other XLA setting of the process as they are (the ``diffspace`` command sets its
own, `diffspace.app.xla_flags`). One import-time default (unless the user set it, or ``DIFFSPACE_XLA_DEFAULTS=0``):
``EQX_ON_ERROR=nan``, so Equinox's runtime checks inside Diffrax / Optimistix / Lineax return NaN instead of
raising through a host callback; a program with a host callback is never written to JAX's persistent compilation
cache, and diffspace reports failures as statuses anyway (a NaN outcome is ``non_finite``). The command line turns
on the persistent compilation cache; a Python program opts in with `enable_cache`.
"""

import os

if os.environ.get("DIFFSPACE_XLA_DEFAULTS", "1") != "0":
    os.environ.setdefault("EQX_ON_ERROR", "nan")  # before Equinox is imported: it reads the variable once

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)

from .core.dynamics import (  # noqa: E402
    base_momentum,
    bias_forces,
    bias_from_kinematics,
    body_placements,
    center_of_mass,
    configuration_derivative,
    forward_dynamics,
    frame_jacobian,
    frame_pose,
    generalized_jacobian,
    inverse_dynamics,
    kinematics,
    kinetic_energy,
    mass_matrix,
    mass_matrix_and_bias,
    mass_matrix_from_kinematics,
    momentum,
)
from .actuation.drive import Drive, RestToRest, Tabulated  # noqa: E402
from .io import load_robot  # noqa: E402
from .core.compiled import CompiledRobot, compile_robot  # noqa: E402
from .core.robot import LinkTree, Robot, build_robot  # noqa: E402
from .core.status import ConfigError, SolverFailure, Status  # noqa: E402


def load_scenario(config, overrides=()):
    """Build the scenario a config describes: a TOML file path or a config dict, plus ``--set`` overrides.

    Args:
        config: Path of a TOML config (e.g. ``"configs/ejection_plane.toml"``; relative paths inside it resolve
            against its folder) or a dict with the same tables (relative paths resolve against the current
            directory).
        overrides: ``"section.key=value"`` strings, as the command line's ``--set`` (values in TOML syntax, config
            units).

    Returns:
        The scenario, an `diffspace.scenarios.AbstractScenario`: ``scenario.simulate(scenario.params)``
            runs it; ``metrics``, ``with_design`` and ``design_space`` serve design work.

    Raises:
        ConfigError: Bad input, one line per problem.

    Examples:
        >>> import diffspace
        >>> scenario = diffspace.load_scenario("configs/free_floating.toml", ["simulation.t_final_s=1.0"])
        >>> scenario.name, float(scenario.t_final)
        ('free_floating', 1.0)
    """
    from .scenarios import load_scenario as load

    return load(config, overrides)


def simulate(scenario, design=None):
    """One simulation of a scenario with design keys replaced; with `enable_cache` on, a later session reuses
    its traced and compiled program.

    Args:
        scenario: A scenario from `load_scenario`.
        design: ``{config key: value}`` in config units (revolute joints in degrees); ``None``: the config's
            values.

    Returns:
        The scenario's outcome Module (read its ``status`` first; ``scenario.summary(outcome)`` gives the
            named scalars).
    """
    from .design.library import simulate as run

    return run(scenario, design)


def metrics(scenario, design=None):
    """A scenario's design metrics at a design, to build the user's own ``jax.grad`` / ``jax.jit`` /
    ``jax.vmap`` on; with `enable_cache` on, a later session reuses its traced programs, so
    ``jax.jit(jax.grad(f))`` of ``f`` built on it starts warm. A gradient with respect to up to four design
    numbers takes the Jacobian's columns by forward mode inside the rule (faster to trace and compile than
    reverse mode through the solves), more by reverse mode. The user's own transformation must be ``grad`` /
    ``vjp`` (for ``jax.jvp`` or second derivatives call ``scenario.metrics`` itself).

    Args:
        scenario: A scenario from `load_scenario`.
        design: ``{config key: value}`` in config units (values may be traced); ``None``: the config's values.

    Returns:
        ``{metric name: value}`` (SI, unit-suffixed), with ``"status"`` (a `Status` code).
    """
    from .design.library import metrics as evaluate

    return evaluate(scenario, design)


def metric_gradient(scenario, metric, design):
    """A design metric and its gradient with respect to design keys (forward mode through the whole simulation
    for up to four keys, else reverse mode); with `enable_cache` on, a later session reuses its traced and
    compiled program.

    Args:
        scenario: A scenario from `load_scenario`.
        metric: One of ``scenario.metrics_names()``, e.g. ``"stable_velocity_m_s"``.
        design: ``{config key: value}`` in config units: the point and the keys of the gradient.

    Returns:
        A Module with ``value``, ``gradient`` (``{key: d value / d key}``) and the run's ``status`` (use the
            numbers only where ``diffspace.Status(int(status)).failed`` is false).
    """
    from .design.library import metric_gradient as gradient

    return gradient(scenario, metric, design)


def enable_cache(path=None):
    """Turn on JAX's persistent compilation cache for this process, in the command line's per-user directory.

    A later process that compiles the same programs (same diffspace and library versions, same static
    configuration and array shapes) reads them from the cache instead of compiling them. Call it once, before
    the first compile; every program is stored, however small (``DIFFSPACE_CACHE_MIN_COMPILE_S`` seconds sets a
    threshold).

    Args:
        path: The cache directory; ``None``: ``$DIFFSPACE_CACHE_DIR``, else ``$XDG_CACHE_HOME/diffspace/jax``,
            else ``~/.cache/diffspace/jax`` (the directory ``diffspace run`` uses).

    Returns:
        The directory (a ``pathlib.Path``), or ``None`` when ``DIFFSPACE_NO_CACHE=1`` or the directory cannot be
            created (the process then runs without the cache).
    """
    from .app.cache import enable_cache as enable

    return enable(path=path)


__all__ = [
    "CompiledRobot",
    "ConfigError",
    "Drive",
    "LinkTree",
    "RestToRest",
    "Robot",
    "SolverFailure",
    "Status",
    "Tabulated",
    "base_momentum",
    "bias_forces",
    "bias_from_kinematics",
    "body_placements",
    "build_robot",
    "center_of_mass",
    "compile_robot",
    "configuration_derivative",
    "enable_cache",
    "forward_dynamics",
    "frame_jacobian",
    "frame_pose",
    "generalized_jacobian",
    "inverse_dynamics",
    "kinematics",
    "kinetic_energy",
    "load_robot",
    "load_scenario",
    "mass_matrix",
    "mass_matrix_and_bias",
    "mass_matrix_from_kinematics",
    "metric_gradient",
    "metrics",
    "momentum",
    "simulate",
]
