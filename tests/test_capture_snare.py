"""Capture through the snare (diffspace.scenarios.capture_snare): the capture's equivalent mass strikes one
rope node's virtual spring. Checks: the masses in series, the closing speed's geometry, the small-speed limit
of the impact (linear oscillator ``F = v sqrt(k_v0 m)``), energy conservation without damping, the node as
data, gradients vs central differences, and bad inputs naming their key."""

from pathlib import Path

import equinox as eqx
import jax
import numpy as np
import pytest

from diffspace.io.config import apply_overrides, read_toml
from diffspace.io.tables import dump_toml
from diffspace.scenarios import load_scenario
from diffspace.core.status import ConfigError, Status

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "configs" / "capture_snare_optimize.toml"
SMALL_SNARE = ["strike.mass_source='value'", "strike.node=3", "rope.n_sections=6", "rope.axial_rigidity_N=5e3", "virtual_spring.n_depths=8",
               "virtual_spring.max_depth_m=0.02", "virtual_spring.degree=3", "simulation.method='virtual'"]


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """The default capture with a 6-section rope (a short static table: one fast compile)."""
    folder = tmp_path_factory.mktemp("capture_snare")
    snare = apply_overrides(read_toml(ROOT / "configs" / "snare_capture.toml"), SMALL_SNARE)
    snare = {k: v for k, v in snare.items() if k not in ("optimize", "fit", "sweep")}
    snare["arm"]["robot"] = str(ROOT / "configs" / snare["arm"]["robot"])
    (folder / "snare.toml").write_text(dump_toml(snare))
    cfg = {k: v for k, v in read_toml(CONFIG).items() if k != "optimize"}
    cfg["robot"]["path"] = str(ROOT / "configs" / cfg["robot"]["path"])
    cfg["snare_strike"] = {"config": "snare.toml", "node": 3}
    (folder / "capture_snare.toml").write_text(dump_toml(cfg))
    return folder / "capture_snare.toml"


@pytest.fixture(scope="module")
def scenario(small):
    return load_scenario(small)


def test_masses_closing_speed_and_small_speed_limit(scenario):
    m_arm, m_target = float(scenario.arm_mass), float(scenario.target_mass)
    assert float(scenario.model.mass) == pytest.approx(m_arm * m_target / (m_arm + m_target), rel=1e-14)
    assert m_arm == pytest.approx(52.83, abs=0.01) and m_target == pytest.approx(11.63, abs=0.01)  # README

    angled = scenario.with_design(scenario.params, {"capture.approach_angles_deg[0]": 30.0})
    assert float(scenario.closing_speed(angled)) == pytest.approx(0.05 * np.cos(np.deg2rad(30.0)), rel=1e-12)

    simulate = eqx.filter_jit(lambda s, p: s.simulate(p))
    slow = scenario.with_design(scenario.params, {"capture.approach_speed_m_s": 1e-4})
    out = simulate(scenario, slow)
    k0, m = float(scenario.coefficients[1, 0]), float(scenario.model.mass)  # node 3 = row 1
    assert int(out.status) == Status.OK
    assert float(out.impact.peak_force) == pytest.approx(1e-4 * np.sqrt(k0 * m), rel=1e-3)  # linear limit
    full = simulate(scenario, scenario.params)
    assert int(full.status) == Status.OK
    assert float(full.impact.detached_velocity) == pytest.approx(0.05, rel=1e-6)  # c_v = 0: elastic
    mirror = simulate(scenario, scenario.with_design(scenario.params, {"snare_strike.node": 5.0}))
    assert float(mirror.impact.peak_force) == pytest.approx(float(full.impact.peak_force), rel=1e-6)  # 3 vs 5 of 6

    summary = scenario.summary(full)
    assert summary["status"] == "ok" and summary["node"] == 3


@pytest.mark.slow  # the virtual-spring impact's gradient is checked fast in test_snare.py
def test_gradient_of_the_peak_force_matches_central_differences(scenario):
    key = "capture.approach_angles_deg[0]"

    def peak(speed, angle):
        params = scenario.with_design(scenario.params, {"capture.approach_speed_m_s": speed, key: angle})
        return scenario.metrics(params)["peak_force_N"]

    grad = jax.jit(jax.grad(peak, argnums=(0, 1)))(0.05, 10.0)
    f = jax.jit(peak)
    for i, (x, h) in enumerate(((0.05, 1e-5), (10.0, 1e-3))):
        args = [0.05, 10.0]
        up, down = list(args), list(args)
        up[i], down[i] = x + h, x - h
        fd = (float(f(*up)) - float(f(*down))) / (2 * h)
        assert float(grad[i]) == pytest.approx(fd, rel=1e-5)


@pytest.mark.parametrize("override, key", [
    ("snare_strike.node=1", "snare_strike.node"),
    ("snare_strike.node=7", "snare_strike.node"),
    ("snare_strike.config='missing.toml'", "snare_strike.config"),
])
def test_bad_inputs_name_the_key(small, override, key):
    with pytest.raises(ConfigError, match=key.replace(".", r"\.").replace("[", r"\[")):
        load_scenario(small, [override])
