"""Capture through the snare against independent models (experiments/references/virtual_spring_reference.py; nothing shared with
diffspace but the configs' numbers):

* the virtual-spring impact with the scenario's polynomial, the arm and the target integrated as two bodies
  by SciPy (DOP853, events at the force maximum, maximum indentation and release), and the elastic closed
  forms (energy, quadrature of the contact time): peak force, its time, impulse, duration, maximum
  indentation, restitution;
* the polynomial itself: the pressing curve of the independent chain of experiments/references/rope_reference.py at the same
  depths, fitted the same way (points up to F_A, least squares without constant term), and its peak force.

Measured (configs/capture_snare_optimize.toml's 30-section clamped rope, 8 nodes x 3 speeds; 6 sections in the
smoke): diffspace vs the two-body integration within 7e-9 relative (impulse and restitution; peak force 1e-11;
diffspace's event-driven solve runs at rtol 1e-10 on scaled units), the integration vs the closed forms within
7e-11, the independent fit's peak force within 6.3e-9 of diffspace's (the degree-6 coefficients themselves
differ by up to 1e-4: the least squares is ill-conditioned, its predictions are not); with c_v = 5 N s/m within
2e-9 (restitution 0.94 / 0.91). Numbers: experiments/results/closing_reference/ (python
experiments/closing_reference.py).
"""

from pathlib import Path

import numpy as np
import pytest

from experiments.references.virtual_spring_reference import (
    SMALL_SNARE,
    closing_speed,
    diffspace_strikes,
    strike_deviations,
    write_configs,
)

CONFIG = Path(__file__).resolve().parents[1] / "configs" / "capture_snare_optimize.toml"
SOLVER_TOL = 1e-7  # both impact solves run at rtol <= 1e-10: relative deviations above 1e-7 are not solver error
CLOSED_FORM_TOL = 1e-9  # DOP853 at rtol 1e-12 against quadrature at 1e-13


def strikes(tmp_path, snare_overrides: dict, nodes, speeds) -> tuple[dict, dict, dict]:
    config, capture, snare = write_configs(tmp_path, CONFIG, {"snare_strike.node": nodes[0]}, snare_overrides)
    return diffspace_strikes(config, nodes, speeds), capture, snare


def check(ours: dict, snare: dict | None) -> list[dict]:
    """Every strike within the tolerances of the module notes; returns :func:`strike_deviations`."""
    rows = strike_deviations(ours, snare)
    for row in rows:
        where = (row["node"], row["speed_m_s"])
        assert max(abs(v) for v in row["diffspace_vs_reference"].values()) < SOLVER_TOL, (where, row)
        if "reference_vs_closed_form" in row:
            assert max(abs(v) for v in row["reference_vs_closed_form"].values()) < CLOSED_FORM_TOL, (where, row)
        if "fit" in row:
            assert row["fit"]["fit_limit_m"] == row["fit"]["diffspace_fit_limit_m"], where
            assert abs(row["fit"]["peak_force_vs_diffspace"]) < SOLVER_TOL, (where, row["fit"])
    return rows


def test_small_snare_strikes_match_the_independent_impact_and_fit(tmp_path):
    """6-section rope, nodes 3 and 4, the configured 0.05 m/s and 0.01 m/s: the masses in series, the closing
    speed of the configured approach, every impact number and the fitted polynomial's peak force."""
    ours, capture, snare = strikes(tmp_path, SMALL_SNARE, [3, 4], [0.05, 0.01])
    m = ours["arm_mass"] * ours["target_mass"] / (ours["arm_mass"] + ours["target_mass"])
    assert ours["mass"] == pytest.approx(m, rel=1e-14)
    assert ours["strikes"][0]["closing_speed"] == pytest.approx(closing_speed(capture), rel=1e-14)
    rows = check(ours, snare)
    assert rows[0]["reference"]["peak_force_N"] > 1.0 and rows[0]["reference"]["max_indentation_m"] > 1e-3


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_configured_snare_strikes_match_at_every_optimised_node(tmp_path):
    """The configured 30-section clamped rope at the optimiser's nodes (3 ... 25) and 0.02 / 0.05 / 0.1 m/s
    (some indent past the fitted range: the polynomial is compared all the same), then with a virtual damper
    c_v = 5 N s/m (force at first touch, release before the indentation returns to zero, restitution < 1)."""
    nodes = [3, 5, 8, 10, 13, 16, 20, 25]
    ours, _, snare = strikes(tmp_path, {}, nodes, [0.02, 0.05, 0.1])
    check(ours, snare)
    damped_folder = tmp_path / "damped"
    damped_folder.mkdir()
    damped, _, _ = strikes(damped_folder, {"virtual_spring.damping_N_s_m": 5.0}, [16, 20], [0.05])
    assert damped["damping"] == 5.0
    restitution = [row["reference"]["restitution"] for row in check(damped, None)]
    assert np.all(np.array(restitution) < 0.99)
