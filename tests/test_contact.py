"""Contact force laws and the 1-D impact core against closed forms (Hertz, restitution relations, energy)."""

import dataclasses
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from diffspace.contact import (
    CHI_LAWS,
    LAWS,
    ContactLaw,
    hertz_stiffness,
    kelvin_voigt_damping_ratio,
    kelvin_voigt_restitution_linear,
    output_restitution,
    restitution_closed_form,
    simulate_impact,
)
from diffspace.contact.impact import IMPACT_SOLVER

# Tight solver tolerance for the closed-form checks: the scaled state is O(1), so rtol = 1e-11 leaves
# ~1e-9 relative error in event times and velocities; the assertions below allow 1e-7.
TOL = dict(settings=dataclasses.replace(IMPACT_SOLVER, rtol=1e-11, atol=1e-13))
HC_FAMILY = [law for law in CHI_LAWS if law != "hertz"]
FIELDS = {"separated": "separated", "max_indentation_m": "max_indentation", "peak_force_N": "peak_force",
          "contact_duration_s": "contact_duration", "restitution": "restitution",
          "max_compression_time_s": "max_compression_time", "damping_energy_J": "damping_energy",
          "elastic_energy_at_release_J": "elastic_energy_at_release", "release_indentation_m": "release_indentation",
          "detached_velocity_m_s": "detached_velocity", "impulse_N_s": "impulse", "release_time_s": "release_time",
          "peak_force_time_s": "peak_force_time"}


def _impact(law, mass, speed):
    """Impact of ``mass`` on a fixed support (the equivalent-mass problem) as a dict of named results."""
    out = jax.jit(lambda: simulate_impact(law, mass, jnp.inf, speed, t_max=1e4, **TOL))()
    assert int(out.status) == 0
    return {key: getattr(out, name) for key, name in FIELDS.items()}


def _gamma_integral(n):
    """int_0^1 dx / sqrt(1 - x^(n+1)) = B(1/p, 1/2) / p, p = n + 1 (half-period of the Hertz oscillator)."""
    p = n + 1.0
    return math.gamma(1.0 / p) * math.sqrt(math.pi) / (p * math.gamma(1.0 / p + 0.5))


def test_hertz_stiffness_matches_paper_eq3_and_limits():
    e1, nu1, r1, e2, nu2, r2 = 2.06e11, 0.3, 0.01, 7.0e10, 0.33, 0.03
    h1, h2 = (1 - nu1**2) / (math.pi * e1), (1 - nu2**2) / (math.pi * e2)
    paper = 4.0 / (3.0 * math.pi * (h1 + h2)) * math.sqrt(r1 * r2 / (r1 + r2))  # paper Eq. (3)
    assert float(hertz_stiffness(e1, nu1, r1, e2, nu2, r2)) == pytest.approx(paper, rel=1e-14)
    plane = float(hertz_stiffness(e1, nu1, r1, e2, nu2, math.inf))
    assert plane == pytest.approx(4.0 / (3.0 * math.pi * (h1 + h2)) * math.sqrt(r1), rel=1e-14)
    assert float(hertz_stiffness(e1, nu1, r1, e2, nu2, 1e9)) == pytest.approx(plane, rel=1e-9)


@pytest.mark.parametrize("exponent", [1.5, 1.0])
def test_elastic_impact_matches_hertz_closed_forms(exponent):
    """Undamped impact of two steel spheres: max indentation, peak force, contact time, e = 1."""
    k = float(hertz_stiffness(2.06e11, 0.3, 0.01, 2.06e11, 0.3, 0.01)) if exponent == 1.5 else 3.0e7
    m1, m2, v0 = 0.5, 0.8, 0.7
    m = m1 * m2 / (m1 + m2)
    res = _impact(ContactLaw(k, exponent, 1.0, law="hertz"), m, v0)
    d_max = ((exponent + 1) * m * v0**2 / (2 * k)) ** (1 / (exponent + 1))
    t_c = 2 * d_max / v0 * _gamma_integral(exponent)  # n = 1: pi sqrt(m/k)
    if exponent == 1.0:
        assert t_c == pytest.approx(math.pi * math.sqrt(m / k), rel=1e-14)
    assert bool(res["separated"])
    assert float(res["max_indentation_m"]) == pytest.approx(d_max, rel=1e-8)
    assert float(res["peak_force_N"]) == pytest.approx(k * d_max**exponent, rel=1e-8)
    assert float(res["contact_duration_s"]) == pytest.approx(t_c, rel=1e-8)
    assert float(res["restitution"]) == pytest.approx(1.0, abs=1e-8)
    assert float(res["max_compression_time_s"]) == pytest.approx(0.5 * t_c, rel=1e-8)


def test_force_law_properties_and_gradients_at_zero():
    v0 = 0.2
    for law_name in LAWS:
        law = ContactLaw(1e6, 1.5, 0.6, mass=2.0, law=law_name)
        # zero for delta <= 0 whatever the rate
        assert float(law.force(-1e-3, 0.3, v0)) == 0.0
        assert float(law.force(0.0, -0.3, v0)) == 0.0
        # never adhesive: fast separation at small indentation
        assert float(law.force(1e-6, -10 * v0, v0)) >= 0.0
        # finite gradients at and below first touch (double-where), w.r.t. state and parameters
        for delta in (0.0, -1e-4, 1e-5):
            g = jax.grad(lambda d, v, lw: lw.force(d, v, v0), argnums=(0, 1, 2))(delta, v0, law)
            leaves = jax.tree_util.tree_leaves(g)
            assert all(np.all(np.isfinite(np.asarray(x))) for x in leaves), (law_name, delta)
    # Hunt-Crossley family: zero force at first touch (delta = 0, delta_dot = v0)
    for law_name in CHI_LAWS:
        assert float(ContactLaw(1e6, 1.5, 0.6, law=law_name).force(0.0, v0, v0)) == 0.0
    # broadcasting for node arrays (rope contact)
    law = ContactLaw(1e6, 1.5, 0.6, law="hunt_crossley")
    f = law.force(jnp.array([-1e-3, 0.0, 1e-4, 2e-4]), jnp.array([0.1, 0.1, 0.1, -0.05]), v0)
    assert f.shape == (4,) and float(f[0]) == 0.0 and float(f[1]) == 0.0 and float(f[2]) > 0.0
    expect = 1e6 * 2e-4**1.5 * (1 - 1.5 * 0.4 * 0.05 / v0)
    assert float(f[3]) == pytest.approx(expect, rel=1e-14)


def test_contact_law_rejects_bad_construction():
    with pytest.raises(ValueError, match="unknown damping law"):
        ContactLaw(1e6, 1.5, 0.5, law="nonsense")
    with pytest.raises(ValueError, match="effective mass"):
        ContactLaw(1e6, 1.5, 0.5, law="kelvin_voigt")


@pytest.mark.parametrize("law_name", LAWS)
def test_every_law_energy_and_zero_force_at_ends(law_name):
    """Work-energy balance: damping dissipation (+ elastic energy left at a force release with delta > 0)
    equals (1 - e^2) KE0; the force is 0 at first touch (Kelvin-Voigt: D v0) and at release."""
    m, v0, k = 3.0, 0.4, 5e8
    law = ContactLaw(k, 1.5, 0.6, mass=m, law=law_name)
    res = _impact(law, m, v0)
    assert bool(res["separated"])
    e = float(res["restitution"])
    ke0 = 0.5 * m * v0**2
    lost = float(res["damping_energy_J"]) + float(res["elastic_energy_at_release_J"])
    assert lost == pytest.approx((1 - e**2) * ke0, rel=1e-8, abs=1e-8 * ke0)
    f_scale = float(res["peak_force_N"])
    assert float(law.force(0.0, v0, v0)) == 0.0  # delta = 0 exactly: no force for any law
    f_start = float(law.force(1e-15 * float(res["max_indentation_m"]), v0, v0))  # first touch, delta -> 0+
    if law_name == "kelvin_voigt":
        assert f_start == pytest.approx(float(law.damping(v0)) * v0, rel=1e-12)
        assert float(law.first_touch_force(v0)) == pytest.approx(f_start, rel=1e-12)
        assert float(res["release_indentation_m"]) > 0.0  # releases before geometric separation
    else:
        assert f_start <= 1e-20 * f_scale
    v_out = float(res["detached_velocity_m_s"])
    f_end = float(law.force(float(res["release_indentation_m"]), -v_out, v0))
    assert f_end <= 1e-7 * f_scale
    # momentum: the integrated impulse equals m (v0 + v_out) (frictionless)
    assert float(res["impulse_N_s"]) == pytest.approx(m * (v0 + v_out), rel=1e-9)


def test_hunt_crossley_family_restitution_vs_closed_form():
    """Closed form: for F = k d^n (1 + chi d_dot / v0), e solves chi (1 + e) = ln((1 + chi) / (1 - chi e))."""
    cs = np.array([0.2, 0.55, 0.9])
    worst = 0.0
    for law_name in HC_FAMILY:
        e_sim = np.asarray(output_restitution(law_name, cs))
        chi = np.asarray(ContactLaw(1.0, 1.5, cs, law=law_name).chi())
        e_ref = np.array([restitution_closed_form(float(x)) for x in chi])
        worst = max(worst, float(np.max(np.abs(e_sim - e_ref))))
    assert worst < 1e-8
    # independent of the exponent n
    e_n1 = np.asarray(output_restitution("hunt_crossley", cs, exponent=1.0))
    e_n25 = np.asarray(output_restitution("hunt_crossley", cs, exponent=2.5))
    assert np.max(np.abs(e_n1 - e_n25)) < 1e-8


def test_kelvin_voigt_linear_matches_schwager_poeschel():
    """n = 1 spring-dashpot with the no-tension release: e = exp(-zeta (pi - 2 alpha) / sqrt(1 - zeta^2))."""
    cs = np.array([0.2, 0.55, 0.9])
    e_sim = np.asarray(output_restitution("kelvin_voigt", cs, exponent=1.0))
    zeta = np.asarray(kelvin_voigt_damping_ratio(cs))
    e_ref = np.array([kelvin_voigt_restitution_linear(float(z)) for z in zeta])
    np.testing.assert_allclose(e_sim, e_ref, rtol=1e-8)
    assert np.all(e_sim > cs)  # the clamp raises the rebound above the calibration value
    # contact time (pi - 2 alpha) / omega with omega = sqrt(k/m) sqrt(1 - zeta^2)
    m, k, c = 2.0, 4e5, 0.55
    z = float(kelvin_voigt_damping_ratio(c))
    res = _impact(ContactLaw(k, 1.0, c, mass=m, law="kelvin_voigt"), m, 0.3)
    omega = math.sqrt(k / m) * math.sqrt(1 - z * z)
    t_ref = (math.pi - 2 * math.atan(z / math.sqrt(1 - z * z))) / omega
    assert float(res["contact_duration_s"]) == pytest.approx(t_ref, rel=1e-8)
