"""The free-floating scenario against an independent model (experiments/references/free_floating_reference.py: Pinocchio's
articulated-body algorithm on the same URDF with its free-flyer conventions, SciPy DOP853 at rtol 1e-11;
nothing shared with diffspace but the URDF and the TOML's numbers).

Measured on configs/free_floating.toml (4 s, the arm's end effector moves 1.02 m, the base 0.098 m), with
diffspace at its shipped rtol 1e-9: base position 4.9e-13 m, base attitude 3.7e-12 rad, joint angles
7.0e-12 rad, end effector 4.2e-12 m, velocities 2.1e-9; at rtol 1e-12: 9e-16 m, 4.5e-15 rad, 1.1e-13 rad,
1.6e-14 m, 3.3e-11. Numbers: experiments/results/closing_reference/ (python experiments/closing_reference.py).
"""

from pathlib import Path

import pytest

from experiments.references.free_floating_reference import FloatingCase, FloatingReference, compare, diffspace_floating

CONFIG = Path(__file__).resolve().parents[1] / "configs" / "free_floating.toml"
# diffspace's Tsit5 at rtol 1e-9 (atol 1e-11) over motions of ~1 m and ~1 rad: deviations of 1e-9 in the
# coordinates and 1e-7 in the rates would already be solver error (measured 5e-12 and 2e-9)
POSE_TOL, RATE_TOL = 1e-9, 1e-7


def run(overrides: dict) -> dict:
    ours = diffspace_floating(CONFIG, overrides)
    assert ours["status"] == 0
    reference = FloatingReference(FloatingCase.from_config(CONFIG, overrides))
    assert reference.joint_names == ours["joint_names"]
    return compare(ours, reference.simulate(ours["ts"]))


def _check(deviation: dict, pose_tol: float, rate_tol: float) -> None:
    for key in ("base_position_m", "base_attitude_rad", "joint_angles_rad", "end_effector_m"):
        assert deviation[key] < pose_tol, (key, deviation)
    assert deviation["velocities"] < rate_tol, deviation


def test_half_second_matches_pinocchio():
    """First 0.5 s (the end effector moves 0.22 m, the base 23 mm): the same trajectory to solver tolerance."""
    deviation = run({"simulation.t_final_s": 0.5})
    assert deviation["end_effector_excursion_m"] > 0.1 and deviation["base_excursion_m"] > 0.01
    _check(deviation, POSE_TOL, RATE_TOL)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_full_run_matches_pinocchio_and_converges():
    """The shipped 4 s run at the shipped tolerance, then at rtol 1e-12: the deviations shrink with diffspace's
    tolerance (joint angles and rates by more than 10x), so what is left is diffspace's solver error."""
    shipped = run({})
    assert shipped["end_effector_excursion_m"] > 0.5 and shipped["base_excursion_m"] > 0.05
    _check(shipped, POSE_TOL, RATE_TOL)
    tight = run({"simulation.rtol": 1e-12, "simulation.atol": 1e-14})
    _check(tight, 1e-11, 1e-9)
    assert tight["joint_angles_rad"] < 0.1 * shipped["joint_angles_rad"]
    assert tight["velocities"] < 0.1 * shipped["velocities"]
