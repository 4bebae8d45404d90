"""Monte-Carlo plots: output histograms with the 3-sigma band, a tornado chart of the sensitivities, outputs
against inputs, the probability of each physical outcome (``histograms.png``, ``tornado.png``, ``scatter.png``,
``outcomes.png``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

MAX_OUTPUTS = 6  # panels per plot


def pyplot():
    """matplotlib.pyplot on the Agg backend (files only, no display); shared by the design plots."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_histograms(path: Path, values: dict[str, np.ndarray], stats: dict[str, dict]) -> None:
    """One histogram per output (usable runs), its mean, the band between percentiles 0.135 and 99.865 and, for
    an output in separated groups, where they split."""
    names = [n for n in values if stats[n]["count"] > 0][:MAX_OUTPUTS]
    if not names:
        return
    plt = pyplot()
    fig, axes = plt.subplots(len(names), 1, figsize=(6.5, 2.4 * len(names)), squeeze=False)
    for ax, name in zip(axes[:, 0], names):
        data, s = values[name][np.isfinite(values[name])], stats[name]
        ax.hist(data, bins=min(60, max(10, data.size // 20)), color="steelblue", alpha=0.8)
        ax.axvspan(s["p0.135"], s["p99.865"], color="orange", alpha=0.15, label="3-sigma band (p0.135-p99.865)")
        for x in (s["p0.135"], s["p99.865"]):
            ax.axvline(x, color="darkorange", linestyle="--", linewidth=1.0)
        ax.axvline(s["mean"], color="black", linewidth=1.2, label=f"mean {s['mean']:.4g}")
        for i, group in enumerate((s.get("modes") or [])[1:]):  # the split between separated groups
            ax.axvline(group["min"], color="crimson", linestyle=":", linewidth=1.4,
                       label="split between separated groups" if i == 0 else None)
        ax.set_xlabel(name, fontsize=8)
        ax.set_ylabel("runs", fontsize=8)
        shares = ", ".join(f"{g['share']:.0%}" for g in s.get("modes") or [])
        groups = (f"\n{len(s['modes'])} separated groups ({shares} of the runs): the mean and the band describe "
                  "neither") if s.get("modes") else ""
        ax.set_title(f"{s['count']} runs, {s['failed']} failed, {s['undefined']} undefined{groups}", fontsize=8)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_outcomes(path: Path, summary: dict) -> None:
    """The probability of each declared outcome over the runs that did not fail, with its Wilson 95 % interval
    (nothing for a scenario without outcomes)."""
    if "outcome_probability" not in summary:
        return
    names = list(summary["outcome_probability"])
    p = np.array([summary["outcome_probability"][n] for n in names], float)
    ci = np.array([summary["outcome_probability_ci"][n] for n in names], float).reshape(-1, 2)
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 0.5 * len(names) + 1.6))
    ax.barh(names, p, color="steelblue", xerr=np.abs(np.stack([p - ci[:, 0], ci[:, 1] - p])), capsize=4)
    for y, (value, high, count) in enumerate(zip(p, ci[:, 1], (summary["outcome_counts"][n] for n in names))):
        ax.text(min(high + 0.02, 0.8), y, f"{value:.3f} ({count} runs)", va="center", fontsize=8)  # past the whisker
    ax.set_xlim(0.0, 1.0)
    ax.invert_yaxis()
    ax.set_xlabel("probability [-] (bar: fraction of runs; whisker: Wilson 95 % interval)", fontsize=8)
    ax.set_title(f"outcomes of {summary['outcome_runs']} runs (failed runs excluded and counted apart)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_tornado(path: Path, summary: dict, keys: tuple[str, ...], outputs: list[str]) -> None:
    """Per output: local sensitivities (signed, one sigma of each input) and Sobol first / total indices with
    their confidence intervals, inputs sorted by the size of their effect."""
    kinds = [k for k in ("local_sensitivity", "sobol_total") if summary.get(k)]
    names = [n for n in outputs if any(summary[k].get(n) for k in kinds)][:MAX_OUTPUTS]
    if not names:
        return
    plt = pyplot()
    fig, axes = plt.subplots(len(names), len(kinds), figsize=(5.5 * len(kinds), 0.9 + 0.45 * len(keys) * len(names)),
                             squeeze=False)
    for row, name in enumerate(names):
        for col, kind in enumerate(kinds):
            ax = axes[row, col]
            if kind == "local_sensitivity":
                _local_bars(ax, summary[kind].get(name, {}), keys)
                ax.set_xlabel(f"change of {name} per input sigma", fontsize=8)
            else:
                _sobol_bars(ax, summary, name, keys)
                ax.set_xlabel(f"Sobol index of {name}", fontsize=8)
            ax.tick_params(labelsize=7)
            ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _local_bars(ax, local: dict, keys: tuple[str, ...]) -> None:
    effect = np.array([local.get(k) if local.get(k) is not None else np.nan for k in keys], float)
    order = np.argsort(np.nan_to_num(np.abs(effect), nan=-1.0))
    ax.barh(np.arange(len(keys)), effect[order], color=np.where(effect[order] >= 0, "indianred", "steelblue"))
    ax.set_yticks(np.arange(len(keys)), [keys[i] for i in order])
    ax.axvline(0.0, color="black", linewidth=0.8)


def _sobol_bars(ax, summary: dict, name: str, keys: tuple[str, ...]) -> None:
    def column(kind):
        found = summary[kind].get(name) or {}
        return np.array([found.get(k) if found.get(k) is not None else np.nan for k in keys], float)

    def errors(kind, estimate):
        found = summary[kind + "_ci"].get(name) or {}
        bounds = np.array([found.get(k) or [np.nan, np.nan] for k in keys], float)
        return np.abs(np.stack([estimate - bounds[:, 0], bounds[:, 1] - estimate]))

    first, total = column("sobol_first"), column("sobol_total")
    order = np.argsort(np.nan_to_num(total, nan=-1.0))
    y = np.arange(len(keys))
    ax.barh(y + 0.2, total[order], height=0.4, xerr=errors("sobol_total", total)[:, order], label="total",
            color="darkorange", capsize=2)
    ax.barh(y - 0.2, first[order], height=0.4, xerr=errors("sobol_first", first)[:, order], label="first order",
            color="seagreen", capsize=2)
    ax.set_yticks(y, [keys[i] for i in order])
    ax.legend(fontsize=7)


def plot_scatter(path: Path, inputs: dict[str, np.ndarray], outputs: dict[str, np.ndarray]) -> None:
    """Every output against every dispersed input (a subsample of the runs)."""
    names = list(outputs)[:MAX_OUTPUTS]
    if not names or not inputs:
        return
    plt = pyplot()
    keys = list(inputs)
    fig, axes = plt.subplots(len(names), len(keys), figsize=(2.8 * len(keys), 2.3 * len(names)), squeeze=False)
    for i, name in enumerate(names):
        for j, key in enumerate(keys):
            ax = axes[i, j]
            ax.plot(inputs[key], outputs[name], ".", ms=2, alpha=0.5)
            if i == len(names) - 1:
                ax.set_xlabel(key, fontsize=7)
            if j == 0:
                ax.set_ylabel(name, fontsize=7)
            ax.tick_params(labelsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
