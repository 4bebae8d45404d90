"""The snare rope's statics against independent models (experiments/references/rope_reference.py): diffspace's 30-section rope
(configs/snare_capture.toml, clamped ends, k_tor = 1.5532 N m/rad) vs the same discretisation solved
independently, and vs the planar extensible elastica (EI = k_tor l, rigid clamps) with a convergence study of
the independent chain.

    python experiments/snare_reference.py

Writes ``experiments/results/snare_reference/``: ``summary.json``, ``table.md``, ``snare_reference.png``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
from references.rope_reference import (
    PAPER,
    Chain,
    chain_direction,
    diffspace_statics,
    rod_direction,
    rod_installed,
    rod_pressing_curve,
)

CONFIG = ROOT / "configs" / "snare_capture.toml"
OUT = ROOT / "experiments" / "results" / "snare_reference"
DEPTHS = np.linspace(0.0, 0.03, 61)[1:]  # the configured virtual-spring depths
NODES = (16, 5)
N_DEPTHS = {16: 60, 5: 20}  # node 5 goes taut (~200 N at 22 mm): compared to 10 mm, past its F_A range (5 mm)
REPORT_DEPTHS = (0.0005, 0.008)  # smallest depth (~k_v(0)), end of node 16's F_A = 8 N range; and the deepest


def _at(depth) -> int:
    return int(np.argmin(np.abs(DEPTHS - depth)))


def _force_errors(forces, reference) -> dict:
    rel = forces / reference - 1.0
    return {f"rel_error_at_{d * 1e3:g}mm": float(rel[_at(d)]) for d in REPORT_DEPTHS} | {
        "rel_error_deepest": float(rel[-1]), "deepest_mm": float(1e3 * DEPTHS[len(rel) - 1]),
        "max_abs_rel_error": float(np.max(np.abs(rel)))}


def _shape_error_mm(x, rod) -> float:
    s = np.linspace(0.0, PAPER.length, x.shape[0])
    return float(1e3 * np.max(np.linalg.norm(rod.positions(s) - x, axis=1)))


def same_discretisation(ours: dict) -> dict:
    """diffspace vs the independent 30-section chain (clamps k_tor): shape, clamp headings, pressing forces."""
    start = time.perf_counter()
    chain = Chain(PAPER, 30).installed()
    x = chain.equilibrium()
    rows = {"shape_max_deviation_m": float(np.max(np.linalg.norm(x - ours["shape"], axis=1))),
            "clamp_heading_deviation_rad": float(np.max(np.abs(np.asarray(chain.clamps) - ours["clamp_headings"])))}
    for k, node in enumerate(NODES):
        forces, _ = chain.pressing_curve(x, node - 1, chain_direction(x, node - 1), DEPTHS)
        rows[f"node{node}_force_max_rel_deviation"] = float(np.max(np.abs(ours["forces"][k] / forces - 1.0)))
    rows["wall_s"] = time.perf_counter() - start
    return rows


def continuum(ours: dict) -> tuple[dict, dict]:
    """diffspace vs the elastica at nodes 16 and 5; returns the table rows and the curves for the plot."""
    rows, curves = {}, {}
    for k, node in enumerate(NODES):
        start = time.perf_counter()
        rod, clamps = rod_installed(PAPER, (node - 1) * PAPER.length / 30)
        depths = DEPTHS[:N_DEPTHS[node]]
        forces = rod_pressing_curve(PAPER, rod, clamps, depths, rod_direction(rod))
        mine = ours["forces"][k, :depths.size]
        rows[f"node{node}"] = {"shape_max_deviation_mm": _shape_error_mm(ours["shape"], rod),
                               **_force_errors(mine, forces),
                               "continuum_peak_force_N": float(forces.max()),
                               "continuum_peak_depth_mm": float(1e3 * depths[np.argmax(forces)]),
                               "diffspace_peak_force_N": float(mine.max()),
                               "diffspace_peak_depth_mm": float(1e3 * depths[np.argmax(mine)]),
                               "wall_s": time.perf_counter() - start}
        curves[node] = (rod, forces)
    return rows, curves


def convergence(curves: dict) -> dict:
    """The independent chain for N sections at s = L/2 (node 16 of 30) and s = 0.04 m (node 5), clamp springs
    c k_tor (c = 1: diffspace's convention, c = 2: continuum-consistent), and pinned at node 16, against the
    elastica."""
    pinned_rod, _ = rod_installed(PAPER, 0.15, clamped=False)
    pinned_reference = rod_pressing_curve(PAPER, pinned_rod, None, DEPTHS, rod_direction(pinned_rod))
    cases = [(node, f"c={c:g}", c, True) for node in NODES for c in (1.0, 2.0)] + [(16, "pinned", 1.0, False)]
    rows = {}
    for node, label, factor, clamped in cases:
        rod, reference = curves[node] if clamped else (pinned_rod, pinned_reference)
        for n in (30, 60, 120, 240):
            chain = Chain(PAPER, n, clamp_factor=factor)
            chain = chain.installed() if clamped else chain
            x = chain.equilibrium()
            k = (node - 1) * n // 30
            forces, _ = chain.pressing_curve(x, k, chain_direction(x, k), DEPTHS[:reference.size])
            rows[f"node {node}, {label}, N={n}"] = {"shape_max_deviation_mm": _shape_error_mm(x, rod),
                                                    **_force_errors(forces, reference)}
    return rows


def plot(ours: dict, curves: dict, path: Path) -> None:
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    rod = curves[16][0]
    s = np.linspace(0.0, PAPER.length, 301)
    left.plot(*(1e3 * rod.positions(s)).T, "k-", label="elastica (continuum)")
    left.plot(*(1e3 * ours["shape"]).T, "o", mfc="none", label="diffspace, 30 sections")
    left.set(xlabel="x [mm]", ylabel="y [mm]", title="installed shape (zero load)", aspect="equal")
    for k, node in enumerate(NODES):
        depths = 1e3 * DEPTHS[:N_DEPTHS[node]]
        right.plot(depths, curves[node][1], "-", label=f"elastica, node {node}")
        right.plot(depths, ours["forces"][k, :depths.size], "--", label=f"diffspace, node {node}")
    right.axhline(8.0, color="grey", lw=0.8, ls=":", label="F_A = 8 N")
    right.set(xlabel="pressing depth [mm]", ylabel="F_c [N]", title="pressing curve (against the bow)", ylim=(0, 25))
    for ax in (left, right):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def table(summary: dict) -> str:
    same, cont, conv = summary["same_discretisation"], summary["continuum"], summary["convergence"]
    lines = ["# Snare rope statics vs independent models", "",
             "Same discretisation (30 sections, clamps k_tor; independent NumPy chain):", "",
             "| quantity | max deviation |", "| --- | --- |",
             f"| installed shape | {same['shape_max_deviation_m']:.2e} m |",
             f"| clamp headings | {same['clamp_heading_deviation_rad']:.2e} rad |",
             *(f"| pressing force, node {n} (60 depths to 30 mm) | {same[f'node{n}_force_max_rel_deviation']:.2e} "
               "(relative) |" for n in NODES), "",
             "diffspace (30 sections) vs the elastica (EI = k_tor l, rigid clamps): relative force error", "",
             ("| node | shape max dev [mm] | F at 0.5 mm | F at 8 mm | F at deepest | peak F cont./diffspace [N] "
              "| peak depth cont./diffspace [mm] |"), "| --- | --- | --- | --- | --- | --- | --- |"]
    for node in NODES:
        r = cont[f"node{node}"]
        lines.append(f"| {node} | {r['shape_max_deviation_mm']:.4f} | {r['rel_error_at_0.5mm']:+.2%} | "
                     f"{r['rel_error_at_8mm']:+.2%} | {r['rel_error_deepest']:+.2%} ({r['deepest_mm']:g} mm) | "
                     f"{r['continuum_peak_force_N']:.3f} / {r['diffspace_peak_force_N']:.3f} | "
                     f"{r['continuum_peak_depth_mm']:.1f} / {r['diffspace_peak_depth_mm']:.1f} |")
    lines += ["", "Independent chain vs the elastica (c: clamp spring = c k_tor; c = 1 is diffspace's):",
              "", "| case | shape max dev [mm] | F at 0.5 mm | F at 8 mm | F at deepest |", "| --- | --- | --- | --- | --- |"]
    lines += [f"| {name} | {r['shape_max_deviation_mm']:.4f} | {r['rel_error_at_0.5mm']:+.2%} | "
              f"{r['rel_error_at_8mm']:+.2%} | {r['rel_error_deepest']:+.2%} ({r['deepest_mm']:g} mm) |"
              for name, r in conv.items()]
    return "\n".join(lines) + "\n"


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    ours = diffspace_statics(CONFIG, NODES, DEPTHS)
    summary = {"diffspace_wall_s": time.perf_counter() - start, "same_discretisation": same_discretisation(ours)}
    summary["continuum"], curves = continuum(ours)
    summary["convergence"] = convergence(curves)
    summary["depths_m"] = DEPTHS.tolist()
    summary["forces_N"] = {"diffspace": {n: ours["forces"][k].tolist() for k, n in enumerate(NODES)},
                           "elastica": {n: curves[n][1].tolist() for n in NODES}}
    (OUT / "summary.json").write_text(json.dumps(summary, indent=1))
    (OUT / "table.md").write_text(table(summary))
    plot(ours, curves, OUT / "snare_reference.png")
    print(table(summary))


if __name__ == "__main__":
    main()
