"""Reports of the flexible-arm scenario: summary scalars, time series and plots like the paper's Figs. 2-5."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ...io.results import plot_panels, write_timeseries
from ...core.status import Status
from .model import Settings
from .outcome import FlexibleArmOutcome, key_results


def _finite(x: float) -> float | None:
    """A JSON number, or ``None`` for NaN/inf (a failed run's values are not results, and never zeros)."""
    x = float(x)
    return x if math.isfinite(x) else None


def _list(values) -> list:
    return [_finite(v) for v in np.asarray(values).ravel()]


def angle_differences(out: FlexibleArmOutcome) -> tuple[np.ndarray, np.ndarray]:
    """Base and joint angle differences maximal - reference (rad), wrapped to ``(-pi, pi]``."""
    wrap = lambda a: np.arctan2(np.sin(a), np.cos(a))  # noqa: E731
    base = wrap(np.asarray(out.maximal.base_angle) - np.asarray(out.reference.base_angle))
    joints = wrap(np.asarray(out.maximal.joint_angles) - np.asarray(out.reference.joint_angles))
    return base, joints


def summary(s: Settings, frequency_hz, out: FlexibleArmOutcome) -> dict:
    """JSON-ready scalars (SI, unit-suffixed; the headline keys first)."""
    base_diff, joint_diff = angle_differences(out)
    result = {
        "status": Status(int(out.status)).label,
        "flexible": s.flexible,
        "modes": s.modes if s.flexible else 0,
        "base_position_final_m": _list(out.maximal.base_position[-1]),
        "base_angle_final_deg": _finite(np.rad2deg(out.maximal.base_angle[-1])),
        "joint_angles_final_deg": _list(np.rad2deg(out.maximal.joint_angles[-1])),
    }
    mixed = ("base_angle_final_deg", "momentum_drift_max")  # the second mixes units: split below
    result.update({key: _finite(value) for key, value in key_results(out).items() if key not in mixed})
    drift = np.abs(np.asarray(out.momentum) - np.asarray(out.momentum[0]))
    result.update(
        {
            "linear_momentum_drift_max_kg_m_s": _finite(drift[:, :3].max()),
            "angular_momentum_drift_max_kg_m2_s": _finite(drift[:, 3:].max()),
            # unit modal mass: the modal coordinates are in m kg^1/2
            "modal_amplitude_max_m_sqrt_kg": _list(np.abs(np.asarray(out.modal)).max(axis=0)) if s.flexible else [],
            "base_angle_difference_max_deg": _finite(np.rad2deg(np.abs(base_diff).max())),
            "joint_angle_difference_max_deg": _list(np.rad2deg(np.abs(joint_diff).max(axis=0))),
            "velocity_violation_max": _finite(np.max(out.velocity_violation)),
            "maximal_solver_steps": int(out.maximal_steps),
            "reference_solver_steps": int(out.reference_steps),
            "t_final_s": float(out.ts[-1]),
        }
    )
    if out.reaction_force is not None:
        result["joint_reaction_force_max_N"] = _list(np.linalg.norm(np.asarray(out.reaction_force), axis=2).max(0))
    if s.flexible:
        result["first_mode_frequency_hz"] = float(frequency_hz)
    return result


def write(out: FlexibleArmOutcome, path: Path) -> None:
    """``timeseries.csv``/``.npz`` and the plots ``modal.png`` (Fig. 2), ``end_effector.png`` (Fig. 3),
    ``angle_differences.png`` (Fig. 4), ``angles.png`` (Fig. 5) and ``constraints.png``."""
    ts = np.asarray(out.ts)
    base_diff, joint_diff = angle_differences(out)
    m, r = out.maximal, out.reference
    ee, ee_ref = np.asarray(m.end_effector), np.asarray(r.end_effector)
    columns = {"t_s": ts}
    columns.update({f"base_{a}_m": np.asarray(m.base_position[:, i]) for i, a in enumerate("xyz")})
    columns["base_angle_deg"] = np.rad2deg(m.base_angle)
    columns.update({f"joint{j + 1}_deg": np.rad2deg(m.joint_angles[:, j]) for j in range(2)})
    columns.update({f"ee_{a}_m": ee[:, i] for i, a in enumerate("xyz")})
    columns.update({f"ee_rigid_{a}_m": ee_ref[:, i] for i, a in enumerate("xyz")})
    columns["ee_difference_m"] = np.asarray(out.end_effector_difference)
    columns["base_angle_difference_deg"] = np.rad2deg(base_diff)
    columns.update({f"joint{j + 1}_difference_deg": np.rad2deg(joint_diff[:, j]) for j in range(2)})
    columns.update({f"eta{k + 1}": np.asarray(out.modal[:, k]) for k in range(out.modal.shape[1])})
    columns.update({f"eta{k + 1}_rate": np.asarray(out.modal_rate[:, k]) for k in range(out.modal.shape[1])})
    columns["tip_deflection_m"] = np.asarray(out.tip_deflection)
    columns["constraint_violation"] = np.asarray(out.constraint_violation)
    columns["energy_J"] = np.asarray(out.energy)
    columns["input_power_W"] = np.asarray(out.input_power)
    columns["momentum_drift"] = np.abs(np.asarray(out.momentum) - np.asarray(out.momentum[0])).max(axis=1)
    centre = np.asarray(out.mass_centre)
    columns["mass_centre_drift_m"] = np.linalg.norm(centre - centre[0], axis=1)
    if out.reaction_force is not None:
        force = np.linalg.norm(np.asarray(out.reaction_force), axis=2)
        columns.update({f"joint{j + 1}_reaction_N": force[:, j] for j in range(2)})
    write_timeseries(path, columns)
    momentum = np.abs(np.asarray(out.momentum) - np.asarray(out.momentum[0]))
    drift = {"linear momentum [kg m/s]": momentum[:, :3].max(axis=1),
             "angular momentum [kg m²/s]": momentum[:, 3:].max(axis=1)}
    modes = out.modal.shape[1]
    case = f"flexible arm ({modes} modal coordinates of link 2)" if modes else "arm, rigid links"
    _plots(ts, columns, ee, ee_ref, modes, drift, case, path)


def _plots(ts, c: dict, ee, ee_ref, modes: int, drift: dict, case: str, path: Path) -> None:
    if modes:  # unit modal mass: eta in m kg^1/2
        plot_panels(path / "modal.png", ts, [
            ("modal coordinate [m kg^1/2]", {f"eta {k + 1}": c[f"eta{k + 1}"] for k in range(modes)}),
            ("modal rate [m kg^1/2/s]", {f"d(eta {k + 1})/dt": c[f"eta{k + 1}_rate"] for k in range(modes)}),
            ("tip deflection [mm]", {"|w(L)|": 1e3 * c["tip_deflection_m"]}),
        ], title=f"{case}: modal coordinates and tip deflection (paper Fig. 2)")
    _end_effector_plot(path / "end_effector.png", ts, ee, ee_ref, f"{case}: end effector against the rigid arm's "
                       "(paper Fig. 3)")
    plot_panels(path / "angle_differences.png", ts, [
        ("base angle difference [deg]", {"base": c["base_angle_difference_deg"]}),
        ("joint angle difference [deg]", {f"joint {j + 1}": c[f"joint{j + 1}_difference_deg"] for j in range(2)}),
    ], title=f"{case}: angles minus the rigid arm's in minimal coordinates (paper Fig. 4)")
    plot_panels(path / "angles.png", ts, [
        ("base angle [deg]", {"base": c["base_angle_deg"]}),
        ("joint angle [deg]", {f"joint {j + 1}": c[f"joint{j + 1}_deg"] for j in range(2)}),
    ], title=f"{case}: base and joint angles (paper Fig. 5)")
    floor = 1e-18  # log axes: exact zeros drawn at the floor
    panels = [
        ("constraint violation max |Phi|", {"m for positions, 1 for axis alignment":
                                            np.maximum(c["constraint_violation"], floor)}),
        ("momentum drift, max |h - h(0)|", {k: np.maximum(v, floor) for k, v in drift.items()}),
    ]
    if "joint1_reaction_N" in c:
        panels.append(("joint reaction [N]", {f"joint {j + 1}": c[f"joint{j + 1}_reaction_N"] for j in range(2)}))
    _log_axes(path / "constraints.png", ts, panels, f"{case}: constraint violation and momentum drift")


def _log_axes(png: Path, ts, panels, title: str) -> None:
    """Stacked time plots, the first two with logarithmic y axes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(panels), 1, figsize=(7, 2.4 * len(panels)), sharex=True, squeeze=False)
    for k, (ax, (label, series)) in enumerate(zip(axes[:, 0], panels)):
        for name, y in series.items():
            ax.plot(ts, y, label=name)
        if k < 2:
            ax.set_yscale("log")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    axes[-1, 0].set_xlabel("time [s]")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)


def _end_effector_plot(png: Path, ts, ee, ee_ref, title: str) -> None:
    """Fig. 3: both paths, the flexible end effector relative to the rigid one, and the distance over time."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    diff = 1e3 * (ee - ee_ref)
    fig, axes = plt.subplots(1, 3, figsize=(13, 4))
    axes[0].plot(ee_ref[:, 0], ee_ref[:, 1], label="rigid (minimal coordinates)")
    axes[0].plot(ee[:, 0], ee[:, 1], "--", label="maximal coordinates")
    axes[0].set(xlabel="x [m]", ylabel="y [m]", title="end-effector paths")
    axes[0].axis("equal")
    axes[0].legend(fontsize=7)
    axes[1].plot(diff[:, 0], diff[:, 1])
    axes[1].set(xlabel="dx [mm]", ylabel="dy [mm]", title="relative to the rigid end effector")
    axes[1].axis("equal")
    axes[2].plot(ts, np.linalg.norm(diff, axis=1))
    axes[2].set(xlabel="time [s]", ylabel="|difference| [mm]", title="end-effector difference")
    for ax in axes:
        ax.grid(alpha=0.3)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)
