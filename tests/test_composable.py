"""Stored programs that compose with the caller's transformations (`diffspace.design.composable`): values,
gradients (with respect to inputs and to the context's arrays), ``jit``, ``vmap`` (nested, with unbatched inputs,
with a batched context) equal those of the plain traced function; a later process runs them without tracing the
function; integer outputs pass through undifferentiated; without a store the function is simply jitted.

The toy function has what a scenario's metrics have: a context Module with float, integer and static fields, a
``lax.scan`` (a Newton solve), a ``lax.cond``, float outputs (one with an infinite derivative) and an integer
output."""

from __future__ import annotations

import dataclasses

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from diffspace.design import composable, stored

from .conftest import forget_programs

TRACES = {"count": 0}


class _Spring(eqx.Module):
    stiffness: jax.Array  # (2,) linear and cubic stiffness
    turns: jax.Array  # integer
    kind: str = eqx.field(static=True)
    loop: str = eqx.field(static=True, default="scan")  # "while": forward-mode differentiable only


def _deflection(spring: _Spring, load):
    """Root of k1 x + k3 x^3 = load by 30 Newton steps (a bounded loop, as the scenarios' solves)."""

    def step(x, _):
        residual = spring.stiffness[0] * x + spring.stiffness[1] * x**3 - load
        return x - residual / (spring.stiffness[0] + 3 * spring.stiffness[1] * x**2), None

    if spring.loop == "while":  # as a solve differentiated by diffrax.ForwardMode: reverse mode raises
        return jax.lax.while_loop(lambda c: c[1] < 30, lambda c: (step(c[0], None)[0], c[1] + 1),
                                  (load / spring.stiffness[0], 0))[0]
    x, _ = jax.lax.scan(step, load / spring.stiffness[0], None, length=30)
    return x


def _toy(spring: _Spring, inputs: dict):
    TRACES["count"] += 1
    x = _deflection(spring, inputs["load"] * spring.turns)
    energy = jax.lax.cond(x > 0, lambda: 0.5 * spring.stiffness[0] * x**2, lambda: -x * inputs["offset"][0])
    scale = 2.0 if spring.kind == "double" else 1.0
    return {"deflection": scale * x + jnp.sum(inputs["offset"]), "energy": energy,
            "margin": jnp.sqrt(jnp.abs(inputs["load"] - 1.3)),  # an infinite derivative at the shipped load
            "status": jnp.where(x > 0, 0, 3).astype(jnp.int32)}


toy = composable.stored_composable(_toy)
FORWARD_CONTEXTS = {"count": 0}


def _forward_spring(spring: _Spring) -> _Spring:
    FORWARD_CONTEXTS["count"] += 1
    return dataclasses.replace(spring, loop="while")


toy_by_columns = composable.stored_composable(_toy, forward_context=_forward_spring)
SPRING = _Spring(jnp.array([3.0, 0.7]), jnp.array(2), "double")
INPUTS = {"load": jnp.array(1.3), "offset": jnp.array([0.2, -0.1])}


def _metric(f, spring=SPRING):
    return lambda load, offset: f(spring, {"load": load, "offset": offset})["deflection"]


def test_values_and_gradients_match_the_traced_function(program_store):
    out, plain = toy(SPRING, INPUTS), _toy(SPRING, INPUTS)
    assert set(out) == set(plain) and int(out["status"]) == int(plain["status"]) == 0
    for name in ("deflection", "energy"):
        assert float(out[name]) == pytest.approx(float(plain[name]), rel=1e-14)
    # only the differentiated output's cotangent enters the reverse program: "margin", whose derivative is infinite
    # at this load, must not turn the gradient into NaN (0 x inf)
    grads = jax.jit(jax.grad(_metric(toy), argnums=(0, 1)))(INPUTS["load"], INPUTS["offset"])
    assert all(np.all(np.isfinite(g)) for g in grads)
    expected = jax.grad(_metric(_toy), argnums=(0, 1))(INPUTS["load"], INPUTS["offset"])
    for got, want in zip(jax.tree_util.tree_leaves(grads), jax.tree_util.tree_leaves(expected)):
        np.testing.assert_allclose(got, want, rtol=1e-13)
    # the context's float arrays are differentiated too (its integer and static fields are not)
    by_stiffness = jax.grad(lambda k: toy(eqx.tree_at(lambda s: s.stiffness, SPRING, k), INPUTS)["energy"])
    plain_by_stiffness = jax.grad(lambda k: _toy(eqx.tree_at(lambda s: s.stiffness, SPRING, k), INPUTS)["energy"])
    np.testing.assert_allclose(by_stiffness(SPRING.stiffness), plain_by_stiffness(SPRING.stiffness), rtol=1e-13)
    assert list(program_store.glob("*.program")), "nothing was stored"
    python_number = toy(SPRING, {"load": 1.3, "offset": INPUTS["offset"]})["deflection"]  # not an array
    assert float(python_number) == pytest.approx(float(plain["deflection"]), rel=1e-14)
    with pytest.raises(TypeError, match="forward-mode"):  # reverse mode only, as documented
        jax.jvp(lambda load: _metric(toy)(load, INPUTS["offset"]), (INPUTS["load"],), (1.0,))


def test_a_gradient_with_respect_to_few_inputs_takes_the_jacobian_columns_by_forward_mode(program_store):
    # the forward-mode context solves by a while loop, which only forward mode can differentiate
    grads = jax.jit(jax.grad(_metric(toy_by_columns), argnums=(0, 1)))(INPUTS["load"], INPUTS["offset"])
    expected = jax.grad(_metric(_toy), argnums=(0, 1))(INPUTS["load"], INPUTS["offset"])
    for got, want in zip(jax.tree_util.tree_leaves(grads), jax.tree_util.tree_leaves(expected)):
        np.testing.assert_allclose(got, want, rtol=1e-13)
    loads = jnp.linspace(-1.0, 2.0, 5)
    got = jax.jit(jax.vmap(jax.value_and_grad(_metric(toy_by_columns)), in_axes=(0, None)))(loads, INPUTS["offset"])
    want = jax.vmap(jax.value_and_grad(_metric(_toy)), in_axes=(0, None))(loads, INPUTS["offset"])
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-13)
    assert FORWARD_CONTEXTS["count"] >= 2, "the reverse programs did not take the columns by forward mode"
    # a zero cotangent contributes nothing, even where the derivative is infinite ("margin" at the shipped load)
    both = jax.grad(lambda load: jnp.stack([toy_by_columns(SPRING, {"load": load, "offset": INPUTS["offset"]})[k]
                                            for k in ("deflection", "margin")]) @ jnp.array([1.0, 0.0]))
    assert float(both(INPUTS["load"])) == pytest.approx(float(expected[0]), rel=1e-13)
    # the context's arrays, or more than FORWARD_MODE_MAX_INPUTS numbers: reverse mode, on the context as given
    calls = FORWARD_CONTEXTS["count"]
    by_stiffness = jax.grad(lambda k: toy_by_columns(eqx.tree_at(lambda s: s.stiffness, SPRING, k), INPUTS)["energy"])
    plain_by_stiffness = jax.grad(lambda k: _toy(eqx.tree_at(lambda s: s.stiffness, SPRING, k), INPUTS)["energy"])
    np.testing.assert_allclose(by_stiffness(SPRING.stiffness), plain_by_stiffness(SPRING.stiffness), rtol=1e-13)
    many = {"load": INPUTS["load"], "offset": jnp.linspace(0.1, 0.5, composable.FORWARD_MODE_MAX_INPUTS)}
    by_reverse = jax.grad(lambda d: toy_by_columns(SPRING, d)["deflection"])(many)
    for got, want in zip(jax.tree_util.tree_leaves(by_reverse),
                         jax.tree_util.tree_leaves(jax.grad(lambda d: _toy(SPRING, d)["deflection"])(many))):
        np.testing.assert_allclose(got, want, rtol=1e-13)
    assert FORWARD_CONTEXTS["count"] == calls, "reverse mode must differentiate the context as given"


def test_vmap_nested_unbatched_inputs_and_batched_context(program_store):
    loads = jnp.linspace(-1.0, 2.0, 5)
    offsets = jnp.stack([jnp.linspace(0.0, 0.3, 5), jnp.full(5, -0.1)], axis=1)
    for axes in ((0, 0), (0, None)):
        args = (loads, offsets if axes[1] == 0 else INPUTS["offset"])
        got = jax.jit(jax.vmap(jax.value_and_grad(_metric(toy)), in_axes=axes))(*args)
        want = jax.vmap(jax.value_and_grad(_metric(_toy)), in_axes=axes)(*args)
        for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
            np.testing.assert_allclose(g, w, rtol=1e-13)
    grid = loads[:, None] * jnp.array([1.0, 0.5, 0.25])[None, :]  # vmap of vmap: one batched call
    nested = jax.vmap(jax.vmap(jax.grad(_metric(toy)), in_axes=(0, None)), in_axes=(0, None))(grid, INPUTS["offset"])
    plain = jax.vmap(jax.vmap(jax.grad(_metric(_toy)), in_axes=(0, None)), in_axes=(0, None))(grid, INPUTS["offset"])
    assert nested.shape == (5, 3)
    np.testing.assert_allclose(nested, plain, rtol=1e-13)
    stiffnesses = jnp.array([[3.0, 0.7], [1.0, 0.1], [5.0, 2.0]])  # a batched context: the traced body
    batched = jax.vmap(lambda k: toy(eqx.tree_at(lambda s: s.stiffness, SPRING, k), INPUTS)["deflection"])
    plain_batched = jax.vmap(lambda k: _toy(eqx.tree_at(lambda s: s.stiffness, SPRING, k), INPUTS)["deflection"])
    np.testing.assert_allclose(batched(stiffnesses), plain_batched(stiffnesses), rtol=1e-14)
    statuses = jax.vmap(lambda load: toy(SPRING, {"load": load, "offset": INPUTS["offset"]})["status"])(loads)
    assert statuses.dtype == jnp.int32 and list(map(int, statuses)) == [3, 3, 0, 0, 0]


def test_a_later_process_traces_nothing(program_store):
    gradient = jax.jit(jax.vmap(jax.grad(_metric(toy))))
    loads, offsets = jnp.array([0.5, 1.5]), jnp.array([[0.1, 0.0], [0.2, 0.1]])
    first = gradient(loads, offsets)
    forget_programs()  # a new process: only the store directory remains
    before = TRACES["count"]
    again = jax.jit(jax.vmap(jax.grad(_metric(toy))))(loads, offsets)
    single = jax.jit(jax.grad(_metric(toy)))(loads[0], offsets[0])
    assert TRACES["count"] == before, "the stored programs were not reused"
    np.testing.assert_array_equal(again, first)
    assert float(single) == pytest.approx(float(first[0]), rel=1e-14)
    other = _Spring(SPRING.stiffness, SPRING.turns, "single")  # another static part
    toy(other, INPUTS)
    assert TRACES["count"] > before, "a different static part must not reuse the stored programs"


def test_without_a_store_it_is_the_jitted_function(monkeypatch):
    monkeypatch.setattr(stored, "_DIRECTORY", None)
    grads = jax.grad(_metric(toy))(INPUTS["load"], INPUTS["offset"])
    assert float(grads) == pytest.approx(float(jax.grad(_metric(_toy))(INPUTS["load"], INPUTS["offset"])), rel=1e-14)
    # forward mode works on the plain function (the stored one is reverse-mode only, as documented)
    assert float(jax.jacfwd(_metric(toy))(INPUTS["load"], INPUTS["offset"])) == pytest.approx(float(grads), rel=1e-13)


def test_a_program_that_cannot_be_exported_falls_back_to_tracing(program_store, monkeypatch):
    exported = composable._export

    refused = []

    def no_derivative_program(signature, kind, size=None):  # as a reverse pass with a host callback would fail
        if kind != "forward":
            refused.append(kind)
            raise ValueError("cannot export")
        return exported(signature, kind, size)

    monkeypatch.setattr(composable, "_export", no_derivative_program)
    loads, offsets = jnp.array([0.5, 1.5]), jnp.array([[0.1, 0.0], [0.2, 0.1]])
    for f in (toy, toy_by_columns):  # a reverse program, and a columns program
        got = jax.jit(jax.vmap(jax.grad(_metric(f))))(loads, offsets)
        np.testing.assert_allclose(got, jax.vmap(jax.grad(_metric(_toy)))(loads, offsets), rtol=1e-13)
    assert {type(kind) for kind in refused} == {composable._Reverse, composable._Columns}
