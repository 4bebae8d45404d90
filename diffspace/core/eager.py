r"""Fast eager calls of the robot functions: one cached ``jax.jit`` per robot topology.

``eqx.filter_jit`` partitions the whole ``Robot`` Module into arrays and static data on every call, which
costs several hundred microseconds: 100-300x Pinocchio's ``aba`` for a call that computes in a few. The
:func:`eager_jit` decorator instead

* flattens the robot once per robot *object* (robots are immutable; the leaves are kept in a weak-keyed
  table) and calls a ``jax.jit`` made once per topology (the robot's treedef, which holds its static fields)
  and per static-argument pattern, with the robot's arrays passed as arguments. A new robot of the same
  structure (another mass, another link length) reuses the compiled program;
* inside ``jit``, ``vmap``, ``grad`` or ``scan`` (traced arguments, or a traced robot) the same jit nests in
  the outer program: JAX traces it once per argument shapes and reuses that trace (and its derivatives) at
  every call site, which shortens the tracing of scenarios that evaluate the dynamics in many places (the
  vector field, event conditions, event transitions). XLA inlines it, so the compiled code is unchanged.

Recommended patterns, fastest first: batch states with ``jax.vmap`` (per-sample cost at or below
Pinocchio's), put time loops inside one ``jax.jit`` with ``jax.lax.scan``, and only then call the functions
one state at a time from Python: ~50 us per forward-dynamics call on the 7-DOF arm (10x Pinocchio's ``aba``),
of which ~10 us is dispatch and the rest the ~130 small XLA operations of one sample. For a loop over one
robot, :func:`diffspace.compile_robot` folds the robot's arrays into the program.

Arguments that are arrays (JAX or NumPy) are traced; ``None``, strings, booleans and other hashable values
are static (part of the cache key), as with ``eqx.filter_jit``. Anything else falls back to
``eqx.filter_jit``.
"""

from __future__ import annotations

import functools
import weakref
from typing import Callable

import equinox as eqx
import jax
import numpy as np

_LEAVES: dict[int, tuple[weakref.ref, list, object]] = {}


_ARRAY = object()  # marks a traced argument in a static pattern


def is_traced(value) -> bool:
    """True for a JAX tracer (the value lives inside ``jit``/``vmap``/``grad``)."""
    return isinstance(value, jax.core.Tracer)


def robot_leaves(robot):
    """``(leaves, treedef)`` of a concrete robot (cached per object), or ``None`` if any leaf is traced."""
    key = id(robot)
    entry = _LEAVES.get(key)
    if entry is not None and entry[0]() is robot:
        return entry[1], entry[2]
    leaves, treedef = jax.tree_util.tree_flatten(robot)
    if any(is_traced(leaf) for leaf in leaves):
        return None
    try:
        ref = weakref.ref(robot, lambda _, k=key: _LEAVES.pop(k, None))
    except TypeError:  # not weak-referenceable: do not cache
        return leaves, treedef
    _LEAVES[key] = (ref, leaves, treedef)
    return leaves, treedef


def split_static(values: tuple):
    """``(dynamic arrays, static pattern)``; the pattern is ``None`` when a value is neither array nor hashable."""
    dynamic, pattern = [], []
    for value in values:
        if isinstance(value, (jax.Array, np.ndarray, np.generic)):
            dynamic.append(value)
            pattern.append(_ARRAY)
            continue
        try:
            hash(value)
        except TypeError:
            return None, None
        pattern.append((type(value), value))
    return dynamic, tuple(pattern)


def merge_static(pattern, dynamic):
    """Inverse of :func:`split_static`: the values with the arrays put back in their slots."""
    values, it = [], iter(dynamic)
    for slot in pattern:
        values.append(next(it) if slot is _ARRAY else slot[1])
    return values


def eager_jit(fn: Callable) -> Callable:
    """Decorate ``fn(robot, *args, **kwargs)`` for cheap eager calls (module docstring); pure under transforms."""
    programs: dict = {}
    fallback = eqx.filter_jit(fn)

    @functools.wraps(fn)
    def call(robot, *args, **kwargs):
        names = tuple(sorted(kwargs))
        values = args + tuple(kwargs[k] for k in names)
        flat = robot_leaves(robot)
        if flat is None:
            flat = jax.tree_util.tree_flatten(robot)
        dynamic, pattern = split_static(values)
        if pattern is None:
            return fallback(robot, *args, **kwargs)
        leaves, treedef = flat
        key = (treedef, len(args), names, pattern)
        program = programs.get(key)
        if program is None:
            program = programs[key] = jax.jit(_program(fn, treedef, len(args), names, pattern))
        return program(leaves, *dynamic)

    call.__wrapped__ = fn
    call.programs = programs  # compiled programs by (topology, static arguments); for inspection
    return call


def _program(fn, treedef, n_args, names, pattern):
    def run(leaves, *dynamic):
        values = merge_static(pattern, dynamic)
        robot = jax.tree_util.tree_unflatten(treedef, leaves)
        return fn(robot, *values[:n_args], **dict(zip(names, values[n_args:])))

    return run
