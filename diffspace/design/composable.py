r"""Stored programs that compose with the caller's `jax.grad`, `jax.jit` and `jax.vmap`.

`diffspace.design.stored.stored_jit` keeps a traced program for calls with concrete values; inside a caller's
transformation it falls back to tracing the function, so a user's own `jax.jit(jax.grad(f))` of a scenario
traces (and linearises) the whole simulation again in every process: ~20 s for the capture's event-driven solve.
`stored_composable` instead keeps programs per function and call signature, exported (`jax.export`):

- forward: $(c, x_{1..b}) \mapsto (f(c, x_1), \dots, f(c, x_b))$;
- columns (when the function has a ``forward_context``, the context is not differentiated and the caller
  differentiates $1 \le n \le$ ``FORWARD_MODE_MAX_INPUTS`` input numbers per row): the outputs and the
  Jacobian's columns $\partial f(c, x_i)/\partial x_i\, e_k$, $k = 1..n$, of each row, by forward mode (one JVP
  per column, on ``forward_context(c)``: for a scenario, its solves differentiated by ``diffrax.ForwardMode``);
- backward (otherwise): $(c, x_{1..b}, \bar y_{1..b}) \mapsto \big(\bar y_i^\top \partial f(c, x_i) /
  \partial (c, x_i)\big)_i$, the vector-Jacobian product of each row by reverse mode, with the context's
  cotangents per row, one program per choice of the outputs the caller differentiates and the leaves it
  differentiates with respect to (the others' cotangents are symbolic zeros, never explicit ones: an explicit
  zero times an output's infinite derivative is NaN),

where $c$ is the *context* (e.g. a scenario: its arrays are inputs, its static part is in the key) and $x$ the
*inputs* (e.g. design values). One row ($b = 1$) is traced directly; a batch once with a symbolic $b$, then
specialised to each batch size it is called with (its shapes refined once, not in every compile). The returned
function is a `jax.custom_vjp`. Its forward rule calls the columns program where it applies (the backward rule
then only contracts, $\bar x_k = \sum_m \bar y_m \cdot J_{m,k}$, with
``diffspace.design.gradient.contract_columns``: an output without a cotangent, or with a zero one, contributes
nothing, even where its derivative is not finite), else the forward program, and the backward rule the backward
program, which recomputes the forward run (its residuals are the inputs). Reverse mode through an adaptive,
event-driven solve traces its linearisation and transpose in a checkpointed loop; forward mode traces and
compiles several times faster, for a handful of inputs runs no slower, and one program gives the value and the
gradient. Each program call is a `jax.custom_batching.custom_vmap` whose rule merges the caller's batch axis
into $b$, so a `vmap` (nested too) becomes one batched call. A later process reads the programs from the store,
so the caller's transformation traces a handful of operations; its compile then hits JAX's persistent
compilation cache.

What it cannot do: the caller's own forward-mode differentiation (`jax.jvp`, `jax.jacfwd`) and second
derivatives, which a `custom_vjp` does not support; call the function itself for those. Only floating-point
leaves are differentiated; integer outputs (a status) and inputs get no cotangents. Keys and
storage are those of `diffspace.design.stored`; a program that cannot be exported, or a static part that cannot
be pickled, makes the function fall back to `eqx.filter_jit` of itself.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Callable

import equinox as eqx
import jax
import jax.numpy as jnp
from jax import export
from jax.flatten_util import ravel_pytree

from . import stored
from .gradient import contract_columns, jvp_columns

_SIGNATURES: dict = {}  # forward-program key -> its _Signature (this process)
_ROWS: dict = {}  # one-row program key -> its jitted program and output-structure record (this process)
FORWARD_MODE_MAX_INPUTS = 4
"""Most differentiated input numbers per row for which a gradient takes the Jacobian's columns by forward mode
(one JVP each) instead of reverse mode (module docstring)."""


@dataclasses.dataclass(frozen=True)
class _Reverse:
    """Which leaves a reverse program differentiates: the context's and the inputs' leaves with respect to which,
    and the outputs whose cotangents it takes (the others are zero: symbolic zeros of the caller's ``grad``, whose
    explicit zeros would turn an output's infinite derivative into NaN everywhere, 0 x inf)."""

    context: tuple[bool, ...]
    inputs: tuple[bool, ...]
    outputs: tuple[bool, ...]


@dataclasses.dataclass(frozen=True)
class _Columns:
    """Which input leaves a columns program differentiates by forward mode, and which outputs are floating point
    (the others, a status, pass through)."""

    inputs: tuple[bool, ...]
    float_outputs: tuple[bool, ...]


@dataclasses.dataclass(frozen=True)
class _Signature:
    """What decides the two programs of one call: the context's static part and structure, the inputs' structure,
    and the shapes and dtypes of both (the inputs' without the batch axis)."""

    fn: Callable
    forward_context: Callable | None  # the context differentiable in forward mode (None: reverse mode only)
    static: object
    context_def: jax.tree_util.PyTreeDef
    input_def: jax.tree_util.PyTreeDef
    context_avals: tuple[jax.ShapeDtypeStruct, ...]
    input_avals: tuple[jax.ShapeDtypeStruct, ...]

    def unflatten(self, context_leaves, input_leaves):
        context = eqx.combine(jax.tree_util.tree_unflatten(self.context_def, list(context_leaves)), self.static)
        return context, jax.tree_util.tree_unflatten(self.input_def, list(input_leaves))

    def rows(self, context_leaves, input_leaves, record: dict | None = None):
        """The function's flat outputs per row of the inputs' leading axis (the forward program's traced body);
        ``record["tree"]`` receives the output's structure."""

        def one(row):
            out = self.fn(*self.unflatten(context_leaves, row))
            if record is not None:
                record["tree"] = jax.tree_util.tree_structure(out)
            return jax.tree_util.tree_leaves(out)

        return _map_rows(one, list(input_leaves))

    def by_columns(self, context_wanted, inputs_wanted) -> bool:
        """Whether a gradient with respect to these leaves (``True``: differentiated) takes the Jacobian's columns
        by forward mode: the function has a forward-mode context, the context's arrays are not differentiated,
        and the differentiated inputs hold 1 to ``FORWARD_MODE_MAX_INPUTS`` numbers per row."""
        size = sum(math.prod(a.shape) for a, taken in zip(self.input_avals, inputs_wanted) if taken)
        return self.forward_context is not None and not any(context_wanted) and 1 <= size <= FORWARD_MODE_MAX_INPUTS

    def row_vjps(self, context_leaves, input_leaves, cotangents, reverse: _Reverse):
        """Per row: the cotangents of the context and input leaves ``reverse`` names, for the cotangents of the
        outputs it names (the backward program's traced body)."""

        def one(row, row_cotangents):
            def chosen(context_chosen, row_chosen):
                outputs = jax.tree_util.tree_leaves(self.fn(*self.unflatten(
                    _merge(context_leaves, context_chosen, reverse.context), _merge(row, row_chosen, reverse.inputs))))
                return [y for y, taken in zip(outputs, reverse.outputs) if taken]

            _, pull = jax.vjp(chosen, _chosen(context_leaves, reverse.context), _chosen(row, reverse.inputs))
            return pull(list(row_cotangents))

        return _map_rows(one, list(input_leaves), list(cotangents))

    def row_columns(self, context_leaves, input_leaves, columns: _Columns):
        """Per row: the function's flat outputs, then the Jacobian's columns ``(n, *shape)`` of each floating-point
        output with respect to the ``n`` input numbers ``columns`` names, by forward mode on
        ``forward_context(context)`` (the columns program's traced body)."""

        def one(row):
            flat, unravel = ravel_pytree(_chosen(row, columns.inputs))

            def split(x):
                context, inputs = self.unflatten(context_leaves, _merge(row, unravel(x), columns.inputs))
                leaves = jax.tree_util.tree_leaves(self.fn(self.forward_context(context), inputs))
                return [y for y in leaves if _is_float(y)], [y for y in leaves if not _is_float(y)]

            floats, tangents, others = jvp_columns(split, flat, has_aux=True)
            values = iter([y[0] for y in floats]), iter([y[0] for y in others])  # every column's primal
            return [next(values[0]) if is_float else next(values[1]) for is_float in columns.float_outputs] + tangents

        return _map_rows(one, list(input_leaves))


def _map_rows(one: Callable, *rows):
    """``jax.vmap(one)`` over the rows' leading axis; a single row directly (its trace then batches nothing, which
    halves the cold export of an unbatched program)."""
    if all(isinstance(x.shape[0], int) and x.shape[0] == 1 for x in jax.tree_util.tree_leaves(rows)):
        out = one(*jax.tree_util.tree_map(lambda x: x[0], rows))
        return jax.tree_util.tree_map(lambda y: y[None], out)
    return jax.vmap(one)(*rows)


def _is_float(x) -> bool:
    return jnp.issubdtype(x.dtype, jnp.inexact)


def _chosen(leaves, mask) -> list:
    return [x for x, taken in zip(leaves, mask) if taken]


def _merge(leaves, chosen, mask) -> list:
    """``leaves`` with those ``mask`` names replaced, in order, by ``chosen``."""
    replacements = iter(chosen)
    return [next(replacements) if taken else x for x, taken in zip(leaves, mask)]


def _aval(x) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(jnp.shape(x), jnp.result_type(x))


def _row_program(signature: _Signature, kind: str | _Reverse | _Columns) -> tuple[Callable, dict]:
    """The jitted one-row ``kind`` program of ``signature`` and the record of its output structure (``["tree"]``,
    set when it is traced): one per program and process, so that a batch traced as its ``vmap`` reuses JAX's
    trace of it."""
    key = _key(signature, kind, 1)
    if key not in _ROWS:
        structure = {"tree": jax.tree_util.tree_structure(None)}
        if kind == "forward":
            def program(context, rows):
                return signature.rows(context, rows, structure)
        elif isinstance(kind, _Columns):
            def program(context, rows):
                return signature.row_columns(context, rows, kind)
        else:
            n_inputs = len(signature.input_avals)

            def program(context, rows):
                return signature.row_vjps(context, rows[:n_inputs], rows[n_inputs:], kind)
        _ROWS[key] = (jax.jit(program), structure)
    return _ROWS[key]


def _export(signature: _Signature, kind: str | _Reverse | _Columns, size: int | None = None) -> stored._Stored:
    """Trace and export the ``kind`` program of ``signature`` ("forward", a reverse or a columns one) for one row
    (``size=1``) or a symbolic batch (``None``). The batch is the ``vmap`` of the one-row program, whose trace JAX
    reuses from the row's export (the function's Python runs once: the capture's batched columns program traced
    in 14-16 s instead of 24 s, the same program)."""
    row, structure = _row_program(signature, kind)
    (batch,) = export.symbolic_shape("b") if size is None else (size,)
    rows = [jax.ShapeDtypeStruct((batch, *a.shape), a.dtype) for a in signature.input_avals]
    if isinstance(kind, _Reverse):  # the rows carry the cotangents of the outputs it takes
        outputs = _program(signature, "forward") if size is None else _sized(signature, "forward", size)
        rows += [jax.ShapeDtypeStruct((batch, *a.shape[1:]), a.dtype)
                 for a, taken in zip(outputs.exported.out_avals, kind.outputs) if taken]
    program = row
    if size != 1:
        def batched(context, batch_rows):
            def one(*inputs):
                return jax.tree_util.tree_map(lambda y: y[0], row(context, [x[None] for x in inputs]))

            return jax.vmap(one)(*batch_rows)
        program = jax.jit(batched)
    exported = export.export(program)(list(signature.context_avals), rows)
    return stored._Stored(exported, stored._skeleton(structure["tree"]))


def _key(signature: _Signature, kind: str | _Reverse | _Columns, size: int | None = None) -> str | None:
    skeletons = (stored._skeleton(signature.context_def), stored._skeleton(signature.input_def))
    forward = signature.forward_context
    forward_name = None if forward is None else f"{forward.__module__}.{forward.__qualname__}"
    return stored._key(signature.fn, (signature.static, skeletons, kind, size, forward_name),
                       signature.context_avals + signature.input_avals)


def _program(signature: _Signature, kind: str | _Reverse | _Columns) -> stored._Stored | None:
    """The ``kind`` program of ``signature`` with its symbolic batch."""
    return stored.load_or_make(_key(signature, kind), lambda: _export(signature, kind))


def _sized(signature: _Signature, kind: str | _Reverse | _Columns, size: int) -> stored._Stored | None:
    """The ``kind`` program of ``signature`` for a batch of ``size``: one row traced directly; a batch as the
    symbolic program called with that size and exported again, its shapes refined once here (a call of the
    symbolic program refines them in every compile, 2.3 s for the capture's programs)."""

    def make():
        if size == 1:
            return _export(signature, kind, 1)
        symbolic = _program(signature, kind)
        n_context = len(signature.context_avals)
        avals = [jax.ShapeDtypeStruct(a.shape if i < n_context else (size, *a.shape[1:]), a.dtype)
                 for i, a in enumerate(symbolic.exported.in_avals)]
        exported = export.export(jax.jit(symbolic.exported.call))(avals[:n_context], avals[n_context:])
        return stored._Stored(_refined(exported), symbolic.outputs)

    return stored.load_or_make(_key(signature, kind, size), make)


def _refined(exported: export.Exported) -> export.Exported:
    """``exported`` with the shapes of the symbolic program it calls refined to its own static ones (JAX's
    refinement pass, internal API: where it is missing the program is kept as it is, and refined at compile)."""
    try:
        from jax._src.export import _export as internals
        from jax._src.interpreters import mlir

        with mlir.make_ir_context():
            module = mlir.refine_polymorphic_shapes(exported.mlir_module(serialized=False))
            serialized = internals._module_to_bytecode(module)
    except Exception:
        return exported
    return dataclasses.replace(exported, mlir_module_serialized=serialized, uses_global_constants=False)


def _batched_call(signature: _Signature, kind: str | _Reverse | _Columns, plain: Callable) -> Callable:
    """The ``kind`` program of ``signature`` as a function of ``(context, rows)`` whose ``vmap`` merges the
    caller's batch axis into the program's (``plain``, the traced body, serves a caller that batches the context
    itself, and a program that cannot be exported)."""

    @jax.custom_batching.custom_vmap
    def call(context, rows):
        program = _sized(signature, kind, rows[0].shape[0])
        if program is None:  # not exportable (e.g. a reverse pass with a host callback): the traced body
            return plain(context, rows)
        return program.exported.call(context, rows)

    @call.def_vmap
    def merged(axis_size, in_batched, context, rows):
        context_batched, rows_batched = in_batched
        if any(context_batched):
            axes = ([0 if x else None for x in context_batched], [0 if x else None for x in rows_batched])
            out = jax.vmap(plain, in_axes=axes)(context, rows)
        else:
            rows = [x if batched else jnp.broadcast_to(x, (axis_size, *x.shape))
                    for x, batched in zip(rows, rows_batched)]
            inner = rows[0].shape[1]
            out = call(context, [x.reshape(axis_size * inner, *x.shape[2:]) for x in rows])
            out = jax.tree_util.tree_map(lambda y: y.reshape(axis_size, inner, *y.shape[1:]), out)
        return out, jax.tree_util.tree_map(lambda _: True, out)

    return call


@functools.lru_cache(maxsize=None)
def _derivative_call(key: str, kind: _Reverse | _Columns) -> Callable:
    """The reverse or columns program ``kind`` of the signature of ``key``, as a batched call (one per process)."""
    signature = _SIGNATURES[key]
    if isinstance(kind, _Columns):
        return _batched_call(signature, kind, lambda c, rows: signature.row_columns(c, rows, kind))
    n_inputs = len(signature.input_avals)
    return _batched_call(signature, kind, lambda c, rows: signature.row_vjps(c, rows[:n_inputs], rows[n_inputs:], kind))


@functools.lru_cache(maxsize=None)
def _composable(key: str) -> Callable:
    """The function of flat context and input leaves, with the stored programs of the signature of ``key`` as its
    forward and reverse rules (one per signature and process, so JAX's caches of it hold)."""
    signature, forward = _SIGNATURES[key], stored._LOADED[key]
    float_outputs = tuple(_is_float(a) for a in forward.exported.out_avals)
    call_forward = _batched_call(signature, "forward", signature.rows)

    @jax.custom_vjp
    def function(context, inputs):
        return [y[0] for y in call_forward(context, [x[None] for x in inputs])]

    def function_forward(context, inputs):
        """The outputs; with a few differentiated inputs, the Jacobian's columns too (one forward-mode program)."""
        values = jax.tree_util.tree_map(lambda p: p.value, (context, inputs))
        wanted = tuple(tuple(p.perturbed and _is_float(x) for x, p in zip(values[i], part))
                       for i, part in enumerate((context, inputs)))
        if not signature.by_columns(*wanted):
            return function(*values), (values, wanted, None)
        out = [y[0] for y in _derivative_call(key, _Columns(wanted[1], float_outputs))(
            values[0], [x[None] for x in values[1]])]
        return out[:len(float_outputs)], (values, wanted, out[len(float_outputs):])

    def function_backward(residuals, cotangents):
        (context, inputs), (context_wanted, inputs_wanted), columns = residuals
        outputs = tuple(f and not isinstance(ct, jax.custom_derivatives.SymbolicZero)
                        for ct, f in zip(cotangents, float_outputs))
        none = ([None] * len(context), [None] * len(inputs))  # None: a zero cotangent
        if not any(outputs) or not any(context_wanted + inputs_wanted):
            return none
        if columns is not None:  # contract the columns of the outputs that have a cotangent
            taken = [(ct, o) for ct, o, f in zip(cotangents, outputs, float_outputs) if f]
            flat = sum(contract_columns(c, ct) for c, (ct, o) in zip(columns, taken) if o)
            unravel = ravel_pytree(_chosen(inputs, inputs_wanted))[1]
            return none[0], _merge(none[1], unravel(flat), inputs_wanted)
        reverse = _Reverse(context_wanted, inputs_wanted, outputs)
        rows = [x[None] for x in inputs] + [ct[None] for ct, taken in zip(cotangents, outputs) if taken]
        chosen = ([ct[0] for ct in part] for part in _derivative_call(key, reverse)(context, rows))
        masks = (reverse.context, reverse.inputs)
        return tuple(_merge(zeros, part, mask) for zeros, part, mask in zip(none, chosen, masks))

    function.defvjp(function_forward, function_backward, symbolic_zeros=True)
    return function


def stored_composable(fn: Callable, forward_context: Callable | None = None) -> Callable:
    """``fn(context, inputs)`` (a pytree of arrays out) whose forward and reverse programs are stored and whose
    calls compose with the caller's ``grad`` / ``jit`` / ``vmap`` (module docstring). Without a store directory, or
    for a call that cannot be stored, it is ``eqx.filter_jit(fn)``.

    ``forward_context(context)``: the same context (the same arrays) set up to be differentiated in forward mode
    (a scenario whose solves use ``diffrax.ForwardMode``); given, a gradient with respect to at most
    ``FORWARD_MODE_MAX_INPUTS`` input numbers per row is computed by forward mode (module docstring)."""

    jitted = eqx.filter_jit(fn)

    @functools.wraps(fn)
    def call(context, inputs):
        if stored._DIRECTORY is None:
            return jitted(context, inputs)
        dynamic, static = eqx.partition(context, eqx.is_array)
        context_leaves, context_def = jax.tree_util.tree_flatten(dynamic)
        input_leaves, input_def = jax.tree_util.tree_flatten(inputs)
        input_leaves = [jnp.asarray(x) for x in input_leaves]  # Python numbers too
        if not input_leaves:  # nothing to batch over
            return jitted(context, inputs)
        signature = _Signature(fn, forward_context, static, context_def, input_def, tuple(map(_aval, context_leaves)),
                               tuple(map(_aval, input_leaves)))
        key = _key(signature, "forward", 1)
        forward = _sized(signature, "forward", 1)
        if forward is None:
            return jitted(context, inputs)
        _SIGNATURES.setdefault(key, signature)
        out = _composable(key)(context_leaves, input_leaves)
        return jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(forward.outputs), out)

    return call
