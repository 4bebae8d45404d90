"""The snare closing against an independent implementation of the same equations (experiments/references/closing_reference.py:
planar NumPy ropes with signed bend angles, contact points by interpolation weights, quintic drive, static
shapes from experiments/references/rope_reference.py's chain, SciPy RK45; nothing shared with diffspace but the TOML's numbers).
Same discretisation (sections, contact points, pinned ends, dashpots), so the two agree to solver tolerance.

Measured on the fast case (8 soft sections, ring 40 -> 58 deg in 0.2 s onto a shaft 30 mm off the axis;
diffspace rtol 1e-10, reference rtol 1e-9): initial shapes 6e-14 m, shaft path 1e-15 m, contact force
2.5e-7 N of a 57.7 N peak (same sample, same time), ring torque 3e-10 N m of 4.5 N m, closing angle 2e-15 rad,
closing time 1.4e-15 s. The shipped config: see the slow test. Numbers: experiments/results/closing_reference/
(python experiments/closing_reference.py).
"""

from pathlib import Path

import numpy as np
import pytest

from experiments.references.closing_reference import (
    FAST_CASE,
    ClosingCase,
    ClosingReference,
    compare,
    diffspace_closing,
    rope_chain,
    rope_forces,
    static_shapes,
)

CONFIG = Path(__file__).resolve().parents[1] / "configs" / "snare_closing.toml"
SEMI_IMPLICIT = {"simulation.scheme": "semi_implicit", "simulation.step_s": 1e-5}


def ours(overrides: dict) -> dict:
    run = diffspace_closing(CONFIG, overrides)
    assert run["summary"]["status"] == "ok"
    assert run["max_out_of_plane_m"] < 1e-12  # planar: the reference's 2-D model is the same system
    return run


def run(overrides: dict, rtol: float, atol: float = 1e-13, fixed_step: dict | None = None) -> tuple[dict, dict | None]:
    """diffspace's run and the reference on the same saved times: their comparison (:func:`compare`), and that of
    diffspace's run with ``fixed_step`` overrides on top (same reference run), if given."""
    first = ours(overrides)
    case = ClosingCase.from_config(CONFIG, overrides)
    ref = ClosingReference(case).simulate(first["ts"], rtol=rtol, atol=atol)
    second = None if fixed_step is None else compare(ours({**overrides, **fixed_step}), ref, case)
    return compare(first, ref, case), second


def test_reference_rope_forces_are_the_chains_gradient():
    """The reference's dynamic rope forces without velocity are -dV/dx of experiments/references/rope_reference.py's chain
    (two codings of the same energy), on a randomly perturbed static shape."""
    case = ClosingCase.from_config(CONFIG, FAST_CASE)
    x = static_shapes(case, 0.1)
    x[:, 1:-1] += 1e-3 * np.random.default_rng(1).normal(size=x[:, 1:-1].shape)
    gradient = np.stack([rope_chain(case, 0.0).gradient(xk) for xk in x])
    forces = rope_forces(case, x, np.zeros_like(x))
    np.testing.assert_allclose(forces, -gradient, rtol=0.0, atol=1e-9 * np.abs(gradient).max())


def test_fast_closing_matches_the_independent_model():
    """Fast case (module notes): static shapes to Newton tolerance, then the closing dynamics sample by sample;
    the static closing angle and the time the drive reaches it."""
    d, semi = run(FAST_CASE, rtol=1e-9, fixed_step=SEMI_IMPLICIT)
    r = d["reference"]
    assert r["peak_contact_force_N"] > 10.0 and r["shaft_travel_m"] > 1e-3  # the ropes strike and push the shaft
    assert d["initial_shape_m"] < 1e-10
    assert d["shaft_path_m"] < 1e-10 and d["shaft_velocity_m_s"] < 1e-8
    assert d["contact_force_N"] < 1e-6 * r["peak_contact_force_N"]
    assert d["peak_time_s"] == 0.0 and abs(d["peak_contact_force_N"]) < 1e-7 * r["peak_contact_force_N"]
    assert d["ring_torque_N_m"] < 1e-8 * r["peak_ring_torque_N_m"]
    assert d["impulse_N_s"] < 1e-8 * r["impulse_N_s"] and d["drive_work_J"] < 1e-8 * abs(r["drive_work_J"])
    assert abs(d["closing_angle_rad"]) < 1e-10 and abs(d["closing_time_s"]) < 1e-10
    assert abs(d["final_offset_m"]) < 1e-10
    # the shipped fixed-step scheme (second order, h = 1e-5 s) against the same reference run; measured: shaft path
    # 1.8e-11 m, contact force 2.5e-3 N (peak 8.2e-7 N), ring torque 1.1e-5 N m, impulse 5.1e-7 N s, drive work
    # 9.3e-9 J, final offset 1.4e-11 m (at 3e-5 s: 1.6e-10 m, 1.8e-2 N, 9.8e-5 N m, 3.8e-6 N s, 8.5e-8 J; velocity
    # Verlet at 1e-5 s: 1.6e-11 m, 3.0e-4 N, 6.2e-6 N m, 5.4e-7 N s, 8.4e-9 J; the first-order scheme at 1e-5 s:
    # 1.0e-7 m, 0.042 N, 4.5e-3 N m, 3.2e-4 N s, 4.4e-5 J)
    assert semi["shaft_path_m"] < 1e-9 and abs(semi["peak_contact_force_N"]) < 1e-7 * r["peak_contact_force_N"]
    assert semi["contact_force_N"] < 2e-4 * r["peak_contact_force_N"]
    assert semi["ring_torque_N_m"] < 1e-5 * r["peak_ring_torque_N_m"]
    assert semi["impulse_N_s"] < 1e-6 * r["impulse_N_s"] and semi["drive_work_J"] < 1e-7 * abs(r["drive_work_J"])
    assert abs(semi["closing_angle_rad"]) < 1e-10 and abs(semi["final_offset_m"]) < 1e-9


@pytest.mark.slow
@pytest.mark.timeout(2400)
def test_shipped_closing_matches_the_independent_model():
    """configs/snare_closing.toml as shipped (20 sections, EA = 5e4 N, ring 0 -> 58 deg in 3 s, 0.5 s hold; the
    drifting shaft is struck from 2.09 s, 142.7 N at 3.10 s, nine contact episodes), diffspace at its shipped
    rtol 1e-6, the reference at 1e-8 (both about 600k steps, set by the stiff contacts). Measured: initial
    shapes 7e-17 m, shaft path 1.2e-11 m over 60 mm of travel, contact force 3.3e-3 N (2.3e-5 of the peak),
    peak 2.3e-5 N low at the same sample, ring torque 2.0e-6 N m of 13.9 N m, impulse 8e-9 N s of 7.3 N s, drive
    work 5e-11 J, closing angle 7e-15 rad (55.069 deg), closing time 3e-14 s, final offset 5e-12 m."""
    d, _ = run({"simulation.scheme": "tsit5"}, rtol=1e-8, atol=1e-11)
    r = d["reference"]
    assert r["peak_contact_force_N"] > 100.0 and r["shaft_travel_m"] > 0.05
    assert d["initial_shape_m"] < 1e-10
    assert d["shaft_path_m"] < 1e-9 and d["shaft_velocity_m_s"] < 1e-8
    assert d["contact_force_N"] < 1e-4 * r["peak_contact_force_N"]  # diffspace's rtol 1e-6 in the stiff contact
    assert d["peak_time_s"] == 0.0 and abs(d["peak_contact_force_N"]) < 1e-6 * r["peak_contact_force_N"]
    assert d["ring_torque_N_m"] < 1e-6 * r["peak_ring_torque_N_m"]
    assert d["impulse_N_s"] < 1e-8 * r["impulse_N_s"] and d["drive_work_J"] < 1e-8 * abs(r["drive_work_J"])
    assert abs(d["closing_angle_rad"]) < 1e-10 and abs(d["closing_time_s"]) < 1e-10
    assert abs(d["final_offset_m"]) < 1e-9
