"""Independent LCP solvers for the tests and the Lemke benchmark (plain NumPy, host side).

* :func:`lemke_numpy`: textbook Lemke with the covering vector ``d = 1`` and a smallest-ratio test whose
  ties go to the lowest basic-variable index (a different tie rule from the JAX solver's
  lexicographic one, so agreement is not a shared bug); a Python loop per problem (the benchmark
  baseline).
* :func:`enumerate_lcp`: every complementary basis (``2^n`` of them) solved densely; returns all feasible
  solutions (exact reference for small ``n``).
* :func:`enumerate_lcp_exact`: the same enumeration in rational arithmetic (``fractions.Fraction``, the
  binary floats of ``M`` and ``q`` taken exactly): no rounding and no tolerance, so it stays the exact
  reference for ill-conditioned problems where a floating-point feasibility test would itself fail.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np


def lemke_numpy(M: np.ndarray, q: np.ndarray, max_pivots: int = 1000, tol: float = 1e-12):
    """``(z, status)``; status ``"solved"``, ``"ray"`` or ``"max_pivots"``."""
    n = len(q)
    if np.all(q >= 0):
        return np.zeros(n), "solved"
    tableau = np.hstack([np.eye(n), -M, -np.ones((n, 1)), q[:, None]]).astype(float)
    basis = list(range(n))
    row = int(np.argmin(q))
    entering = 2 * n
    for _ in range(max_pivots):
        tableau[row] /= tableau[row, entering]
        for i in range(n):
            if i != row:
                tableau[i] -= tableau[i, entering] * tableau[row]
        leaving, basis[row] = basis[row], entering
        if leaving == 2 * n:
            z = np.zeros(2 * n + 1)
            z[basis] = tableau[:, -1]
            return z[n : 2 * n], "solved"
        entering = leaving + n if leaving < n else leaving - n
        column = tableau[:, entering]
        rows = np.flatnonzero(column > tol)
        if rows.size == 0:
            return np.full(n, np.nan), "ray"
        ratios = tableau[rows, -1] / column[rows]
        ties = rows[ratios <= ratios.min() + 1e-12 * (1 + abs(ratios.min()))]
        row = int(ties[np.argmin([basis[i] for i in ties])])
    return np.full(n, np.nan), "max_pivots"


def enumerate_lcp(M: np.ndarray, q: np.ndarray, tol: float = 1e-10) -> list[np.ndarray]:
    """All solutions found among the complementary bases (``z`` vectors; empty list: no solution)."""
    n = len(q)
    found = []
    for active in itertools.product([False, True], repeat=n):
        s = np.array(active)
        basis = np.diag(~s * 1.0) - M * s[None, :]
        try:
            x = np.linalg.solve(basis, q)
        except np.linalg.LinAlgError:
            continue
        z = np.where(s, x, 0.0)
        w = M @ z + q
        scale = 1.0 + np.abs(q).max()
        if z.min() >= -tol * scale and w.min() >= -tol * scale:
            found.append(np.maximum(z, 0.0))
    return found


def _solve_exact(a: list[list[Fraction]], b: list[Fraction]) -> list[Fraction] | None:
    """Gaussian elimination in rationals; ``None`` if ``a`` is singular."""
    n = len(b)
    rows = [row[:] + [rhs] for row, rhs in zip(a, b)]
    for col in range(n):
        pivot = next((r for r in range(col, n) if rows[r][col] != 0), None)
        if pivot is None:
            return None
        rows[col], rows[pivot] = rows[pivot], rows[col]
        for r in range(n):
            if r != col and rows[r][col] != 0:
                factor = rows[r][col] / rows[col][col]
                rows[r] = [x - factor * y for x, y in zip(rows[r], rows[col])]
    return [rows[i][n] / rows[i][i] for i in range(n)]


def enumerate_lcp_exact(M: np.ndarray, q: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """All solutions on complementary bases, exactly: ``[(z, basis), ...]`` with ``basis[i]`` True where
    ``z_i`` is basic (``z`` rounded to float once at the end; empty list: no solution)."""
    n = len(q)
    m = [[Fraction(float(x)) for x in row] for row in np.asarray(M)]
    rhs = [Fraction(float(x)) for x in np.asarray(q)]
    found = []
    for active in itertools.product([False, True], repeat=n):
        basis = [[(-m[i][j] if active[j] else Fraction(int(i == j))) for j in range(n)] for i in range(n)]
        x = _solve_exact(basis, rhs)
        if x is not None and all(v >= 0 for v in x):
            z = np.array([float(v) if a else 0.0 for v, a in zip(x, active)])
            found.append((z, np.array(active)))
    return found
