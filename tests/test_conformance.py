"""Every scenario on the protocol, as a user meets it: every shipped config loads, its design variables round-trip
through ``with_design``, every scenario runs (short horizons) and its headline gradient matches central
differences.

The round trips check the declarations themselves: each :class:`~diffspace.scenarios.Parameter` names the leaf
and element it sets and converts its unit once, so reading the config, ``with_design`` and the values written
back (``resolved_config``, ``fitted.toml``, ``optimum.toml``) agree.
"""

from __future__ import annotations

import json
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from diffspace.io.config import get_key, read_toml
from diffspace.io.results import write_summary
from diffspace.scenarios import REGISTRY, load_scenario
from diffspace.core.status import failed

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = sorted((ROOT / "configs").glob("*.toml"))

# one shipped config per scenario and the overrides that keep its run short (its own tests run the full cases)
SHORT = {
    "ejection": ("ejection_plane.toml", []),
    "free_floating": ("free_floating.toml", ["simulation.t_final_s=0.5"]),
    "impact": ("impact_airtable.toml", []),
    "capture": ("capture.toml", []),
    "snare": ("snare_capture.toml", ['simulation.method="virtual"']),
    "snare_closing": ("snare_closing.toml", [  # the ring closing from 40 to 58 deg in 0.2 s on an off-axis shaft
        "rope.n_sections=8", "rope.axial_rigidity_N=5000", "drive.start_angle_deg=40", "drive.final_angle_deg=58",
        "drive.duration_s=0.2", "closing.end_time_s=0.2", "shaft.initial_position_m=[0.0, -0.03]",
        "shaft.initial_velocity_m_s=[0.0, 0.0]", "simulation.rtol=1e-10", "simulation.atol=1e-13",
        "simulation.n_save=80", "simulation.max_steps=100000"]),
    "deployment": ("deployment_scheme1.toml", ['interface.model="beam"', "drive.duration_s=1.0",
                                               "simulation.step_s=0.005", "simulation.settle_s=0.3"]),
    "unilateral": ("unilateral_contact.toml", ["unilateral.t_final_s=1.0"]),
    "flexible_arm": ("flexible_arm.toml", ["simulation.t_final_s=0.5"]),
    "capture_snare": ("capture_snare_optimize.toml", []),
}
# headline gradients whose compile and finite differences take minutes run in the slow suite (each scenario's
# own tests keep a fast gradient check)
SLOW_GRADIENT = {"ejection", "capture", "deployment", "snare_closing", "flexible_arm", "snare", "capture_snare"}
# runs whose compile takes minutes on 2 cores run in the slow suite (their own test files run them in the fast one)
SLOW_RUN = {"ejection", "snare", "snare_closing", "flexible_arm", "capture_snare"}


def test_every_scenario_has_a_short_case():
    assert set(SHORT) == set(REGISTRY)
    shipped = {p.name for p in CONFIGS}
    assert all(config in shipped for config, _ in SHORT.values())


def _leaves(params):
    return [np.asarray(x) for x in jax.tree_util.tree_leaves(params)]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda p: p.stem)
def test_design_variables_round_trip(config):
    """For every design key: the config's own value (where the config gives one) is what the params hold;
    writing the value read back changes nothing; writing another value changes exactly the declared element,
    by the declared unit conversion, and reads back."""
    scenario = load_scenario(config)
    raw = read_toml(config)
    params = scenario.params
    values = scenario.design_values()
    assert set(values) == {p.key for p in scenario.design_space()}
    same = scenario.with_design(params, values)
    for a, b in zip(_leaves(params), _leaves(same)):
        np.testing.assert_allclose(a, b, rtol=1e-15, atol=0)
    for p in scenario.design_space():
        try:
            given = get_key(raw, p.key)
        except (KeyError, IndexError, TypeError):
            given = None
        if isinstance(given, (int, float)) and not isinstance(given, bool):
            assert values[p.key] == pytest.approx(given, rel=1e-12, abs=1e-15), p.key  # one conversion
        new = _other_value(p, values[p.key])
        changed = scenario.with_design(params, {p.key: new})
        assert scenario.design_values(changed)[p.key] == pytest.approx(new, rel=1e-12), p.key
        differing = [i for i, (a, b) in enumerate(zip(_leaves(params), _leaves(changed))) if not np.array_equal(a, b)]
        assert len(differing) == 1, (p.key, differing)
        before, after = _leaves(params)[differing[0]], _leaves(changed)[differing[0]]
        assert list(np.flatnonzero(np.ravel(before != after))) == [p.index or 0], p.key
        expected = new if p.integer else new * p.to_si
        assert np.ravel(after)[p.index or 0] == pytest.approx(expected, rel=1e-14), p.key


def _other_value(p, current: float) -> float:
    """A value inside the bounds of ``p`` that differs from ``current``."""
    if p.integer:
        return p.lower if current != p.lower else p.lower + 1
    value = p.lower + 0.37 * (p.upper - p.lower)
    return value if value != current else p.lower + 0.61 * (p.upper - p.lower)


def test_resolved_config_names_every_design_value():
    """The resolved config carries the numbers a named attitude stands for, in config units."""
    scenario = load_scenario(ROOT / "configs" / "ejection_plane.toml")
    resolved = scenario.resolved_config({"ejection": {"attitude": "attitude_1"}})
    angles = np.rad2deg(np.asarray(scenario.robot.attitude("attitude_1")))
    np.testing.assert_allclose(resolved["ejection"]["attitude"], angles, rtol=1e-14)
    assert resolved["friction"]["viscous_N_m_s_rad"] == pytest.approx(5.4)


def _run_case(name):
    marks = [pytest.mark.slow, pytest.mark.timeout(1800)] if name in SLOW_RUN else [pytest.mark.timeout(900)]
    return pytest.param(name, marks=marks)


@pytest.mark.parametrize("name", [_run_case(n) for n in sorted(REGISTRY)])
def test_every_scenario_runs_and_reports(name, tmp_path):
    config, overrides = SHORT[name]
    scenario = load_scenario(ROOT / "configs" / config, overrides)
    outcome = jax.jit(type(scenario).simulate)(scenario, scenario.params)
    assert not failed(int(outcome.status)), scenario.diagnose(outcome)
    summary = scenario.summary(outcome)
    assert isinstance(summary.get("status"), str)
    written = json.loads(write_summary(tmp_path, summary).read_text())
    assert written["status"] == summary["status"]
    scenario.write(outcome, tmp_path)
    assert any(tmp_path.glob("*.png")) and (any(tmp_path.glob("*.csv")) or any(tmp_path.glob("*.npz")))
    metrics = scenario.metrics_names()
    assert metrics and all(isinstance(m, str) for m in metrics)


def _headline_case(name):
    marks = [pytest.mark.slow, pytest.mark.timeout(1800)] if name in SLOW_GRADIENT else [pytest.mark.timeout(600)]
    return pytest.param(name, marks=marks)


@pytest.mark.parametrize("name", [_headline_case(n) for n in sorted(REGISTRY)])
def test_headline_gradient_matches_central_differences(name):
    """``jax.grad`` of the headline metric with respect to the headline design variable equals the converged
    central difference (step h and h/2 agree with each other to the tolerance asked of the gradient)."""
    config, overrides = SHORT[name]
    scenario = load_scenario(ROOT / "configs" / config, overrides)
    assert scenario.headline is not None, f"{name}: no headline (metric, design key)"
    metric, key = scenario.headline
    parameter = scenario.parameter(key)
    x0 = scenario.design_values()[key]

    def headline(x):
        return scenario.metrics(scenario.with_design(scenario.params, {key: x}))[metric]

    value_and_grad = jax.jit(jax.value_and_grad(headline))
    value, grad = (float(v) for v in value_and_grad(jnp.asarray(x0)))
    assert np.isfinite(value) and np.isfinite(grad), (value, grad)
    forward = jax.jit(headline)
    h = 1e-4 * max(abs(x0), (parameter.upper - parameter.lower) * 1e-2)

    def central(step):
        return (float(forward(jnp.asarray(x0 + step))) - float(forward(jnp.asarray(x0 - step)))) / (2 * step)

    coarse, fine = central(h), central(h / 2)
    scale = max(abs(fine), 1e-12 * abs(value) / max(abs(x0), 1e-12))
    assert abs(coarse - fine) <= 1e-4 * scale, ("finite differences not converged", coarse, fine)
    assert abs(grad - fine) <= 2e-4 * scale, (grad, fine, coarse)
