"""Snare capture scenario: initial shape, virtual spring, gradients through the rope impact, config errors."""

import json
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from diffspace.app.cli import load_scenario, main
from diffspace.bodies.rope import bend_vectors, static_residual
from diffspace.scenarios import snare
from diffspace.scenarios import snare_design as sd
from diffspace.scenarios.snare_results import stiffness_profile

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "configs" / "snare_capture.toml"


def _cfg(*overrides):
    _, cfg = load_scenario(CONFIG, list(overrides))
    return cfg


@pytest.fixture(scope="module")
def paper():
    """The paper's rope (30 sections, d_se = 0.26 m) with its initial shape, stiffness profile and the
    static pressing curves at node 16 (against and along the bow) and node 5 (one vmapped solve)."""
    cfg = _cfg("virtual_spring.max_depth_m=0.008", "virtual_spring.n_depths=16")  # the range F_A = 8 N needs
    model = snare.build_model(cfg, 1.79)
    along_depths = jnp.linspace(0.0, 0.004, model.fit_depths.shape[0] + 1)[1:]  # taut beyond ~1 cm

    @eqx.filter_jit
    def statics(model):
        x, ok = sd.initial_shape(model)
        u16, u5 = sd.contact_direction(x, 15), sd.contact_direction(x, 4)
        f, ok_f = jax.vmap(lambda n, u, d: sd.pressing_curve(model, x, n, d, u))(
            jnp.array([15, 4, 15]), jnp.stack([u16, u5, -u16]), jnp.stack([model.fit_depths, model.fit_depths, along_depths]))
        residual = static_residual(model.rope, x[1:-1], x[0], x[-1], attach=model.snare.attachments(0.0))
        return x, ok & jnp.all(ok_f), f, stiffness_profile(model, x), residual, bend_vectors(x)

    x, ok, f, profile, residual, bends = statics(model)
    assert bool(ok)
    return {"cfg": cfg, "model": model, "x": x, "f16": f[0], "f5": f[1], "f16_along": f[2], "residual": residual,
            "bends": bends, "along_depths": along_depths, "profile": np.asarray(profile)}


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
    k = paper["profile"]  # index i <-> node i + 2 (1-based)
    for forces, k_lin in ((paper["f16"], k[14]), (paper["f5"], k[3])):
        keep = np.cumprod(np.asarray(forces) <= float(model.fit_max_force)).astype(bool)
        assert keep.sum() >= 9  # fit over F_c in [0, F_A] (node 5 reaches F_A = 8 N at ~5 mm)
        coef = sd.fit_polynomial(jnp.asarray(depths), forces, model.degree, jnp.asarray(keep, float))
        fitted = jax.vmap(sd.VirtualSpringLaw(coef, 0.0, 1.0).elastic_force)(jnp.asarray(depths))
        np.testing.assert_allclose(np.asarray(fitted)[keep], np.asarray(forces)[keep], rtol=1e-2)
        assert float(coef[0]) == pytest.approx(float(k_lin), rel=2e-2)
    small = depths <= 0.004
    a16 = np.polyfit(depths[small], np.asarray(paper["f16"])[small], 2)[0]
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
    model = paper["model"]
    assert model.rope.end_condition == "clamped"
    nodes = [5, 10, 20, 25, 16]
    res = eqx.filter_jit(jax.vmap(lambda n: sd.snare_contact(model, n, 0.06, "virtual")))(jnp.array(nodes))
    assert bool(jnp.all(res["ok"])) and bool(jnp.all(res["within_fit_range"]))
    peak = dict(zip(nodes, np.asarray(res["peak_force_N"]).tolist()))
    assert min(peak[5], peak[25]) > max(peak[10], peak[20])  # the paper's claim
    np.testing.assert_allclose([peak[n] for n in nodes], [2.99, 2.27, 2.03, 2.30, 3.04], rtol=0.03)  # regression


@pytest.fixture(scope="module")
def ends():
    """Installed shape, stiffness profile and end moments with pinned and clamped ends at the same k_tor, and
    the clamped fittings of a snare whose rotating ring turns at 10 deg/s."""
    @eqx.filter_jit
    def statics(model):
        x, ok = sd.initial_shape(model)
        attach = model.snare.attachments(0.0)
        residual = static_residual(model.rope, x[1:-1], x[0], x[-1], attach=attach)
        turning = eqx.tree_at(lambda m: m.snare.ring_rate, model, jnp.deg2rad(10.0))
        return {"x": x, "ok": ok, "profile": stiffness_profile(model, x), "residual": residual,
                "moments": model.rope.end_moments(x, attach), "tension": model.rope.tensions(x, jnp.zeros_like(x)),
                "attach_t": jax.vmap(turning.snare.attachment_states)(jnp.array([0.0, 1.5]))}

    out = {}
    for ec in ("pinned", "clamped"):
        model = snare.build_model(_cfg(f"rope.end_condition='{ec}'", "rope.bending_stiffness_N_m_rad=2.0915"), 1.79)
        out[ec] = {"model": model, **{k: np.asarray(v) if not isinstance(v, tuple) else tuple(map(np.asarray, v))
                                      for k, v in statics(model).items()}}
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
    angles = np.asarray(c["model"].snare.attach_angles)
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


@pytest.mark.slow
def test_contact_gradients_match_finite_differences():
    """jax.grad of the peak force through the full dynamic rope impact (w.r.t. approach speed and k_tor,
    including the initial-shape solve) and through the virtual-spring impact events (w.r.t. speed) agree
    with central differences (each function compiled once: the differences reuse it)."""
    cfg = _cfg("rope.n_sections=6", "rope.axial_rigidity_N=5e3")

    def dynamic(speed, k_tor):
        model = snare.build_model(cfg, 1.79, k_tor)
        x, _ = sd.initial_shape(model)
        res = sd.dynamic_impact(model, x, 3, speed, 0.25, rtol=1e-9, atol=1e-12, n_save=300, max_steps=20_000)
        return res["peak_force_N"], res["ok"] & res["separated"]

    value_grad = jax.jit(jax.value_and_grad(dynamic, argnums=(0, 1), has_aux=True))
    (f0, ok), (g_v, g_k) = value_grad(0.06, 2.0)
    assert bool(ok) and 1.0 < float(f0) < 10.0
    h = 1e-4
    fd_v = (value_grad(0.06 * (1 + h), 2.0)[0][0] - value_grad(0.06 * (1 - h), 2.0)[0][0]) / (2 * h * 0.06)
    fd_k = (value_grad(0.06, 2.0 * (1 + h))[0][0] - value_grad(0.06, 2.0 * (1 - h))[0][0]) / (2 * h * 2.0)
    assert float(g_v) == pytest.approx(float(fd_v), rel=2e-3)
    assert float(g_k) == pytest.approx(float(fd_k), rel=2e-3)
    assert float(g_v) > 0.0 and float(g_k) > 0.0

    model = snare.build_model(cfg, 1.79)
    coef = jnp.array([1500.0, -1.2e5, 5.0e6])  # a softening virtual spring (paper-like, Eq. (41))
    peak = jax.jit(jax.value_and_grad(lambda v: sd.virtual_impact(model, coef, v)["peak_force_N"]))
    f1, g = peak(0.06)
    fd = (peak(0.06 * (1 + 1e-5))[0] - peak(0.06 * (1 - 1e-5))[0]) / (2e-5 * 0.06)
    assert float(g) == pytest.approx(float(fd), rel=1e-4)
    assert float(g) < float(f1) / 0.06  # softening: peak grows slower than linearly with speed


@pytest.mark.slow
def test_arm_effective_mass():
    """Rod-tip effective mass of esd_arm7 at the paper's joint angles: free joints 2, 4, 6 give less
    resistance than all joints locked, and both are below the total mass (116.1 kg). Slow: ~10 s of compiles."""
    masses = snare.striking_mass(_cfg())
    assert masses["arm_effective_mass_kg"] == pytest.approx(1.870, abs=1e-3)
    assert masses["striking_mass_kg"] == pytest.approx(1.870 * 41.7 / (1.870 + 41.7), abs=1e-3)
    assert masses["arm_mass_free_rod_normal_kg"] < masses["arm_mass_locked_rod_normal_kg"] < 116.1
    assert masses["arm_mass_free_rod_axis_kg"] < masses["arm_mass_locked_rod_axis_kg"] < 116.1


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
])
def test_bad_inputs_name_the_key(override, key, tmp_path, capsys):
    """Non-positive length/mass/stiffness, nodes out of range, unknown laws: exit 2 naming the key."""
    assert main(["run", str(CONFIG), "--out", str(tmp_path), "--set", override]) == 2
    err = capsys.readouterr().err
    assert key in err and "Traceback" not in err


@pytest.mark.slow
def test_cli_run_and_optimize(tmp_path):
    """`diffspace run` and `optimize` write their files; dynamic and virtual peaks agree within 5 %; the
    optimum respects the force limit in both models."""
    assert main(["run", str(CONFIG), "--out", str(tmp_path / "run")]) == 0
    s = json.loads((tmp_path / "run" / "summary.json").read_text())
    for name in ("timeseries.csv", "virtual_timeseries.csv", "pressing_curve.csv", "force_time.png", "rope_shape.png"):
        assert (tmp_path / "run" / name).is_file()
    assert s["dynamic_peak_force_N"] == pytest.approx(s["virtual_peak_force_N"], rel=0.05)
    assert s["static_residual_max_N"] < 1e-8 and s["virtual_within_fit_range"]
    assert main(["optimize", str(CONFIG), "--out", str(tmp_path / "opt"), "--set", "optimize.nodes=[5, 16]",
                 "--set", "optimize.steps=30"]) == 0
    o = json.loads((tmp_path / "opt" / "summary.json").read_text())
    assert o["best_virtual_peak_force_N"] <= o["force_limit_N"] * (1 + 1e-6)
    assert o["best_dynamic_peak_force_N"] <= o["force_limit_N"] * 1.05
    assert o["best_node_dynamic_peak_force_N"] == pytest.approx(o["force_limit_N"], rel=0.02)
    # clamped ends: node 5 and node 16 give the same peak at 0.06 m/s (2.99 vs 3.04 N), but node 5 stiffens
    # (4.04 N at 0.08 m/s) while node 16 softens as it is pushed against the bow (3.87 N): 16 allows more speed
    assert o["best_node"] == 16
