r"""Robot-specialised programs for many eager calls on one robot: ``diffspace.compile_robot(robot)``.

The plain functions (``diffspace.forward_dynamics(robot, q, v, tau)``) compile once per robot *topology*
(`diffspace.core.eager`): the robot's arrays are arguments, so a robot with other masses or link lengths
reuses the program. For a loop over states of *one* robot, ::

    fast = diffspace.compile_robot(robot)
    for q, v, tau in states:
        a = fast.forward_dynamics(q, v, tau)

compiles each function once for that robot object with its arrays as constants. XLA then folds every
quantity that depends on the robot alone (joint axes and placements, the zero entries of the motion
subspaces, the inertias' constant parts). Measured on the 2-core CPU (7-DOF arm): under load 63-77 us per
forward-dynamics call against 129-145 us for the plain call; on the idle machine (``diffspace bench``,
``forward_dynamics_compiled_call_vs_pinocchio_aba``) both took 52 us. The price is one compile per
robot object (about a second for the dynamics functions on 2 cores), so this pays only for loops of many
calls; batches of states are faster still with ``jax.vmap`` (per-sample cost at or below Pinocchio's).

Arguments after the robot follow the eager rule: arrays are traced, hashable values (``None``, strings such as
``kernel="crba"``, booleans) are static and select a program. Outside Python loops (inside ``jit``, ``vmap``,
``grad``) use the plain functions: they nest in the surrounding program (`diffspace.core.eager`).
"""

from __future__ import annotations

import functools
from typing import Callable

import jax

from . import dynamics, restricted
from .eager import is_traced, merge_static, split_static
from .robot import Robot

_FUNCTIONS = (
    "base_momentum", "bias_forces", "body_placements", "center_of_mass", "forward_dynamics", "inverse_dynamics",
    "kinetic_energy", "mass_matrix", "mass_matrix_and_bias", "momentum", "restricted_dynamics",
)


class CompiledRobot:
    """The dynamics functions of `diffspace.core.dynamics` bound to one robot (module docstring).

    Attribute ``name`` (one of ``functions``) is ``fn(*args, **kwargs)`` without the robot argument.
    """

    functions = _FUNCTIONS

    def __init__(self, robot: Robot):
        if not isinstance(robot, Robot):
            raise TypeError(f"compile_robot expects a diffspace Robot, got {type(robot).__name__}")
        if any(is_traced(leaf) for leaf in jax.tree_util.tree_leaves(robot)):
            raise TypeError("compile_robot needs a concrete robot (not one traced inside jit/vmap/grad)")
        self.robot = robot
        self._bound: dict[str, Callable] = {}

    def __getattr__(self, name: str) -> Callable:
        if name.startswith("_") or name not in _FUNCTIONS:
            raise AttributeError(f"compile_robot(...).{name}: not a robot function (known: {', '.join(_FUNCTIONS)})")
        bound = self._bound.get(name)
        if bound is None:
            source = restricted if name == "restricted_dynamics" else dynamics
            bound = self._bound[name] = _bind(getattr(source, name).__wrapped__, self.robot)
        return bound

    def __repr__(self) -> str:
        return f"CompiledRobot({self.robot.nv - 6} joints, {len(self._bound)} functions bound)"


def _bind(fn: Callable, robot: Robot) -> Callable:
    """``fn(robot, ...)`` as a function of the remaining arguments: one ``jax.jit`` per argument structure,
    with array leaves traced and every other leaf static (part of the key)."""
    programs: dict = {}

    @functools.wraps(fn)
    def call(*args, **kwargs):
        leaves, treedef = jax.tree_util.tree_flatten((args, kwargs))
        if any(is_traced(leaf) for leaf in leaves):
            return fn(robot, *args, **kwargs)
        dynamic, pattern = split_static(tuple(leaves))
        if pattern is None:
            raise TypeError(f"{fn.__name__}: arguments must be arrays or hashable values")
        key = (treedef, pattern)
        program = programs.get(key)
        if program is None:
            program = programs[key] = jax.jit(_program(fn, robot, treedef, pattern))
        return program(*dynamic)

    return call


def _program(fn, robot, treedef, pattern):
    def run(*dynamic):
        args, kwargs = jax.tree_util.tree_unflatten(treedef, merge_static(pattern, dynamic))
        return fn(robot, *args, **kwargs)

    return run


def compile_robot(robot: Robot) -> CompiledRobot:
    """Dynamics functions specialised on ``robot`` for fast calls from Python loops (module docstring)."""
    return CompiledRobot(robot)
