"""The capture scenario against an independent integration of the same system (Pinocchio ABA arm, NumPy
rigid target and contact law, SciPy DOP853 with event location: tests/capture_reference_model.py).

The reference is first checked against closed forms: a central hit (the force line through both centres of
mass, all joints held) is the 1-D impact of the equivalent mass ``m_A m_T / (m_A + m_T)``: undamped Hertz
gives ``F_max = k d_max^n``, ``d_max = ((n+1) m v^2 / 2k)^(1/(n+1))``, the duration
``2 (d_max / v) int_0^1 dx / sqrt(1 - x^(n+1))`` and the separation speed ``v``; a damped law of the
Hunt-Crossley family gives the restitution ``e`` of ``chi (1 + e) = ln((1 + chi) / (1 - chi e))`` and the
impulse ``m (1 + e) v``. Measured agreement with diffspace (experiments/capture_reference.py): at the
config's tolerances (rtol 1e-10, atol 1e-12) every compared quantity within 1.7e-8 relative, at rtol 1e-12
/ atol 1e-14 within 6.3e-11.
"""

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.optimize import brentq

from diffspace.scenarios import load_scenario
from experiments.references.capture_comparison import (
    CASES,
    CONFIG,
    diffspace_numbers,
    reference_numbers,
    relative_differences,
    resolved_config,
)
from experiments.references.capture_reference_model import CHI, CaptureReference, rotation

CENTRAL = ['target.aim_point_m="central"', 'target.orientation="arm_com_line"']
TIGHT = {"rtol": 1e-12, "atol": 1e-14}


def _equivalent_mass(cfg: dict) -> float:
    m_arm = sum(inertia.mass for inertia in CaptureReference(cfg).model.inertias)  # held arm: one rigid body
    return m_arm * cfg["target"]["mass_kg"] / (m_arm + cfg["target"]["mass_kg"])


def test_reference_central_undamped_hit_is_the_one_dimensional_hertz_impact():
    cfg = resolved_config(CENTRAL + ['contact.law="hertz"'])
    ref = CaptureReference(cfg).simulate(**TIGHT)
    m, v = _equivalent_mass(cfg), cfg["capture"]["approach_speed_m_s"]
    k, n = cfg["contact"]["stiffness_N_m_n"], cfg["contact"]["exponent"]
    d_max = ((n + 1) * m * v**2 / (2 * k)) ** (1 / (n + 1))
    duration = 2 * d_max / v * quad(lambda x: 1 / np.sqrt(1 - x ** (n + 1)), 0, 1, epsabs=1e-14, limit=200)[0]
    assert ref.peak_force == pytest.approx(k * d_max**n, rel=1e-9)
    assert ref.duration == pytest.approx(duration, rel=1e-9)
    assert ref.separation_speed == pytest.approx(v, rel=1e-9)
    assert ref.impulse == pytest.approx(2 * m * v, rel=1e-9)
    assert np.linalg.norm(ref.target_angular_velocity) < 1e-9 * v  # no spin: the hit is central


def test_reference_central_damped_hit_has_the_closed_form_restitution():
    cfg = resolved_config(CENTRAL)  # Zhiying-Qishao, c = 0.608
    ref = CaptureReference(cfg).simulate(**TIGHT)
    chi = CHI[cfg["contact"]["law"]](cfg["contact"]["restitution_c"])
    e = brentq(lambda e: chi * (1 + e) - np.log((1 + chi) / (1 - chi * e)), 1e-6, min(1.0, 1 / chi) - 1e-12,
               xtol=1e-15)
    v, m = cfg["capture"]["approach_speed_m_s"], _equivalent_mass(cfg)
    assert ref.separation_speed / v == pytest.approx(e, rel=1e-8)
    assert ref.impulse == pytest.approx(m * (1 + e) * v, rel=1e-8)


def _assert_agree(ds: dict, ref: dict, rel: float):
    assert ds["status"] == "ok" and ds["contacts"] == ref["contacts"]
    worst = relative_differences(ds, ref)
    assert max(worst.values()) <= rel, {k: f"{d:.2e}" for k, d in worst.items() if d > rel}


def test_default_capture_agrees_with_the_reference():
    """Smoke: the shipped config at its own tolerances, and the target placement (both sides built it)."""
    ref_model = CaptureReference(resolved_config([]))
    scenario = load_scenario(CONFIG)
    assert np.asarray(scenario.target_x0) == pytest.approx(ref_model.x0, abs=1e-14)
    assert rotation(np.asarray(scenario.target_quat0)) == pytest.approx(ref_model.rot0, abs=1e-14)
    _assert_agree(diffspace_numbers([]), reference_numbers([], **TIGHT), rel=1e-6)


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize("case", list(CASES))
def test_capture_cases_agree_with_the_reference_at_tight_tolerances(case):
    """Approach speeds 0.01-0.2 m/s, oblique approaches, a moving target, four laws, held/free/partly free
    joints: every quantity within 1e-9 relative (measured at most 6.3e-11)."""
    overrides = CASES[case]
    _assert_agree(diffspace_numbers(overrides, **TIGHT), reference_numbers(overrides, **TIGHT), rel=1e-9)
