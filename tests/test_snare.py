"""Snare scenario: initial shape, virtual spring, end conditions, gradients through the rope impact, the
scenario protocol (design space, metrics, data) and the design commands through the CLI."""

import csv
import json
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from diffspace.app.cli import main
from diffspace.bodies import (
    contact_direction,
    dynamic_impact,
    initial_shape,
    install_clamps,
    pressing_curve,
    shape_and_pressing_curve,
    snare_virtual_impact,
    stiffness_profile,
    virtual_spring,
)
from diffspace.bodies.rope import bend_vectors, static_residual
from diffspace.bodies.snare_impact import rope_impact_solve
from diffspace.integrate import SolverSettings
from diffspace.contact import VirtualSpringLaw, fit_polynomial, virtual_impact
from diffspace.scenarios import load_scenario
from diffspace.core.status import ConfigError, Status

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "configs" / "snare_capture.toml"
VALUE_MASS = ["strike.mass_source='value'", "strike.mass_kg=1.79"]  # no arm model: no multibody compile
SMALL = [*VALUE_MASS, "rope.n_sections=6", "rope.axial_rigidity_N=5e3", "strike.node=3", "virtual_spring.n_depths=8",
         "virtual_spring.max_depth_m=0.02", "virtual_spring.degree=3", "virtual_spring.end_distances_m=[0.25, 0.26]"]


def _scenario(*overrides):
    return load_scenario(CONFIG, [*VALUE_MASS, *overrides])


NODES = [5, 10, 20, 25, 16]  # the paper's validation nodes (Section 4.2) and the middle


@pytest.fixture(scope="module")
def paper():
    """The paper's rope (30 sections, d_se = 0.26 m, configured clamped ends and k_tor) in one compiled call:
    initial shape, stiffness profile, the virtual springs of :data:`NODES` (static pressing curves against the
    bow, polynomial fits) and their impacts at 0.06 m/s, and the pressing curve at node 16 along the bow."""
    scenario = _scenario("virtual_spring.max_depth_m=0.008", "virtual_spring.n_depths=16")  # the F_A = 8 N range

    @eqx.filter_jit
    def statics(scenario):
        model = scenario.model_of(scenario.params)
        along_depths = jnp.linspace(0.0, 0.004, model.fit_depths.shape[0] + 1)[1:]  # taut beyond ~1 cm
        x, ok = initial_shape(model)
        springs = jax.vmap(lambda n: virtual_spring(model, x, n - 1))(jnp.array(NODES))
        impacts = jax.vmap(lambda c: snare_virtual_impact(model, c, 0.06))(springs.coefficients)
        along, ok_a = pressing_curve(model, x, 15, along_depths, -contact_direction(x, 15))
        residual = static_residual(model.rope, x[1:-1], x[0], x[-1], attach=model.rings.attachments(0.0))
        return {"model": model, "x": x, "ok": ok & ok_a & jnp.all(springs.converged), "springs": springs,
                "impacts": impacts, "f16_along": along, "along_depths": along_depths, "residual": residual,
                "profile": stiffness_profile(model, x), "bends": bend_vectors(x)}

    out = statics(scenario)
    assert bool(out["ok"])
    return {"scenario": scenario, **out}


def test_initial_shape_is_a_static_equilibrium_with_the_configured_geometry(paper):
    """Residual of Eqs. (35)-(36) ~ 0; ends on the ring at d_se; rest bend 26 deg; the installed bend obeys
    the geometric bound 2 acos(d_se / L) (a 0.30 m rope cannot span 0.26 m with only 26 deg of bend)."""
    model, x = paper["model"], paper["x"]
    assert float(jnp.max(jnp.abs(paper["residual"]))) < 1e-8  # N (section forces are ~1 N)
    assert float(jnp.linalg.norm(x[-1] - x[0])) == pytest.approx(0.26, abs=1e-14)
    np.testing.assert_allclose(np.linalg.norm(np.asarray(x)[[0, -1], :2], axis=1), 0.15, rtol=1e-14)
    rest_total = -float(jnp.sum(model.rope.rest_bend[:, 2]))
    assert np.rad2deg(rest_total) == pytest.approx(26.0, rel=1e-12)
    installed = -float(jnp.sum(paper["bends"][:, 2]))
    assert np.rad2deg(installed) > np.rad2deg(2 * np.arccos(0.26 / 0.30))
    sections = np.linalg.norm(np.diff(np.asarray(x), axis=0), axis=1)
    np.testing.assert_allclose(sections, 0.01, rtol=1e-3)  # nearly inextensible
    assert float(jnp.max(x[:, 1])) > -0.02  # bows inwards, towards the ring centre (+y)


def test_virtual_spring_polynomial_and_stiffness_profile(paper):
    """Eq. (41) polynomial (fitted over F_c in [0, F_A]) reproduces the static solves; its k_v(0) equals the
    Hessian-based stiffness; pushing against the bow softens (paper's a < 0), along the bow stiffens; the
    stiffness profile (configured clamped ends) is symmetric, largest next to the ends, with a local maximum at
    the middle and minima near the quarter points."""
    model, depths = paper["model"], np.asarray(paper["model"].fit_depths)
    k = np.asarray(paper["profile"])  # index i <-> node i + 2 (1-based)
    f16, f5 = paper["springs"].forces[NODES.index(16)], paper["springs"].forces[NODES.index(5)]
    for forces, k_lin in ((f16, k[14]), (f5, k[3])):
        keep = np.cumprod(np.asarray(forces) <= float(model.fit_max_force)).astype(bool)
        assert keep.sum() >= 9  # fit over F_c in [0, F_A] (node 5 reaches F_A = 8 N at ~5 mm)
        coef = fit_polynomial(jnp.asarray(depths), forces, model.degree, jnp.asarray(keep, float))
        fitted = VirtualSpringLaw(coef, 0.0, 1.0).elastic_force(jnp.asarray(depths))
        np.testing.assert_allclose(np.asarray(fitted)[keep], np.asarray(forces)[keep], rtol=1e-2)
        assert float(coef[0]) == pytest.approx(float(k_lin), rel=2e-2)
    small = depths <= 0.004
    a16 = np.polyfit(depths[small], np.asarray(f16)[small], 2)[0]
    along = np.polyfit(np.asarray(paper["along_depths"]), np.asarray(paper["f16_along"]), 2)[0]
    assert a16 < 0.0 < along
    np.testing.assert_allclose(k, k[::-1], rtol=1e-6)
    assert k[0] > k[14] > max(k[8], k[18])  # node 2 > node 16 > nodes 10, 20
    assert int(np.argmin(k[:15])) + 2 in range(6, 11)  # softest near the quarter point


def test_paper_peak_ordering_at_the_configured_end_condition(paper):
    """Validation against the paper (Section 4.2, 0.06 m/s): the peaks at nodes 5 and 25 are "relatively
    large", at nodes 10 and 20 "relatively small". The configured clamped ends (k_tor identified from the
    node-16 peaks) reproduce all four orderings; pinned ends do not (node 25 < node 10 there; see
    experiments/results/snare/summary.json, "end_conditions"). NOT reproduced, pinned here as a regression:
    the magnitudes (model 2.0-3.0 N, paper 2.66-6.22 N, max/min 1.5 vs 2.4) and node 16, a local stiffness
    maximum of the model (3.0 N) where the paper measured 2.76 N, near its minimum."""
    assert paper["scenario"].rope.end_condition == "clamped"
    impacts = paper["impacts"]
    assert np.all(np.asarray(impacts.status) == Status.OK)
    assert np.all(np.asarray(impacts.max_indentation) <= np.asarray(paper["springs"].fit_limit))  # fitted range
    peak = dict(zip(NODES, np.asarray(impacts.peak_force).tolist()))
    assert min(peak[5], peak[25]) > max(peak[10], peak[20])  # the paper's claim
    np.testing.assert_allclose([peak[n] for n in NODES], [2.99, 2.27, 2.03, 2.30, 3.04], rtol=0.03)  # regression


@pytest.mark.slow  # compile-heavy; the virtual-spring impact and its gradient are checked fast above
def test_design_metrics_of_the_virtual_spring():
    """The scenario's design metrics with ``simulation.method = "virtual"`` (a 6-section rope, nodes batched by
    ``vmap`` through ``with_design``): status ok, the headline peak is the virtual spring's, the indentation
    stays inside the fitted range, impulse = (1 + e) m v, and the metrics equal the run's (``simulate``)."""
    scenario = load_scenario(CONFIG, [*SMALL, "simulation.method='virtual'"])
    metrics = eqx.filter_jit(jax.vmap(lambda s, n: s.metrics(s.with_design(s.params, {"strike.node": n})),
                                      in_axes=(None, 0)))(scenario, jnp.array([3.0, 4.0, 5.0]))
    assert np.all(np.asarray(metrics["status"]) == Status.OK)
    np.testing.assert_array_equal(metrics["peak_force_N"], metrics["virtual_peak_force_N"])
    assert np.all(np.asarray(metrics["fit_range_fraction"]) <= 1.0)
    np.testing.assert_allclose(metrics["impulse_N_s"], (1 + np.asarray(metrics["restitution"])) * 1.79 * 0.06,
                               rtol=1e-8)
    peaks = np.asarray(metrics["peak_force_N"])
    assert peaks[0] == pytest.approx(peaks[2], rel=1e-6)  # nodes 3 and 5 of 6 sections: mirror images
    assert "dynamic_peak_force_N" not in metrics


@pytest.fixture(scope="module")
def ends():
    """Installed shape, stiffness profile and end moments with pinned and clamped ends at the same k_tor, and
    the clamped fittings of a snare whose rotating ring turns at 10 deg/s."""
    @eqx.filter_jit
    def statics(scenario):
        model = scenario.model_of(scenario.params)
        x, ok = initial_shape(model)
        attach = model.rings.attachments(0.0)
        residual = static_residual(model.rope, x[1:-1], x[0], x[-1], attach=attach)
        turning = eqx.tree_at(lambda m: m.rings.ring_rate, model, jnp.deg2rad(10.0))
        return {"model": model, "x": x, "ok": ok, "profile": stiffness_profile(model, x), "residual": residual,
                "moments": model.rope.end_moments(x, attach), "tension": model.rope.tensions(x, jnp.zeros_like(x)),
                "attach_t": jax.vmap(turning.rings.attachment_states)(jnp.array([0.0, 1.5]))}

    out = {}
    for ec in ("pinned", "clamped"):
        res = statics(_scenario(f"rope.end_condition='{ec}'", "rope.bending_stiffness_N_m_rad=2.0915"))
        out[ec] = {k: v if k == "model" else np.asarray(v) if not isinstance(v, tuple) else tuple(map(np.asarray, v))
                   for k, v in res.items()}
        assert bool(out[ec]["ok"])
    return out


def test_pinned_installed_shape_is_unchanged(ends):
    """Regression: the pinned installed shape (k_tor = 2.0915) is the one before end conditions existed."""
    x = ends["pinned"]["x"]
    expected = np.array([[-1.2288718722426546e-01, -6.7804443678728898e-02],
                         [-1.0049710117100794e-01, -4.7852851755822448e-02],
                         [0.0, -8.7385584288705749e-03],
                         [1.0817005737340564e-01, -5.4265348837658801e-02]])
    np.testing.assert_allclose(x[[1, 4, 15, 27], :2], expected, rtol=0.0, atol=1e-12)
    np.testing.assert_allclose(ends["pinned"]["moments"], 0.0, atol=0.0)


def test_clamped_installation_is_unstressed_and_fittings_turn_with_the_ring(ends):
    """Unstressed installation: the clamped installed shape is the pinned one, a static equilibrium (1e-9 of
    the section forces) with zero end moments; the fitting angles are mirror-symmetric; the fixed-ring fitting
    stays put while the rotating-ring fitting turns with the ring (10 deg/s for 1.5 s), rate = omega x t_B.
    Clamps only add stiffness: k_v(0) is larger at every node."""
    p, c = ends["pinned"], ends["clamped"]
    scale = np.max(np.abs(c["tension"]))
    np.testing.assert_allclose(c["x"], p["x"], rtol=0.0, atol=1e-9 * 0.3)
    assert np.max(np.abs(c["residual"])) < 1e-9 * scale
    assert np.max(np.abs(c["moments"])) < 1e-9 * scale * 0.01
    angles = np.asarray(c["model"].rings.attach_angles)
    assert angles[0] == pytest.approx(angles[1], abs=1e-9) and 0.1 < abs(angles[0]) < 0.5
    (att, rate) = c["attach_t"]
    e_first, e_last = np.diff(c["x"][:2], axis=0)[0], np.diff(c["x"][-2:], axis=0)[0]
    np.testing.assert_allclose(att[0, 0], e_first / np.linalg.norm(e_first), atol=1e-12)  # t_A = e_1 installed
    np.testing.assert_allclose(att[0, 1], e_last / np.linalg.norm(e_last), atol=1e-12)  # t_B = e_N installed
    np.testing.assert_allclose(att[1, 0], att[0, 0], atol=1e-15)
    turn = np.arctan2(np.cross(att[0, 1], att[1, 1])[2], att[0, 1] @ att[1, 1])
    assert turn == pytest.approx(np.deg2rad(15.0), rel=1e-12)
    np.testing.assert_allclose(rate[1, 1], np.cross([0.0, 0.0, np.deg2rad(10.0)], att[1, 1]), atol=1e-15)
    np.testing.assert_allclose(rate[:, 0], 0.0, atol=1e-15)
    assert np.all(c["profile"] > p["profile"])


def test_virtual_spring_impact_matches_the_linear_oscillator_and_its_gradient():
    """Eq. (43) with c_v = 0 and a linear spring is an undamped oscillator: peak force v sqrt(k m) (and
    jax.grad of it w.r.t. v through the impact events: sqrt(k m)), contact time pi sqrt(m / k), restitution
    1 and impulse 2 m v (1e-8: event location and integration at rtol 1e-10); a softening polynomial (the
    paper's a < 0) peaks lower and releases later."""
    m, k, v = 1.79, 1900.0, 0.06

    def peak(speed, coefficients):
        out = virtual_impact(coefficients, 0.0, m, speed)
        return out.peak_force, out

    value_grad = jax.jit(jax.value_and_grad(peak, has_aux=True))
    (_, linear), slope = value_grad(v, jnp.array([k, 0.0, 0.0]))
    assert float(linear.peak_force) == pytest.approx(v * np.sqrt(k * m), rel=1e-9)
    assert float(slope) == pytest.approx(np.sqrt(k * m), rel=1e-9)
    assert float(linear.contact_duration) == pytest.approx(np.pi * np.sqrt(m / k), rel=1e-9)
    assert float(linear.restitution) == pytest.approx(1.0, abs=1e-8)
    assert float(linear.impulse) == pytest.approx(2 * m * v, rel=1e-8)
    (_, soft), _ = value_grad(v, jnp.array([k, -1.2e5, 0.0]))
    assert float(soft.peak_force) < float(linear.peak_force)
    assert float(soft.contact_duration) > float(linear.contact_duration)


@pytest.mark.slow
def test_metric_gradients_match_finite_differences():
    """jax.grad of the design metrics' peak force (virtual spring: through the static solves, the polynomial
    fit and the impact events) w.r.t. the approach speed and k_tor, vs central differences."""
    scenario = load_scenario(CONFIG, [*SMALL, "simulation.method='virtual'"])

    def peak(values):
        m = scenario.metrics(scenario.with_design(scenario.params, values))
        return m["peak_force_N"], m["status"]

    value_grad = jax.jit(jax.value_and_grad(peak, has_aux=True))
    x0 = {"strike.approach_speed_m_s": jnp.asarray(0.06), "rope.bending_stiffness_N_m_rad": jnp.asarray(1.5)}
    (f0, status), grads = value_grad(x0)
    assert int(status) == Status.OK and 0.5 < float(f0) < 20.0
    for key, h in (("strike.approach_speed_m_s", 1e-5), ("rope.bending_stiffness_N_m_rad", 1e-5)):
        up, down = dict(x0), dict(x0)
        up[key], down[key] = x0[key] * (1 + h), x0[key] * (1 - h)
        fd = (value_grad(up)[0][0] - value_grad(down)[0][0]) / (2 * h * x0[key])
        assert float(grads[key]) == pytest.approx(float(fd), rel=1e-5)
        assert float(grads[key]) > 0.0


@pytest.mark.parametrize("overrides", [[], ["rope.end_condition='pinned'", "snare.end_distance_m=0.25"]],
                         ids=["clamped", "pinned"])
def test_one_continuation_equals_the_installation_the_shape_solve_and_the_pressing_curve(overrides):
    """shape_and_pressing_curve (the clamps' installation and the free equilibrium as the first, force-free Newton
    solves of the pressing continuation) against install_clamps, initial_shape and pressing_curve: fitting angles,
    shapes, forces and the gradient of a force with respect to k_tor to round-off, at two nodes (the node traced),
    and at another end distance with the clamps installed at the model's own."""
    scenario = load_scenario(CONFIG, [*SMALL, *overrides])

    def both(k_tor, node, distance):
        params = scenario.with_design(scenario.params, {"rope.bending_stiffness_N_m_rad": k_tor})
        raw = scenario.model_of(params, installed=False)
        model = eqx.tree_at(lambda m: m.rings.end_distance, install_clamps(raw), distance)
        x, ok = initial_shape(model)
        forces, ok_f = pressing_curve(model, x, node)
        at = eqx.tree_at(lambda m: m.rings.end_distance, raw, distance)
        one = shape_and_pressing_curve(at, node, installed_at=raw.rings.end_distance)
        return ((model.rings.attach_angles, x, forces[-1], ok & ok_f),
                (one.attach_angles, one.shape, one.forces[-1], one.shape_converged & one.forces_converged))

    run = jax.jit(both)
    for node, distance in ((2, 0.26), (4, 0.26), (3, 0.25)):
        (angles, x, f, ok), (angles1, x1, f1, ok1) = run(2.0, node, distance)
        assert bool(ok) and bool(ok1) and float(f) > 0.0
        np.testing.assert_allclose(angles1, angles, rtol=0, atol=1e-12)
        np.testing.assert_allclose(x1, x, rtol=0, atol=1e-13)
        assert float(f1) == pytest.approx(float(f), rel=1e-10)
    two, one = jax.jit(jax.jacobian(lambda k: jnp.stack([out[2] for out in both(k, 3, 0.25)])))(2.0)
    assert float(one) == pytest.approx(float(two), rel=1e-9) and float(two) > 0.0


def test_a_strike_beyond_its_step_budget_fails_and_says_why():
    """A horizon that needs more stable steps than simulation.max_steps allows: the strike is a solver_failure
    (the steps are not silently stretched past the stability limit) and the diagnosis names the setting."""
    scenario = load_scenario(CONFIG, [*SMALL, "simulation.max_steps=1000"])
    out = jax.jit(lambda s: s.simulate(s.params))(scenario)
    assert int(out.dynamic.status) == Status.SOLVER_FAILURE and int(out.status) == Status.SOLVER_FAILURE
    assert "simulation.max_steps = 1000" in scenario.diagnose(out)
    assert int(out.dynamic.num_steps) <= 1000


@pytest.mark.slow
def test_dynamic_rope_gradients_match_finite_differences():
    """jax.grad of the peak force through the full dynamic rope impact (w.r.t. approach speed and k_tor,
    including the clamp installation and initial-shape solves) and through the virtual-spring impact events
    (w.r.t. speed) agree with central differences (each function compiled once: the differences reuse it)."""
    scenario = load_scenario(CONFIG, SMALL)

    def dynamic(speed, k_tor):
        model = scenario.model_of(scenario.with_design(scenario.params, {"rope.bending_stiffness_N_m_rad": k_tor}))
        x, _ = initial_shape(model)
        res = dynamic_impact(model, x, 3, speed, 0.25, SolverSettings(1e-9, 1e-12, n_save=300, max_steps=20_000))
        return res.peak_force, res.status

    value_grad = jax.jit(jax.value_and_grad(dynamic, argnums=(0, 1), has_aux=True))
    (f0, status), (g_v, g_k) = value_grad(0.06, 2.0)
    assert int(status) == Status.OK and 1.0 < float(f0) < 10.0
    h = 1e-4
    fd_v = (value_grad(0.06 * (1 + h), 2.0)[0][0] - value_grad(0.06 * (1 - h), 2.0)[0][0]) / (2 * h * 0.06)
    fd_k = (value_grad(0.06, 2.0 * (1 + h))[0][0] - value_grad(0.06, 2.0 * (1 - h))[0][0]) / (2 * h * 2.0)
    assert float(g_v) == pytest.approx(float(fd_v), rel=2e-3)
    assert float(g_k) == pytest.approx(float(fd_k), rel=2e-3)
    assert float(g_v) > 0.0 and float(g_k) > 0.0

    model = scenario.model_of(scenario.params)
    coef = jnp.array([1500.0, -1.2e5, 5.0e6])  # a softening virtual spring (paper-like, Eq. (41))
    peak = jax.jit(jax.value_and_grad(lambda v: snare_virtual_impact(model, coef, v).peak_force))
    f1, g = peak(0.06)
    fd = (peak(0.06 * (1 + 1e-5))[0] - peak(0.06 * (1 - 1e-5))[0]) / (2e-5 * 0.06)
    assert float(g) == pytest.approx(float(fd), rel=1e-4)
    assert float(g) < float(f1) / 0.06  # softening: peak grows slower than linearly with speed


def _strike(scenario, speed, k_tor, rtol=1e-6, atol=1e-9, **options):
    """Peak force, impulse, rebound speed, shaft momentum change and status of the full rope's strike."""
    model = scenario.model_of(scenario.with_design(scenario.params, {"rope.bending_stiffness_N_m_rad": k_tor}))
    x, _ = initial_shape(model)
    res = dynamic_impact(model, x, 3, speed, 0.25, SolverSettings(rtol, atol, n_save=300, max_steps=100_000), **options)
    return res.peak_force, (res.impulse, res.rebound_speed, res.status)


@pytest.mark.parametrize("overrides, speed", [
    pytest.param([], 0.06, id="shipped-speed"),
    pytest.param(["rope.axial_rigidity_N=5e5"], 0.2, id="stiff-fast", marks=pytest.mark.slow),
])
def test_semi_implicit_strike_converges_to_the_adaptive_solve_at_second_order(overrides, speed):
    """The fixed-step strike (Newmark average acceleration for the axial and contact springs and dashpots, bending
    explicit) against Tsit5 at rtol 1e-9 on a 6-section rope at 0.06 m/s and (slow), stiffer than any shipped rope,
    EA = 5e5 N at 0.2 m/s (implicit axially: the same steps): ok, peak force, impulse and rebound within 2e-3 at
    4e-5, 2e-5 and 1e-5 s, the peak's error falling about 4x per halving of the step (second order; checked at
    the shipped speed); the contact impulse is the shaft's momentum change to round-off."""
    scenario = load_scenario(CONFIG, [*SMALL, *overrides])
    strike = jax.jit(lambda v, k, h: _strike(scenario, v, k, scheme="semi_implicit", max_step=h))
    ref_peak, (ref_impulse, ref_rebound, ref_status) = jax.jit(
        lambda v, k: _strike(scenario, v, k, rtol=1e-9, atol=1e-12))(speed, 2.0)
    assert int(ref_status) == Status.OK
    errors = []
    for h in (4e-5, 2e-5, 1e-5):
        peak, (impulse, rebound, status) = strike(speed, 2.0, h)
        assert int(status) == Status.OK
        errors.append(abs(float(peak) / float(ref_peak) - 1.0))
        assert float(impulse) == pytest.approx(float(ref_impulse), rel=2e-3)
        assert float(rebound) == pytest.approx(float(ref_rebound), rel=2e-3)
    assert errors[-1] < 2e-3, errors
    model = scenario.model_of(scenario.params)  # the shaft gets exactly the force the nodes got
    sol, u = jax.jit(lambda m: rope_impact_solve(m, initial_shape(m)[0], 3, speed, 0.25,
                                                 SolverSettings(n_save=3), scheme="semi_implicit"))(model)
    _, _, _, w, impulse = sol.ys
    np.testing.assert_allclose(impulse[-1], 1.79 * (w[-1] - speed * u), rtol=1e-10, atol=1e-14)
    if not overrides:
        assert errors[0] / errors[1] > 3.0 and errors[1] / errors[2] > 3.0, errors


def test_semi_implicit_strike_gradients_match_finite_differences():
    """jax.grad of the fixed-step strike's peak force w.r.t. approach speed and k_tor (through the clamp
    installation and initial-shape solves) against central differences of the same scheme (steps of 2e-5 s)."""
    scenario = load_scenario(CONFIG, SMALL)
    peak = lambda v, k: _strike(scenario, v, k, scheme="semi_implicit", max_step=2e-5)  # noqa: E731
    (f0, (_, _, status)), (g_v, g_k) = jax.jit(jax.value_and_grad(peak, argnums=(0, 1), has_aux=True))(0.06, 2.0)
    assert int(status) == Status.OK
    value, h = jax.jit(lambda v, k: peak(v, k)[0]), 1e-4
    fd_v = (value(0.06 * (1 + h), 2.0) - value(0.06 * (1 - h), 2.0)) / (2 * h * 0.06)
    fd_k = (value(0.06, 2.0 * (1 + h)) - value(0.06, 2.0 * (1 - h))) / (2 * h * 2.0)
    assert float(g_v) == pytest.approx(float(fd_v), rel=2e-3) and float(g_v) > 0.0
    assert float(g_k) == pytest.approx(float(fd_k), rel=2e-3) and float(g_k) > 0.0


@pytest.mark.slow
def test_arm_effective_mass():
    """Rod-tip effective mass of esd_arm7 at the paper's joint angles: free joints 2, 4, 6 give less
    resistance than all joints locked, and both are below the total mass (116.1 kg). Slow: ~10 s of compiles."""
    scenario = load_scenario(CONFIG)
    masses = dict(scenario.arm_masses)
    assert masses["selected"] == pytest.approx(1.870, abs=1e-3)
    assert float(scenario.striking_mass(scenario.params)) == pytest.approx(1.870 * 41.7 / (1.870 + 41.7), abs=1e-3)
    assert masses["free_rod_normal"] < masses["locked_rod_normal"] < 116.1
    assert masses["free_rod_axis"] < masses["locked_rod_axis"] < 116.1


def test_design_space_and_measured_data(tmp_path):
    """Design keys write the params (node rounded to an integer, rates in rad/s, the mass key of the mass
    source); unknown keys and bad data rows raise ConfigError naming them; data rows set node and speed."""
    scenario = _scenario()
    keys = [p.key for p in scenario.design_space()]
    assert "strike.node" in keys and "strike.mass_kg" in keys and "strike.target_mass_kg" not in keys
    assert scenario.parameter("strike.node").integer
    p = scenario.with_design(scenario.params, {"strike.node": 5.0, "snare.ring_rate_deg_s": 10.0, "strike.mass_kg": 2.0})
    assert int(p.node) == 5 and float(p.ring_rate) == pytest.approx(np.deg2rad(10.0)) and float(p.mass) == 2.0
    with pytest.raises(ConfigError, match="strike.target_mass_kg"):
        scenario.with_design(scenario.params, {"strike.target_mass_kg": 40.0})
    good = tmp_path / "peaks.csv"
    good.write_text("node,speed_m_s,peak_force_N\n16,0.06,2.76\n5,0.08,3.5\n")
    data = scenario.read_data(good)
    np.testing.assert_array_equal(data.conditions["strike.node"], [16.0, 5.0])
    np.testing.assert_array_equal(data.measured["peak_force_N"], [2.76, 3.5])
    assert not data.absolute_sigma  # relative residuals
    bad = tmp_path / "bad.csv"
    bad.write_text("node,speed_m_s,peak_force_N\n31,0.06,2.76\n16,-0.1,3.0\n")
    with pytest.raises(ConfigError, match=r"row 1, column node(.|\n)*row 2, column speed_m_s"):
        scenario.read_data(bad)


@pytest.mark.parametrize("override, key", [
    ("rope.length_m=-0.3", "rope.length_m"),
    ("rope.linear_density_kg_m=0", "rope.linear_density_kg_m"),
    ("rope.bending_stiffness_N_m_rad=0", "rope.bending_stiffness_N_m_rad"),
    ("rope.axial_rigidity_N=-1", "rope.axial_rigidity_N"),
    ("strike.mass_kg=0", "strike.mass_kg"),
    ("strike.node=31", "strike.node"),
    ("strike.node=1", "strike.node"),
    ("contact.law='bogus'", "contact.law"),
    ("snare.end_distance_m=0.31", "snare.end_distance_m"),
    ("rope.end_condition='welded'", "rope.end_condition"),
    ("simulation.method='exact'", "simulation.method"),
])
def test_bad_inputs_name_the_key(override, key, tmp_path, capsys):
    """Non-positive length/mass/stiffness, nodes out of range, unknown laws: exit 2 naming the key."""
    assert main(["run", str(CONFIG), "--out", str(tmp_path), "--set", override]) == 2
    err = capsys.readouterr().err
    assert key in err and "Traceback" not in err


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_cli_run_sweep_optimize_and_fit(tmp_path):
    """`diffspace run` writes the summary, series and plots (dynamic and virtual peaks within 5 %); `sweep`
    over node and speed (full dynamic rope) gives the same peak as `run` at the configured point; `optimize` (virtual spring,
    two nodes) respects the force limit; `fit`
    (virtual spring) recovers k_tor from a peak the model itself predicts, and its fitted.toml runs."""
    small = [a for s in SMALL for a in ("--set", s)]
    assert main(["run", str(CONFIG), "--out", str(tmp_path / "run"), *small]) == 0
    s = json.loads((tmp_path / "run" / "summary.json").read_text())
    for name in ("timeseries.csv", "virtual_timeseries.csv", "pressing_curve.csv", "force_time.png", "rope_shape.png"):
        assert (tmp_path / "run" / name).is_file()
    assert s["status"] == "ok" and s["dynamic_peak_force_N"] == pytest.approx(s["virtual_peak_force_N"], rel=0.05)
    assert s["static_residual_max_N"] < 1e-8 and s["virtual_within_fit_range"]

    sweep = ["--set", 'sweep.axes={"strike.node" = [3, 4], "strike.approach_speed_m_s" = [0.06, 0.08]}']
    dynamic = [*small, "--set", "simulation.method='dynamic'"]
    assert main(["sweep", str(CONFIG), "--out", str(tmp_path / "sweep"), *dynamic, *sweep, "--quiet"]) == 0
    with (tmp_path / "sweep" / "results.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 4 and all(r["status"] == "ok" for r in rows)
    row = next(r for r in rows if float(r["strike.node"]) == 3 and float(r["strike.approach_speed_m_s"]) == 0.06)
    assert float(row["peak_force_N"]) == pytest.approx(s["dynamic_peak_force_N"], rel=1e-9)

    virtual = [*small, "--set", "simulation.method='virtual'"]
    opt = ["--set", 'optimize.choices={"strike.node" = [3, 4]}', "--set", "optimize.steps=10",
           "--set", "optimize.sweep_samples=8", "--set", "optimize.n_starts=2"]
    assert main(["optimize", str(CONFIG), "--out", str(tmp_path / "opt"), *virtual, *opt, "--quiet"]) == 0
    o = json.loads((tmp_path / "opt" / "summary.json").read_text())
    assert o["optimum_metrics"]["peak_force_N"] <= 4.0 * (1 + 1e-6)

    data = tmp_path / "peaks.csv"
    data.write_text("node,speed_m_s,peak_force_N\n3,0.06,{:.15g}\n".format(s["virtual_peak_force_N"]))
    assert main(["fit", str(CONFIG), "--data", str(data), "--out", str(tmp_path / "fit"), *virtual,
                 "--set", "rope.bending_stiffness_N_m_rad=1.0"]) == 0
    f = json.loads((tmp_path / "fit" / "summary.json").read_text())
    assert f["fitted"]["rope.bending_stiffness_N_m_rad"] == pytest.approx(1.5532, rel=1e-6)
    assert main(["run", str(tmp_path / "fit" / "fitted.toml"), "--out", str(tmp_path / "rerun")]) == 0
