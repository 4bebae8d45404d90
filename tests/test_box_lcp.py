"""The box-constrained LCP (``diffspace.core.box_lcp``) against an independent answer: enumeration of every
active set (each variable at its lower bound, free, or at its upper bound; 3^n candidates for n <= 6), of which
exactly one satisfies the complementarity conditions for a positive definite matrix."""

from __future__ import annotations

import itertools

import jax
import numpy as np
import pytest

import diffspace  # noqa: F401  (float64)
from diffspace.core.box_lcp import box_lcp

solve = jax.jit(box_lcp)  # one compile per problem size for the whole file (eager calls trace every time)


def _enumerated(W, q, lower, upper):
    """The solution found by trying every active set (independent of the active-set iteration)."""
    n = len(q)
    for sides in itertools.product((-1, 0, 1), repeat=n):
        sides = np.array(sides)
        free = sides == 0
        x = np.where(sides < 0, lower, upper).astype(float)
        if free.any():
            x[free] = np.linalg.solve(W[np.ix_(free, free)], -(q[free] + W[np.ix_(free, ~free)] @ x[~free]))
        w = W @ x + q
        x_scale = np.abs(np.concatenate([lower, upper])).max() + 1e-300
        x_tol, w_tol = 1e-12 * x_scale, 1e-9 * (np.abs(q).max() + np.abs(W).max() * x_scale)
        inside = np.all(x >= lower - x_tol) and np.all(x <= upper + x_tol)
        signs = np.all(w[sides < 0] >= -w_tol) and np.all(w[sides > 0] <= w_tol)
        if inside and signs:
            return x
    raise AssertionError("no active set satisfies the conditions")


def _problem(rng, n):
    a = rng.normal(size=(n, n)) * 10.0 ** rng.uniform(-2, 2, size=(1, n))
    W = a @ a.T + 1e-2 * np.mean(np.diag(a @ a.T)) * np.eye(n)
    q = rng.normal(size=n) * 10.0 ** rng.uniform(-2, 2)
    level = 10.0 ** rng.uniform(-2, 1, size=n) * (rng.uniform(size=n) > 0.15)  # some zero: fixed at 0
    return W, q, -level, level * rng.uniform(0.5, 2.0, size=n)


@pytest.mark.parametrize("seed", range(6))
def test_box_lcp_equals_the_enumerated_solution(seed):
    rng = np.random.default_rng(seed)
    for _ in range(40):
        n = int(rng.integers(1, 7))
        W, q, lower, upper = _problem(rng, n)
        sol = solve(W, q, lower, upper)
        assert bool(sol.converged)
        x, w = np.asarray(sol.x), np.asarray(sol.w)
        reference = _enumerated(W, q, lower, upper)
        scale = np.abs(np.concatenate([lower, upper])).max() + 1e-300
        assert np.abs(x - reference).max() <= 1e-9 * scale
        assert np.all((x >= lower) & (x <= upper))
        strictly_inside = (x > lower) & (x < upper)
        assert np.all(w[strictly_inside] == 0.0), "a variable strictly inside its bounds has w exactly 0"
        assert np.all(w[(x == lower) & (lower < upper)] >= 0.0) and np.all(w[(x == upper) & (lower < upper)] <= 0.0)


def test_bound_exceeded_by_a_relative_1e_8_is_a_bound_not_a_tie():
    """A stuck joint whose holding torque exceeds its limit by 1e-8 (the breakaway event's margin) must come out at
    the bound with a non-zero acceleration of the right sign, however ill-conditioned the rest of the problem."""
    rng = np.random.default_rng(3)
    a = rng.normal(size=(7, 7)) * np.array([1.0, 1e-2, 1.0, 0.1, 3.0, 1.0, 8.0])
    W = a @ a.T + 1e-3 * np.eye(7)
    level = np.full(7, 1.625)
    x_hold = np.array([0.1, level[1] * (1 + 1e-8), -0.3, 0.2, 0.01, -0.15, 0.0])  # holding torques of all stuck
    q = -W @ x_hold  # so that all stuck needs exactly x_hold
    sol = box_lcp(W, q, -level, level)
    assert bool(sol.converged)
    assert float(sol.x[1]) == level[1] and float(sol.w[1]) < 0.0
    np.testing.assert_allclose(np.asarray(sol.x), _enumerated(W, q, -level, level), rtol=0, atol=1e-12)


def test_box_lcp_batches_under_vmap():
    rng = np.random.default_rng(7)
    problems = [_problem(rng, 5) for _ in range(8)]
    stacked = [np.stack(p) for p in zip(*problems)]
    batched = jax.vmap(box_lcp)(*stacked)
    for k, problem in enumerate(problems):
        np.testing.assert_allclose(np.asarray(batched.x[k]), np.asarray(box_lcp(*problem).x), rtol=0, atol=1e-13)
