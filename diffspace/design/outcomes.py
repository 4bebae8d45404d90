"""Physical outcomes in campaigns: how often each declared outcome happens, with its confidence interval.

A scenario declares its outcomes (``AbstractScenario.outcomes``: a capture is captured, rebounded, missed or
not reached; an impact separates, sticks together or is not reached) and every valid run ends in one of
them. An outcome is a result, not a failure: sweeps, Monte-Carlo campaigns and optimisations count the
outcomes of the runs that did not fail (failures are counted separately, by status) and report
``outcome_probability`` (outcome -> fraction of those runs) with the Wilson score interval (95 %) under
``outcome_probability_ci``. The Wilson interval

$$
\\frac{\\hat p + z^2/2n \\pm z\\sqrt{\\hat p(1-\\hat p)/n + z^2/4n^2}}{1 + z^2/n}
$$

keeps its coverage near the nominal level for small ``n`` and for probabilities near 0 or 1 (where the
normal interval collapses to a point), which is where capture probabilities live.
"""

from __future__ import annotations

import math

import numpy as np

Z_95 = 1.959963984540054


def wilson_interval(successes: int, trials: int, z: float = Z_95) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion (module text); ``(nan, nan)`` without trials."""
    if trials <= 0:
        return math.nan, math.nan
    p = successes / trials
    denominator = 1.0 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1.0 - p) / trials + z * z / (4 * trials * trials)) / denominator
    low = 0.0 if successes == 0 else max(0.0, centre - half)  # exact ends (the formula leaves round-off there)
    return low, 1.0 if successes == trials else min(1.0, centre + half)


def outcome_labels(declared: tuple[str, ...], codes: np.ndarray, usable: np.ndarray) -> list[str]:
    """The label of every run's outcome code; ``""`` for a run that failed (it has no outcome) or when the
    scenario declares none."""
    if not declared:
        return [""] * len(codes)
    return [declared[int(c)] if ok else "" for c, ok in zip(codes, usable)]


def outcome_summary(declared: tuple[str, ...], labels: list[str]) -> dict:
    """``outcome_counts``, ``outcome_runs`` (the runs with an outcome), ``outcome_probability`` and
    ``outcome_probability_ci`` of every declared outcome; empty for a scenario without outcomes."""
    if not declared:
        return {}
    counts = {name: sum(label == name for label in labels) for name in declared}
    runs = sum(counts.values())
    return {
        "outcome_runs": runs,
        "outcome_counts": counts,
        "outcome_probability": {name: (n / runs if runs else math.nan) for name, n in counts.items()},
        "outcome_probability_ci": {name: list(wilson_interval(n, runs)) for name, n in counts.items()},
    }


def outcome_indicators(declared: tuple[str, ...], labels: list[str]) -> dict[str, np.ndarray]:
    """``outcome.<name>``: 1 where the run ended in that outcome, 0 in another, NaN where it failed (the
    indicator whose mean is the outcome's probability: its Sobol indices apportion the probability's variance)."""
    failed = np.array([label == "" for label in labels])
    return {f"outcome.{name}": np.where(failed, np.nan, np.array([label == name for label in labels], float))
            for name in declared}


__all__ = ["outcome_indicators", "outcome_labels", "outcome_summary", "wilson_interval"]
