"""The deploying mast against an independent model (experiments/references/mast_reference.py: rigid modules and segmented
Timoshenko tubes in Pinocchio, integrated by SciPy's Radau): first natural frequency of schemes 1 and 3 and the
residual vibration after the paper's trapezoidal 90 deg / 6.1 s drive.

    python experiments/deployment_reference.py

Writes ``experiments/results/deployment_reference/``: ``summary.json``, ``table.md``,
``deployment_reference.png``. About 8 minutes on 2 cores (the diffspace shell runs dominate).
"""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
from references.mast_reference import (
    MastDynamics,
    MastSpec,
    TrapezoidDrive,
    diffspace_deployment,
    diffspace_frequencies,
    natural_frequencies,
    with_frequency,
)

OUT = ROOT / "experiments" / "results" / "deployment_reference"
CONFIGS = {1: ROOT / "configs" / "deployment_scheme1.toml", 3: ROOT / "configs" / "deployment_scheme3.toml"}
MESHES = ((8, 2), (8, 4), (8, 8), (16, 8))  # (8, 2) is the configs' mesh
CELLS = 4  # tube cells of the time runs (first frequency within 0.02 % of the converged chain)
METRICS = ("residual_vibration_peak_deg_s2", "residual_vibration_rms_deg_s2", "peak_joint_torque_N_m")


def _mesh(n_circ, n_axial) -> list[str]:
    return [f"mesh.n_circumferential={n_circ}", f"mesh.n_axial={n_axial}"]


def frequencies(scheme: int) -> dict:
    """First frequency [Hz]: the chain over cells (and its 8/16 Richardson limit), Euler-Bernoulli and
    plane-strain-modulus variants, diffspace's beam and its shell over meshes."""
    spec = MastSpec(scheme + 1)
    chain = {n: float(natural_frequencies(spec, n, 1)[0]) for n in (1, 2, 4, 8, 16)}
    converged = chain[16] + (chain[16] - chain[8]) / 3.0
    rows = {"timoshenko_chain": chain, "timoshenko_converged": converged,
            "euler_bernoulli": float(natural_frequencies(replace(spec, shear=False), 16, 1)[0]),
            "timoshenko_E_over_1_minus_nu2": float(natural_frequencies(
                replace(spec, stiffness_scale=1.0 / (1.0 - spec.poisson**2)), 16, 1)[0]),
            "diffspace_beam": float(diffspace_frequencies(CONFIGS[scheme], ['interface.model="beam"'], 1)[0])}
    for mesh in MESHES:
        pair = diffspace_frequencies(CONFIGS[scheme], _mesh(*mesh), 2)
        rows[f"diffspace_shell_{mesh[0]}x{mesh[1]}"] = float(pair[0])
        rows[f"diffspace_shell_{mesh[0]}x{mesh[1]}_pair_split"] = float(pair[1] / pair[0] - 1.0)
    return rows


def _ours(spec: MastSpec, t: np.ndarray):
    start = time.perf_counter()
    run = MastDynamics(spec, CELLS, TrapezoidDrive()).simulate(t, rtol=1e-8)
    return run, {**run.residual_vibration(), "wall_s": time.perf_counter() - start}


def _theirs(scheme: int, overrides: list[str]):
    start = time.perf_counter()
    run, summary = diffspace_deployment(CONFIGS[scheme], overrides)
    return run, {**run.residual_vibration(), "status": summary["status"], "wall_s": time.perf_counter() - start}


def residual(scheme: int, freq: dict) -> tuple[dict, dict]:
    """Residual vibration of diffspace (shell at the configs' mesh and at 8x4, beam at the configs' 2.5 ms step
    and at 0.5 ms) and of the chain: as is, and with its tube springs scaled to a shell's first frequency."""
    spec = MastSpec(scheme + 1)
    runs, rows = {}, {}
    runs["diffspace shell 8x2"], rows["diffspace shell 8x2"] = _theirs(scheme, [])
    runs["diffspace beam"], rows["diffspace beam"] = _theirs(scheme, ['interface.model="beam"'])
    _, rows["diffspace beam, 0.5 ms step"] = _theirs(scheme, ['interface.model="beam"', "simulation.step_s=0.0005"])
    t = runs["diffspace shell 8x2"].t
    runs["Timoshenko chain"], rows["Timoshenko chain"] = _ours(spec, t)
    _, rows["Timoshenko chain, 0.5 ms samples"] = _ours(spec, np.linspace(0.0, t[-1], 5 * (t.size - 1) + 1))
    for mesh in ("8x2", "8x4", "16x8"):
        target = freq[f"diffspace_shell_{mesh}"]
        label = f"chain at shell {mesh} frequency"
        runs[label], rows[label] = _ours(with_frequency(spec, CELLS, target), t)
        rows[label]["matched_hz"] = target
    if scheme == 3:
        _, rows["diffspace shell 8x4"] = _theirs(scheme, _mesh(8, 4))
    return rows, runs


def plot(runs: dict, path: Path) -> None:
    fig, axes = plt.subplots(2, 1, figsize=(10, 7))
    shown = ("diffspace shell 8x2", "diffspace beam", "Timoshenko chain", "chain at shell 8x2 frequency")
    for ax, scheme in zip(axes, (1, 3)):
        for label, style in zip(shown, ("-", "-", "--", ":")):
            run = runs[scheme][label]
            window = run.t > run.motion_end - 0.3
            ax.plot(run.t[window], np.rad2deg(run.end_acceleration[window]), style, lw=1.0, label=label)
        ax.set(title=f"scheme {scheme}: end module angular acceleration after the drive stops (6.1 s)",
               xlabel="t [s]", ylabel="alpha [deg/s^2]")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def table(summary: dict) -> str:
    lines = ["# Deployment mast vs an independent segmented-Timoshenko model", "",
             "First natural frequency [Hz] (drive locked; relative to the converged Timoshenko chain):", "",
             "| model | scheme 1 | scheme 3 |", "| --- | --- | --- |"]
    f1, f3 = summary["frequencies"]["1"], summary["frequencies"]["3"]

    def cell(f, key):
        return f"{f[key]:.4f} ({f[key] / f['timoshenko_converged'] - 1.0:+.2%})"

    for n in (1, 4, 16):
        lines.append(f"| Timoshenko chain, {n} cells | {f1['timoshenko_chain'][n]:.4f} | {f3['timoshenko_chain'][n]:.4f} |")
    names = {"timoshenko_converged": "Timoshenko chain, converged (8/16 Richardson)",
             "euler_bernoulli": "Euler-Bernoulli chain (no shear)",
             "timoshenko_E_over_1_minus_nu2": "Timoshenko with E / (1 - nu^2)",
             "diffspace_beam": "diffspace beam interface",
             **{f"diffspace_shell_{a}x{b}": f"diffspace shell {a}x{b}" + (" (configs)" if (a, b) == (8, 2) else "")
                for a, b in MESHES}}
    lines += [f"| {name} | {cell(f1, key)} | {cell(f3, key)} |" for key, name in names.items()]
    lines += ["", ("Residual vibration after the motion (trapezoid 90 deg / 6.1 s; metrics on diffspace's 2.5 ms "
                   "samples unless noted; relative to diffspace's shell at the configs' mesh):"), "",
              "| scheme | model | peak [deg/s^2] | RMS [deg/s^2] | peak drive torque [N m] | wall [s] |",
              "| --- | --- | --- | --- | --- | --- |"]
    for scheme in ("1", "3"):
        rows = summary["residual"][scheme]
        ref = rows["diffspace shell 8x2"]
        for label, r in rows.items():
            values = " | ".join(f"{r[m]:.2f} ({r[m] / ref[m] - 1.0:+.1%})" for m in METRICS)
            lines.append(f"| {scheme} | {label} | {values} | {r['wall_s']:.0f} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    summary, runs = {"frequencies": {}, "residual": {}}, {}
    for scheme in (1, 3):
        summary["frequencies"][str(scheme)] = frequencies(scheme)
        summary["residual"][str(scheme)], runs[scheme] = residual(scheme, summary["frequencies"][str(scheme)])
        print(scheme, json.dumps(summary["residual"][str(scheme)], indent=1), flush=True)
    (OUT / "summary.json").write_text(json.dumps(summary, indent=1))
    (OUT / "table.md").write_text(table(summary))
    plot(runs, OUT / "deployment_reference.png")
    print(table(summary))


if __name__ == "__main__":
    main()
