"""Joint limits in the ejection: hard stops (impact with restitution, held while pushed, energy budget with
the stop losses, gradients through the stop event), flagged crossings and ignored limits (issue 10)."""

from __future__ import annotations

import json
from pathlib import Path

import jax
import numpy as np
import pytest

import diffspace as ds
from diffspace.app.cli import main
from diffspace.scenarios import load_scenario
from diffspace.core.status import Status

CONFIG = Path(__file__).resolve().parent.parent / "configs" / "ejection_plane.toml"
DRIVEN = ["ejection.attitude=[0, 0, 0, 120, 0, 0, 0]", "ejection.spring_stiffness_N_m=1e5",
          "simulation.rtol=1e-10", "simulation.atol=1e-12", "simulation.max_segments=24"]
LIMIT = np.deg2rad(150.0)
JOINT4 = 1  # joint 4 is the second free joint (joints 2, 4, 6 free in plane mode)


@pytest.fixture(scope="module")
def stopped():
    return load_scenario(CONFIG, DRIVEN + ['ejection.limits="stop"'])


def _stop_event(outcome, scenario):
    """Index of the first segment that ended at joint 4's upper stop."""
    sol = outcome.solution
    theta = np.asarray(sol.segment_y.q[:, 7 + JOINT4])
    at_limit = np.asarray(sol.segment_event) & (np.abs(theta - LIMIT) < 1e-7)
    assert at_limit.any(), "joint 4 never reached its stop"
    return int(np.argmax(at_limit))


@pytest.mark.timeout(1200)
@pytest.mark.parametrize("restitution", [0.0, 0.5])
def test_stop_holds_the_joint_rebounds_with_restitution_and_energy_closes(stopped, restitution):
    scenario = stopped
    params = scenario.with_design(scenario.params, {"ejection.stop_restitution": restitution})
    outcome = jax.jit(type(scenario).simulate)(scenario, params)
    assert int(outcome.status) in (Status.OK, Status.NOT_SETTLED)
    theta = np.asarray(outcome.solution.ys.q[:, 7 + JOINT4])
    assert theta.max() <= LIMIT + 1e-8  # never beyond the stop (the ignored-limit run goes to ~196 deg)
    budget = outcome.spring_energy - outcome.kinetic_energy_final - outcome.friction_loss - outcome.stop_loss
    assert abs(float(budget)) < 1e-7 * float(outcome.spring_energy)
    assert float(outcome.stop_loss) > 1e-3 * float(outcome.spring_energy)
    # the transition at the stop event, replayed: rebound -e * rate, or held at the stop for e = 0
    k = _stop_event(outcome, scenario)
    sol = outcome.solution
    model, _ = scenario.model_of(params)
    y = jax.tree_util.tree_map(lambda a: a[k], sol.segment_y)
    mode = jax.tree_util.tree_map(lambda a: a[k], sol.segment_mode_before)
    rate = float(y.v[6 + JOINT4])
    assert rate > 0.05  # a real impact
    y_after, mode_after = model.transition(sol.segment_end[k], y, mode)
    if restitution == 0.0:  # plastic: the joint stops dead; held there only if its load pushes into the stop
        assert float(y_after.v[6 + JOINT4]) == 0.0 and float(mode_after.stop[JOINT4]) in (0.0, 1.0)
    else:
        assert float(y_after.v[6 + JOINT4]) == pytest.approx(-restitution * rate, rel=1e-12)
        assert float(mode_after.stop[JOINT4]) == 0.0
    # the stop impulse is internal: the linear momentum along the (frictionless) rail axis is unchanged by it
    linear = jax.jit(lambda q, v: ds.momentum(model.robot, q, v)[0] @ model.rail_axis)
    p_before, p_after = float(linear(y.q, y.v)), float(linear(y_after.q, y_after.v))
    assert p_after == pytest.approx(p_before, rel=1e-9, abs=1e-12)


@pytest.mark.slow
@pytest.mark.timeout(2400)
def test_gradient_through_the_stop_event_matches_finite_differences(stopped):
    """d(stop-impact loss)/d(spring stiffness): the impact speed, hence the loss, depends on the stiffness
    through the event time of the stop; reverse mode vs central differences."""
    scenario = stopped

    def loss(stiffness):
        params = scenario.with_design(scenario.params, {"ejection.spring_stiffness_N_m": stiffness})
        return scenario.simulate(params).stop_loss

    k0 = 1e5
    grad = float(jax.jit(jax.grad(loss))(k0))
    value = jax.jit(loss)
    h = 1e-4 * k0
    fd = (float(value(k0 + h)) - float(value(k0 - h))) / (2 * h)
    assert np.isfinite(grad) and grad > 0
    assert grad == pytest.approx(fd, rel=1e-5)


@pytest.mark.slow  # two CLI compiles (35 s); the enforced stop, the default, has fast tests above
@pytest.mark.timeout(1800)
def test_flagged_and_ignored_limits(tmp_path):
    args = ["run", str(CONFIG), *sum((["--set", o] for o in DRIVEN), [])]
    assert main(args + ["--set", 'ejection.limits="flag"', "--out", str(tmp_path / "flag")]) == 0
    flagged = json.loads((tmp_path / "flag" / "summary.json").read_text())
    assert flagged["status"] == "limit_crossed"
    assert set(flagged["limit_crossings"]) == {"joint4"} and 0.0 < flagged["limit_crossings"]["joint4"] < 3.0
    assert main(args + ["--set", 'ejection.limits="ignore"', "--out", str(tmp_path / "ignore")]) == 0
    ignored = json.loads((tmp_path / "ignore" / "summary.json").read_text())
    assert ignored["status"] in ("ok", "not_settled") and "limit_crossings" not in ignored
    # the flag only reports: both runs follow the same motion (which crosses the stop and swings back)
    finals = sorted(k for k in flagged if k.endswith("_change_final_deg"))
    assert finals and finals == sorted(k for k in ignored if k.endswith("_change_final_deg"))
    np.testing.assert_allclose([ignored[k] for k in finals], [flagged[k] for k in finals], rtol=1e-9, atol=1e-9)
