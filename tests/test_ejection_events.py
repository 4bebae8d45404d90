"""Stick/slip events of the ejection on inputs nobody shipped: every in-rail run separates, the energy budget
closes, the one-friction-level runs agree with MuJoCo, and the cases that once failed now work.

* Property (hypothesis): random robots (1-12 joints, serial and branched, prismatic and fixed joints, random
  inertias and axes), random attitudes, Coulomb levels from far below to far above what the joints' loads need,
  static friction from exactly the Coulomb level up to three times it, in space and on the air table. Each run
  must end ``ok`` or ``not_settled`` (never without separation, out of events or with an event missed), close its
  energy to 1e-8 of the spring energy (rtol 1e-10), and, with one friction level, separate at the time and
  velocity MuJoCo finds for the same in-rail system (``frictionloss``, RK4 1e-4 s, tightened friction
  constraint) within 1e-3. The fast suite runs the explicit examples; the slow suite 40 generated ones.
* Regressions: the space and air-table attitudes on which the base never separated (a slipping joint's mode
  began with its end condition at zero, and a condition starting at zero that falls is never detected: inside
  the minimum of the conditions it hid the separation, and the base ran past the spring's end), and the four
  cases of the benchmark's random set (seed 0, batch 2048) that never separated.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

import diffspace
from diffspace.app.bench.common import BenchConfig
from diffspace.app.bench.ejection import ejection_cases, ejection_separation_fn
from diffspace.app.bench.mujoco_ejection import ejection_mujoco_model, mujoco_separation
from diffspace.core.status import Status
from diffspace.io.config import read_toml

from .random_robots import random_urdf

CONFIGS = Path(__file__).resolve().parent.parent / "configs"
FAST = settings(phases=[Phase.explicit], deadline=None, database=None, suppress_health_check=list(HealthCheck))
SLOW = settings(max_examples=40, deadline=None, derandomize=True, database=None,
                suppress_health_check=list(HealthCheck))
GOOD = (Status.OK, Status.NOT_SETTLED)

cases = st.fixed_dictionaries({
    "seed": st.integers(0, 2**31 - 1),
    "n_joints": st.integers(1, 12),
    "branched": st.booleans(),
    "with_fixed": st.booleans(),
    "mode": st.sampled_from(["space", "plane"]),
    "coulomb": st.floats(1e-3, 30.0).map(lambda x: float(np.round(x, 6))),  # N m (N for prismatic joints)
    "static_ratio": st.sampled_from([1.0, 1.0, 1.01, 2.0, 3.0]),  # one level twice as often: MuJoCo compares
})
EXAMPLES = [  # the fast suite's: a 7-joint branched tree with one level, a 12-joint chain at 3 x Coulomb, a small arm
    {"seed": 11, "n_joints": 7, "branched": True, "with_fixed": True, "mode": "space", "coulomb": 2.0,
     "static_ratio": 1.0},
    {"seed": 5, "n_joints": 12, "branched": False, "with_fixed": True, "mode": "plane", "coulomb": 0.5,
     "static_ratio": 3.0},
    {"seed": 23, "n_joints": 3, "branched": False, "with_fixed": True, "mode": "space", "coulomb": 0.05,
     "static_ratio": 1.0},
]


def _scenario(case: dict, directory: Path):
    rng = np.random.default_rng(case["seed"])
    path = directory / "robot.urdf"
    path.write_text(random_urdf(rng, case["n_joints"], case["branched"], case["with_fixed"]))
    robot = diffspace.load_robot(path)
    attitude = [float(rng.uniform(-150.0, 150.0)) if kind == "revolute" else float(rng.uniform(-0.2, 0.2))
                for kind in robot.joint_kinds[1:]]
    rigid_time = 0.5 * np.pi * np.sqrt(float(robot.total_mass) / 812.7)
    config = read_toml(CONFIGS / "ejection_space.toml")
    config["ejection"].pop("locked_joints")  # the mode's default: none in space, those leaving the air table
    return diffspace.load_scenario(config, [
        f'robot.path="{path}"', f"ejection.attitude={attitude}", f'ejection.mode="{case["mode"]}"',
        f"friction.coulomb_N_m={case['coulomb']}", f"friction.static_N_m={case['coulomb'] * case['static_ratio']}",
        f"simulation.t_final_s={4 * rigid_time}", "simulation.rtol=1e-10", "simulation.atol=1e-12",
        "simulation.max_segments=64", 'ejection.limits="ignore"'])  # MuJoCo's model has no stops


def _mujoco_agrees(scenario, outcome):
    """Separation time and velocity within 1e-3 of MuJoCo's on the same in-rail system (one friction level)."""
    model, free_angles = scenario.model_of(scenario.params)
    p = scenario.params
    mj_model = ejection_mujoco_model(model.robot, stiffness=float(p.spring_stiffness),
                                     compression=float(p.spring_compression), frictionloss=float(p.coulomb_torque),
                                     damping=float(p.viscous))
    mj = mujoco_separation(mj_model, np.asarray(free_angles)[None], float(p.spring_compression),
                           1.5 * float(outcome.separation_time), joint_names=model.robot.joint_names)
    assert float(mj["t_s"][0]) == pytest.approx(float(outcome.separation_time), rel=1e-3)
    assert float(mj["v_m_s"][0]) == pytest.approx(float(outcome.separation_velocity), rel=1e-3)


def check_events(case: dict):
    with tempfile.TemporaryDirectory() as tmp:
        scenario = _scenario(case, Path(tmp))
        outcome = jax.jit(type(scenario).simulate)(scenario, scenario.params)
    assert Status(int(outcome.status)) in GOOD, (case, scenario.diagnose(outcome))
    assert bool(outcome.separated)
    budget = outcome.spring_energy - outcome.kinetic_energy_final - outcome.friction_loss - outcome.stop_loss
    assert abs(float(budget)) <= 1e-8 * float(outcome.spring_energy), case
    if case["static_ratio"] == 1.0:
        _mujoco_agrees(scenario, outcome)


@pytest.mark.slow  # 58 s (CI time); stick-slip energy budgets stay fast in test_ejection.py
@FAST
@given(cases)
@example(EXAMPLES[0])
@example(EXAMPLES[1])
@example(EXAMPLES[2])
@pytest.mark.timeout(900)
def test_stick_slip_of_random_robots_separates_and_closes_its_energy(case):
    check_events(case)


@pytest.mark.slow
@SLOW
@given(cases)
@pytest.mark.timeout(7200)
def test_stick_slip_of_many_random_robots(case):
    check_events(case)


def _run(config: str, *overrides: str):
    scenario = diffspace.load_scenario(CONFIGS / config, list(overrides))
    return scenario, jax.jit(type(scenario).simulate)(scenario, scenario.params)


SPACE_CASE = ("ejection.attitude=[9.1549, -7.0347, 9.7267, 76.679, -7.2813, 6.6177, 13.4798]",
              "ejection.spring_stiffness_N_m=747.555")


@pytest.mark.slow  # the air-table counterpart stays in the fast suite
def test_space_attitude_that_never_separated():
    """All seven joints free, static 4 / Coulomb 2 N m: the base stayed on its rail (separation not reached
    within 10 s). MuJoCo separates the same in-rail system at 0.570 s (frictionloss 2 N m) and 0.581 s (4 N m);
    ours, with both levels, separates at 0.56999 s (joint 2 breaks loose at 4 N m 0.7 ms before) and closes its
    energy budget; with one level at a time it agrees with MuJoCo."""
    scenario, outcome = _run("ejection_space.toml", *SPACE_CASE)
    assert int(outcome.status) == Status.OK
    assert 0.565 < float(outcome.separation_time) < 0.585
    budget = outcome.spring_energy - outcome.kinetic_energy_final - outcome.friction_loss - outcome.stop_loss
    assert abs(float(budget)) <= 1e-7 * float(outcome.spring_energy)
    for level in (2.0, 4.0):  # one level: MuJoCo's frictionloss is the same friction
        scenario, outcome = _run("ejection_space.toml", *SPACE_CASE, f"friction.static_N_m={level}",
                                 f"friction.coulomb_N_m={level}")
        assert int(outcome.status) == Status.OK
        _mujoco_agrees(scenario, outcome)


def test_air_table_attitude_that_never_separated_at_one_friction_level():
    """``ejection_plane.toml`` at static = Coulomb = 2 N m ended in 'separation not reached'; MuJoCo (the bench's
    in-rail model) separates it at 0.58796 s with 0.22975 m/s."""
    scenario, outcome = _run("ejection_plane.toml", "ejection.attitude=[0.0, -0.818762, 0.0, 7.382211, 0.0, 6.049658, 0.0]",
                             "ejection.spring_stiffness_N_m=828.6455492080838", "friction.static_N_m=2.0",
                             "friction.coulomb_N_m=2.0")
    assert int(outcome.status) == Status.OK
    assert float(outcome.separation_time) == pytest.approx(0.58796, abs=1e-5)
    assert float(outcome.separation_velocity) == pytest.approx(0.22975, abs=1e-5)
    _mujoco_agrees(scenario, outcome)


@pytest.mark.slow  # 37 s (CI time); the air-table attitude that never separated stays fast
@pytest.mark.timeout(900)
def test_bench_random_cases_that_never_separated():
    """Cases 17, 613, 1334 and 1625 of the bench's random set (seed 0, batch 2048) returned no separation at
    rtol 1e-6 and 1e-11; every one separates now, at the same time at both tolerances."""
    bench = ejection_cases(BenchConfig(ejection_batch=2048, seed=0))
    pick = jnp.asarray([17, 613, 1334, 1625])
    separation = jax.jit(jax.vmap(ejection_separation_fn(bench.model, bench.horizon, 8), in_axes=(0, 0, None, None)))
    times = []
    for rtol in (1e-6, 1e-11):
        t, v, _, ok = separation(bench.angles[pick], bench.stiffness[pick], jnp.asarray(bench.viscous), jnp.asarray(rtol))
        assert np.all(np.asarray(ok)), (rtol, np.asarray(ok))
        times.append(np.asarray(t))
    np.testing.assert_allclose(times[0], times[1], rtol=1e-5)


PRISMATIC_ARM = """<robot name="prismatic_arm">
<link name="base"><inertial><origin xyz="0 0 -0.1"/><mass value="30"/>
  <inertia ixx="0.5" ixy="0" ixz="0" iyy="0.6" iyz="0" izz="0.7"/></inertial></link>
<link name="mount"><inertial><origin xyz="0 0 0.05"/><mass value="2"/>
  <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
<joint name="mount" type="fixed"><parent link="base"/><child link="mount"/><origin xyz="0 0 0.1"/></joint>
<link name="upper"><inertial><origin xyz="0.02 0 0.15"/><mass value="4"/>
  <inertia ixx="0.05" ixy="0" ixz="0" iyy="0.06" iyz="0" izz="0.02"/></inertial></link>
<joint name="shoulder" type="revolute"><parent link="mount"/><child link="upper"/><origin xyz="0 0 0.1"/>
  <axis xyz="0 1 0"/><limit lower="-2.6" upper="2.6" effort="1" velocity="1"/></joint>
<link name="slider"><inertial><origin xyz="0.02 0 0.15"/><mass value="5"/>
  <inertia ixx="0.05" ixy="0" ixz="0" iyy="0.06" iyz="0" izz="0.02"/></inertial></link>
<joint name="extend" type="prismatic"><parent link="upper"/><child link="slider"/><origin xyz="0 0 0.3"/>
  <axis xyz="0 0 1"/><limit lower="-0.3" upper="0.3" effort="1" velocity="1"/></joint>
<link name="fore"><inertial><origin xyz="0.02 0 0.15"/><mass value="6"/>
  <inertia ixx="0.05" ixy="0" ixz="0" iyy="0.06" iyz="0" izz="0.02"/></inertial></link>
<joint name="elbow" type="revolute"><parent link="slider"/><child link="fore"/><origin xyz="0 0 0.3"/>
  <axis xyz="0 1 0"/><limit lower="-2.6" upper="2.6" effort="1" velocity="1"/></joint>
</robot>"""


@pytest.mark.timeout(900)
def test_prismatic_arm_with_a_fixed_mount_does_not_chatter(tmp_path):
    """A fixed mount, then revolute - prismatic - revolute, in space with the default hybrid friction (the kind of
    arm whose stick/slip switching once spent every segment: more events than max_segments = 16 by t = 0.383 s).
    It separates within the default budget and closes its energy. This arm is a reconstruction (the reported
    robot was not given) and did not chatter before either; the property tests above cover generated robots
    with fixed and prismatic joints."""
    path = tmp_path / "arm.urdf"
    path.write_text(PRISMATIC_ARM)
    scenario, outcome = _run("ejection_space.toml", f'robot.path="{path}"', "ejection.attitude=[30.0, 0.1, -60.0]",
                             'ejection.mode="space"', "ejection.locked_joints=[]")
    assert int(outcome.status) in (Status.OK, Status.NOT_SETTLED), scenario.diagnose(outcome)
    budget = outcome.spring_energy - outcome.kinetic_energy_final - outcome.friction_loss - outcome.stop_loss
    assert abs(float(budget)) <= 1e-7 * float(outcome.spring_energy)
