r"""Newton's method for ``F(y, args) = 0`` with a structured Jacobian solve, differentiable in ``args`` by the
implicit function theorem.

The iteration and its stopping rule are those of ``optimistix.Newton`` with its default Cauchy termination
(``optimistix.root_find``): ``y_{k+1} = y_k - J(y_k)^{-1} F(y_k)``, stopping after the first step with

.. math:: \max_i \frac{|\Delta y_i|}{a + r |y_{k,i}|} < 1 \quad\text{and}\quad \max_i \frac{|F_i(y_k)|}{a} < 1

(maxima over all leaves; ``a``, ``r`` the absolute and relative tolerances), and failing on a non-finite iterate
or after ``max_steps`` steps. The Jacobian is never materialised: the caller's ``solve(y, args, b)`` returns
``J(y)^{-1} b`` (e.g. a banded solve). The derivative of the root ``y*`` in ``args`` is

.. math:: \dot y^* = -J(y^*)^{-1}\, \partial_{args} F(y^*, args)\,\dot{args},

one more ``solve``, declared linear (``lax.custom_linear_solve``) with a symmetric Jacobian, so that reverse mode
transposes it by the same solve.
"""

from __future__ import annotations

import functools
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Bool, PyTree


def _max_ratio(num, den) -> Array:
    return jnp.max(jnp.stack([jnp.max(n / d) for n, d in zip(jax.tree.leaves(num), jax.tree.leaves(den))]))


def _iterate(residual, solve, y0, args, tolerances, max_steps: int):
    rtol, atol = tolerances

    def step(carry):
        y, count, _, _ = carry
        f = residual(y, args)
        diff = solve(y, args, f)
        scale = jax.tree.map(lambda v: atol + rtol * jnp.abs(v), y)
        converged = ((_max_ratio(jax.tree.map(jnp.abs, diff), scale) < 1.0)
                     & (_max_ratio(jax.tree.map(jnp.abs, f), jax.tree.map(lambda v: atol + 0.0 * v, f)) < 1.0))
        finite = jnp.all(jnp.stack([jnp.all(jnp.isfinite(v)) for v in jax.tree.leaves(y)]))
        return jax.tree.map(jnp.subtract, y, diff), count + 1, converged & finite, converged | ~finite

    def proceed(carry):
        return ~carry[3] & (carry[1] < max_steps)

    y, _, ok, _ = jax.lax.while_loop(proceed, step, (y0, jnp.array(0), jnp.array(False), jnp.array(False)))
    return y, ok


@functools.partial(jax.custom_jvp, nondiff_argnums=(0, 1, 5))
def _root(residual, solve, y0, args, tolerances, max_steps):
    return _iterate(residual, solve, y0, args, tolerances, max_steps)


@_root.defjvp
def _root_jvp(residual, solve, max_steps, primals, tangents):
    y0, args, tolerances = primals
    y, ok = _root(residual, solve, y0, args, tolerances, max_steps)
    _, d_f = jax.jvp(lambda a: residual(y, a), (args,), (tangents[1],))
    jacobian = lambda v: jax.jvp(lambda z: residual(z, args), (y,), (v,))[1]  # noqa: E731
    d_y = jax.lax.custom_linear_solve(jacobian, jax.tree.map(jnp.negative, d_f), lambda _, b: solve(y, args, b),
                                      symmetric=True)
    return (y, ok), (d_y, np.zeros(np.shape(ok), jax.dtypes.float0))


def newton_root(residual: Callable, solve: Callable, y0: PyTree, args: PyTree, *, rtol, atol,
                max_steps: int) -> tuple[PyTree, Bool[Array, ""]]:
    """``(y*, converged)`` with ``residual(y*, args) = 0`` from ``y0`` (module notes). ``residual(y, args)`` and
    ``solve(y, args, b) = J(y)^{-1} b`` must be functions of their arguments only (no captured arrays: only
    ``args`` are differentiated), and the Jacobian ``J`` symmetric; ``y0`` gets no derivative."""
    return _root(residual, solve, jax.lax.stop_gradient(y0), args, (rtol, atol), max_steps)
