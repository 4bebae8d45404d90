r"""Statistics of a Monte-Carlo campaign: output distributions, Sobol indices, local sensitivities.

Outputs: mean, standard deviation (``ddof = 1``), extremes and the percentiles 0.135 / 50 / 99.865 (the
:math:`\pm 3\sigma` band of a normal distribution) over the usable runs; failed runs (and runs whose metric is
undefined, NaN) are excluded and counted, never replaced.

Sobol indices (Saltelli et al. 2010, *Comput. Phys. Commun.* 181, 259-270, with the total-order estimator of
Jansen 1999, their table 2 (b) and (f)) from the runs :math:`f_A, f_B, f_{AB_i}` of each base sample, with
the outputs centred on their mean over all these runs (which removes the first-order estimator's dependence
on the output's offset; SALib does the same):

.. math::

    V = \operatorname{Var}[f_A \cup f_B],\qquad
    S_i = \frac{\overline{f_B\,(f_{AB_i} - f_A)}}{V},\qquad
    S_{Ti} = \frac{\tfrac12\,\overline{(f_A - f_{AB_i})^2}}{V}.

Only base samples whose ``d + 2`` runs are all usable enter (the others are counted). Confidence intervals:
percentile bootstrap over the base samples (``bootstrap`` resamples, the centring kept from the full sample).

Local sensitivity of output :math:`y` to key :math:`x_i`: :math:`\partial y/\partial x_i` at the inputs'
means (forward-mode autodiff through the simulation) times the key's standard deviation :math:`\sigma_i`,
the first-order change of :math:`y` for a one-sigma change of :math:`x_i` (:math:`\sum_i` of their squares
is the linearised variance of :math:`y`).

Modes: an output whose distribution has two or more separated groups (the stable angular rate of an ejection
jumps where the attitude crosses a symmetry) is not described by its mean and 3-sigma band. The groups are found
on a Gaussian kernel density estimate with half Silverman's bandwidth, :math:`h = 0.45\min(\sigma,
\mathrm{IQR}/1.34)\,n^{-1/5}` (Silverman 1986, eq. 3.31, is made for one normal group and over-smooths two
overlapping ones; the noise a narrower kernel lets in is kept out by the count test below): each local maximum is
a candidate; two neighbours merge while the density between them stays above ``VALLEY`` of the lower
peak or the dip is within ``SIGNIFICANCE`` standard deviations of the run counts near them (Poisson counts within
one kernel width: sampling noise is not a group), and a group holding less than ``MODE_SHARE`` of the runs merges
into its neighbour.
"""

from __future__ import annotations

import dataclasses

import numpy as np

PERCENTILES = {"p0.135": 0.135, "p50": 50.0, "p99.865": 99.865}
BOOTSTRAP_VALUES = 20_000_000  # resampled numbers held at once while bootstrapping
MODE_SHARE = 0.05  # smallest share of the runs that counts as a group of its own
VALLEY = 0.5  # two peaks are separate groups when the density between them falls below this share of the lower
SIGNIFICANCE = 3.0  # ... and by this many standard deviations of the counts (Poisson) near them
DENSITY_BINS = 1024
BANDWIDTH = 0.45  # half Silverman's 0.9: his rule is made for one normal group and over-smooths two


def output_statistics(values: np.ndarray, failed: np.ndarray) -> dict:
    """Summary of one output over runs (``failed``: the run itself failed)."""
    undefined = ~failed & ~np.isfinite(values)
    usable = values[~failed & ~undefined]
    stats: dict = {"count": int(usable.size), "failed": int(failed.sum()), "undefined": int(undefined.sum())}
    if usable.size == 0:
        return stats | {k: None for k in ("mean", "std", "min", "max", *PERCENTILES, "modes")}
    stats |= {"mean": float(usable.mean()), "std": float(usable.std(ddof=1)) if usable.size > 1 else None,
              "min": float(usable.min()), "max": float(usable.max())}
    stats |= {name: float(np.percentile(usable, q)) for name, q in PERCENTILES.items()}
    groups = output_modes(usable)
    return stats | {"modes": groups if len(groups) > 1 else None}


def _density(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Binned Gaussian kernel density of ``values`` (half Silverman's bandwidth) on a grid, as runs within one kernel
    width of each point: ``(grid, density)``."""
    spread = min(np.std(values, ddof=1), np.subtract(*np.percentile(values, [75, 25])) / 1.34) or np.std(values)
    bandwidth = BANDWIDTH * spread * values.size ** -0.2
    edges = np.linspace(values.min() - 3 * bandwidth, values.max() + 3 * bandwidth, DENSITY_BINS + 1)
    counts, _ = np.histogram(values, edges)
    width = edges[1] - edges[0]
    half = min(DENSITY_BINS, int(np.ceil(5 * bandwidth / width)))
    kernel = np.exp(-0.5 * (np.arange(-half, half + 1) * width / bandwidth) ** 2)
    window = np.sqrt(2.0 * np.pi) * bandwidth / width  # bins in one kernel: density as runs near each point
    return 0.5 * (edges[1:] + edges[:-1]), window * np.convolve(counts, kernel / kernel.sum())[half:half + DENSITY_BINS]


def _valleys(density: np.ndarray, peaks: list[int]) -> list[int]:
    """The lowest point between each two neighbouring peaks."""
    return [a + int(np.argmin(density[a:b + 1])) for a, b in zip(peaks, peaks[1:])]


def _merge_once(density: np.ndarray, peaks: list[int], share: np.ndarray) -> list[int] | None:
    """``peaks`` with one peak removed (the smallest group below ``MODE_SHARE``, else the lower peak of the
    weakest split that is too shallow or within the count noise), or ``None`` when every group is its own."""
    small = [i for i in np.argsort(share) if share[i] < MODE_SHARE]
    if small:
        return peaks[:small[0]] + peaks[small[0] + 1:]
    weak = []
    for i, (v, a, b) in enumerate(zip(_valleys(density, peaks), peaks, peaks[1:])):
        low = min(density[a], density[b])
        depth, noise = density[v] / low, (low - density[v]) / np.sqrt(low + density[v])
        if depth >= VALLEY or noise < SIGNIFICANCE:
            weak.append((depth - VALLEY + max(0.0, SIGNIFICANCE - noise), i))
    if not weak:
        return None
    _, i = max(weak)
    lower = i if density[peaks[i]] < density[peaks[i + 1]] else i + 1
    return peaks[:lower] + peaks[lower + 1:]


def output_modes(values: np.ndarray) -> list[dict]:
    """The separated groups of ``values`` (usable runs), lowest first: each group's share of the runs, mean and
    range (one group for a unimodal output; none for fewer than 20 runs or a constant output)."""
    if values.size < 20 or np.ptp(values) == 0.0:
        return []
    grid, density = _density(values)
    rising = np.diff(density, prepend=-np.inf) > 0
    peaks = [i for i in range(len(density)) if rising[i] and (i + 1 == len(density) or density[i + 1] <= density[i])]
    while True:
        cuts = np.array([grid[v] for v in _valleys(density, peaks)])
        group = np.searchsorted(cuts, values)
        share = np.bincount(group, minlength=len(peaks)) / values.size
        merged = _merge_once(density, peaks, share)
        if merged is None:
            break
        peaks = merged
    return [{"share": float(share[g]), "mean": float(values[group == g].mean()),
             "min": float(values[group == g].min()), "max": float(values[group == g].max())}
            for g in range(len(peaks))]


def mode_notes(outputs: dict[str, dict]) -> list[str]:
    """A sentence per output with separated groups: their shares and ranges, and that the mean and the 3-sigma
    band describe neither."""
    notes = []
    for name, stats in outputs.items():
        if stats.get("modes"):
            groups = "; ".join(f"{g['share']:.0%} of the runs from {g['min']:.4g} to {g['max']:.4g}"
                               for g in stats["modes"])
            notes.append(f"{name} falls in {len(stats['modes'])} separated groups ({groups}): its mean and 3-sigma "
                         "band describe neither group; see the histogram and the outputs against the inputs")
    return notes


def _estimates(fa: np.ndarray, fb: np.ndarray, fab: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """First and total indices; ``fa``, ``fb``: ``(..., N)``, ``fab``: ``(..., N, d)``."""
    variance = np.var(np.concatenate([fa, fb], axis=-1), axis=-1)[..., None]
    first = np.mean(fb[..., None] * (fab - fa[..., None]), axis=-2) / variance
    total = 0.5 * np.mean((fa[..., None] - fab) ** 2, axis=-2) / variance
    return first, total


@dataclasses.dataclass(frozen=True)
class SobolIndices:
    """Estimates (``(d,)``) and their bootstrap replicates (``(resamples, d)``); ``samples`` base samples used,
    ``excluded`` left out because one of their runs was unusable."""

    first: np.ndarray
    total: np.ndarray
    first_resampled: np.ndarray
    total_resampled: np.ndarray
    samples: int
    excluded: int

    def interval(self, which: str, confidence: float) -> np.ndarray | None:
        """Percentile bootstrap interval, ``(d, 2)``; ``None`` without resamples."""
        replicates = self.first_resampled if which == "first" else self.total_resampled
        if replicates.shape[0] == 0:
            return None
        tail = 50.0 * (1.0 - confidence)
        return np.percentile(replicates, [tail, 100.0 - tail], axis=0).T


def sobol_indices(runs: np.ndarray, resamples: int, seed: int) -> SobolIndices | None:
    """Indices from ``runs`` (``(N, d + 2)``: the ``A``, ``B``, ``AB_1`` ... ``AB_d`` run of each base
    sample); ``None`` with fewer than two complete base samples or a constant output."""
    complete = np.all(np.isfinite(runs), axis=1)
    used = runs[complete] - np.mean(runs[complete]) if complete.any() else runs[complete]
    n = used.shape[0]
    if n < 2 or np.ptp(used[:, :2]) == 0.0:
        return None
    fa, fb, fab = used[:, 0], used[:, 1], used[:, 2:]
    first, total = _estimates(fa, fb, fab)
    rng = np.random.default_rng([seed, 0x5A17E111])
    per_block = max(1, BOOTSTRAP_VALUES // (n * used.shape[1]))
    first_r, total_r = [], []
    for start in range(0, resamples, per_block):
        picks = rng.integers(0, n, size=(min(per_block, resamples - start), n))
        f, t = _estimates(fa[picks], fb[picks], fab[picks])
        first_r.append(f)
        total_r.append(t)
    width = fab.shape[1]
    stack = lambda parts: np.concatenate(parts) if parts else np.empty((0, width))
    return SobolIndices(first, total, stack(first_r), stack(total_r), n, int((~complete).sum()))


def sobol_summary(indices: dict[str, SobolIndices | None], keys: tuple[str, ...], confidence: float) -> dict:
    """``sobol_first`` / ``sobol_total`` (``{metric: {key: value}}``) with their intervals
    (``..._ci``: ``[low, high]``) and the base samples used and excluded per metric."""
    out: dict = {"sobol_first": {}, "sobol_total": {}, "sobol_first_ci": {}, "sobol_total_ci": {},
                 "sobol_samples": {}, "sobol_excluded_samples": {}}
    for metric, found in indices.items():
        if found is None:
            for name in ("sobol_first", "sobol_total", "sobol_first_ci", "sobol_total_ci"):
                out[name][metric] = {k: None for k in keys}
            continue
        for which in ("first", "total"):
            estimate, interval = getattr(found, which), found.interval(which, confidence)
            out[f"sobol_{which}"][metric] = {k: float(v) for k, v in zip(keys, estimate)}
            out[f"sobol_{which}_ci"][metric] = {k: None if interval is None else [float(v) for v in interval[i]]
                                                for i, k in enumerate(keys)}
        out["sobol_samples"][metric] = found.samples
        out["sobol_excluded_samples"][metric] = found.excluded
    return out


def sobol_notes(summary: dict) -> list[str]:
    """A sentence when Sobol estimates fall outside [0, 1] (the indices themselves lie there; the estimates
    of Saltelli's scheme do not, by sampling error): how many, the farthest one with its interval, and the
    base samples behind them."""
    outside = []
    for which in ("first", "total"):
        for metric, effects in summary.get(f"sobol_{which}", {}).items():
            outside += [(max(value - 1.0, -value), which, metric, key, value) for key, value in effects.items()
                        if value is not None and not 0.0 <= value <= 1.0]
    if not outside:
        return []
    _, which, metric, key, value = max(outside)
    interval = summary[f"sobol_{which}_ci"][metric][key]
    within = "" if interval is None else f", interval {interval[0]:.2g} to {interval[1]:.2g}"
    return [f"{len(outside)} Sobol estimate(s) outside [0, 1] (farthest: the {which}-order index of {metric} on "
            f"{key}, {value:.3g}{within}): sampling error at {summary['sobol_samples'][metric]} base samples; "
            "raise montecarlo.samples for usable indices"]


def local_sensitivity(gradients: dict[tuple[str, str], float], stds: dict[str, float]) -> dict:
    """``{metric: {key: d(metric)/d(key) * std(key)}}`` (``None`` where the derivative is not finite)."""
    out: dict = {}
    for (metric, key), derivative in gradients.items():
        value = float(derivative) * stds[key]
        out.setdefault(metric, {})[key] = value if np.isfinite(value) else None
    return out
