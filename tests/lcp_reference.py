"""Independent LCP solvers for the tests and the Lemke benchmark (plain NumPy, host side).

* :func:`lemke_numpy`: textbook Lemke with the covering vector ``d = 1`` and a smallest-ratio test whose
  ties go to the lowest basic-variable index (a different tie rule from the JAX solver's
  lexicographic one, so agreement is not a shared bug); a Python loop per problem (the benchmark
  baseline).
* :func:`enumerate_lcp`: every complementary basis (``2^n`` of them) solved densely; returns all feasible
  solutions (exact reference for small ``n``).
"""

from __future__ import annotations

import itertools

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
