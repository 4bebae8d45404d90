"""The ejection on the user's robot, not the reference arm: any joint count, branched trees, prismatic joints,
the air table's locked joints read from the kinematics, reported masses with the run's locked set, joint lists
in degrees (revolute) or metres (prismatic), joint indices of 10 and more."""

from __future__ import annotations

from pathlib import Path

import jax
import numpy as np
import pytest

import diffspace as ds
from diffspace.app.cli import main
from diffspace.scenarios import load_scenario
from diffspace.scenarios.ejection.model import plane_locked_joints

from .pinocchio_ref import PinocchioReference
from .random_robots import random_urdf

CONFIGS = Path(__file__).resolve().parent.parent / "configs"
ARM = CONFIGS / "robots" / "esd_arm7.toml"

# a 6-joint arm: joint 3 prismatic along its link, joints 2, 4, 6 about y (normal to the air table), 1 and 5 about z
ARM6 = """<robot name="arm6">
<link name="base"><inertial><origin xyz="0 0 -0.1"/><mass value="30"/>
  <inertia ixx="0.5" ixy="0" ixz="0" iyy="0.6" iyz="0" izz="0.7"/></inertial></link>
{links}
</robot>"""
JOINTS6 = [("revolute", "0 0 1", "0 0 0.1"), ("revolute", "0 1 0", "0 0 0.2"), ("prismatic", "0 0 1", "0 0 0.6"),
           ("revolute", "0 1 0", "0 0 0.3"), ("revolute", "0 0 1", "0 0 0.5"), ("revolute", "0 1 0", "0 0 0.2")]


def _arm6(tmp_path: Path) -> Path:
    parts, parent = [], "base"
    for i, (kind, axis, xyz) in enumerate(JOINTS6, start=1):
        limit = '<limit lower="-0.3" upper="0.3" effort="1" velocity="1"/>' if kind == "prismatic" else \
            '<limit lower="-2.6" upper="2.6" effort="1" velocity="1"/>'
        parts.append(f'<link name="l{i}"><inertial><origin xyz="0.02 0 0.15"/><mass value="{3.0 + i}"/>'
                     '<inertia ixx="0.05" ixy="0" ixz="0" iyy="0.06" iyz="0" izz="0.02"/></inertial></link>'
                     f'<joint name="j{i}" type="{kind}"><parent link="{parent}"/><child link="l{i}"/>'
                     f'<origin xyz="{xyz}"/><axis xyz="{axis}"/>{limit}</joint>')
        parent = f"l{i}"
    path = tmp_path / "arm6.urdf"
    path.write_text(ARM6.format(links="".join(parts)))
    return path


def _ejection(robot: Path, *overrides: str, config: str = "ejection_space.toml"):
    return load_scenario(CONFIGS / config, [f'robot.path="{robot}"', *overrides])


def test_air_table_locks_the_joints_that_leave_the_plane():
    """Read from the kinematics at the attitude, not from joint numbers: the reference arm's joints 1, 3, 5, 7
    (axes in the plane). Straight with joint 1 turned 90 deg, the pitch axes lie in the plane too and all lock;
    with the elbow (joint 4) also at 90 deg, the roll joints 5 and 7 turn normal to the plane and are free."""
    robot = ds.load_robot(ARM)
    for _, angles in robot.attitudes:
        assert plane_locked_joints(robot, np.asarray(angles), [0.0, 0.0, 1.0]) == (0, 2, 4, 6)
    turned = np.zeros(7)
    turned[0] = np.pi / 2
    assert plane_locked_joints(robot, turned, [0.0, 0.0, 1.0]) == tuple(range(7))
    turned[3] = np.pi / 2
    assert plane_locked_joints(robot, turned, [0.0, 0.0, 1.0]) == (0, 1, 2, 3, 5)


@pytest.mark.slow  # 72 s; the prismatic arm stays in the fast suite (test_ejection_events)
def test_arm6_with_a_prismatic_joint_in_plane_and_space(tmp_path):
    """The issue's 6-joint case: runs in both modes; the prismatic entry is metres (0.1 m, not 0.1 deg); the
    plane's free joints are 2, 3 (sliding in the plane), 4, 6; the outputs name metres as metres."""
    path = _arm6(tmp_path)
    attitude = "ejection.attitude=[0, 30, 0.1, -60, 40, 20]"
    space = _ejection(path, attitude, 'ejection.mode="space"')
    assert float(space.params.attitude[2]) == pytest.approx(0.1, rel=1e-15)
    assert float(space.params.attitude[1]) == pytest.approx(np.deg2rad(30.0), rel=1e-15)
    assert space.parameter("ejection.attitude[2]").unit == "m"
    assert space.parameter("ejection.attitude[1]").unit == "deg"
    plane = load_scenario(CONFIGS / "ejection_space.toml", [f'robot.path="{path}"', attitude, 'ejection.mode="plane"',
                                                           "ejection.locked_joints=[1, 5]"])
    for scenario in (space, plane):
        outcome = jax.jit(type(scenario).simulate)(scenario, scenario.params)
        summary = scenario.summary(outcome)
        assert summary["status"] in ("ok", "not_settled"), scenario.diagnose(outcome)
        assert abs(summary["energy_residual_J"]) < 1e-6 * summary["spring_energy_J"]
        assert "joint3_change_final_m" in summary and "joint2_change_final_deg" in summary
        assert "joint3_change_final_m" in scenario.metrics_names()
        scenario.write(outcome, tmp_path / scenario.mode)
        header = (tmp_path / scenario.mode / "timeseries.csv").read_text().splitlines()[0].split(",")
        assert "joint3_m" in header and "joint2_deg" in header and not any(h.endswith("_rad") for h in header)
    assert plane.free == [1, 2, 3, 5] and plane.locked_in("plane") == (0, 4)


def test_air_table_default_locked_set_follows_the_robot(tmp_path):
    """Without ``ejection.locked_joints`` the air table locks joints 1 and 5 of the 6-joint arm (axes along z,
    in the plane) and keeps the prismatic joint 3 (sliding in the plane) free."""
    path = _arm6(tmp_path)
    config = tmp_path / "plane.toml"
    text = (CONFIGS / "ejection_plane.toml").read_text().replace("locked_joints = [1, 3, 5, 7]\n", "")
    config.write_text(text.replace('path = "robots/esd_arm7.toml"', f'path = "{path}"'))
    scenario = load_scenario(config, ["ejection.attitude=[0, 30, 0.1, -60, 0, 20]"])
    assert scenario.locked == (0, 4)


def test_reported_masses_use_the_runs_locked_joints(tmp_path):
    """``equivalent_mass_<mode>_frictionless_kg`` of the run's own mode uses its ``locked_joints``; checked
    against Pinocchio's mass matrix of the full robot: rail (base z) and free joints kept, locked ones removed,
    ``m = 1 / [H_ff^-1]_rail,rail``."""
    path = _arm6(tmp_path)
    locked = [2, 5]
    scenario = _ejection(path, "ejection.attitude=[0, 30, 0.1, -60, 40, 20]", 'ejection.mode="space"',
                         f"ejection.locked_joints={locked}")
    outcome = jax.jit(type(scenario).simulate)(scenario, scenario.params)
    robot = scenario.robot
    reference = PinocchioReference(path, robot)
    q = np.asarray(robot.neutral().at[7:].set(scenario.params.attitude))
    h = reference.mass_matrix(q)

    def rail_mass(locked_joints):
        keep = [2] + [6 + j for j in range(robot.n_joints) if j + 1 not in locked_joints]
        return 1.0 / np.linalg.inv(h[np.ix_(keep, keep)])[0, 0]

    assert float(outcome.equivalent_mass_space_frictionless) == pytest.approx(rail_mass(locked), rel=1e-10)
    # the air table's default at this attitude: joints 1, 5 (axes in the plane) and 6 (turned 40 deg by joint 5)
    assert scenario.locked_in("plane") == (0, 4, 5)
    assert float(outcome.equivalent_mass_plane_frictionless) == pytest.approx(rail_mass([1, 5, 6]), rel=1e-10)


def test_joint_indices_of_ten_and_more(tmp_path):
    """Design keys ``ejection.attitude[11]`` and ``motion.torque_amplitude_N_m[10]`` set elements 11 and 10."""
    path = tmp_path / "r12.urdf"
    path.write_text(random_urdf(np.random.default_rng(4), 12, branched=True))
    robot = ds.load_robot(path)
    values = [10.0 if kind == "revolute" else 0.05 for kind in robot.joint_kinds[1:]]
    ejection = _ejection(path, f"ejection.attitude={values}")
    key = "ejection.attitude[11]"
    changed = ejection.with_design(ejection.params, {key: 0.1 if robot.joint_kinds[12] == "prismatic" else 20.0})
    difference = np.flatnonzero(np.asarray(changed.attitude) != np.asarray(ejection.params.attitude))
    assert list(difference) == [11]
    floating = load_scenario(CONFIGS / "free_floating.toml", [
        f'robot.path="{path}"', f"motion.initial_attitude={values}", f"motion.torque_amplitude_N_m={[1.0] * 12}",
        f'motion.end_effector="{robot.frame_names[-1]}"'])
    changed = floating.with_design(floating.params, {"motion.torque_amplitude_N_m[10]": 3.0})
    assert list(np.flatnonzero(np.asarray(changed.torque_amplitude) != 1.0)) == [10]


def test_out_on_an_uncreatable_place_is_one_line(capsys):
    if not Path("/proc").is_dir():
        pytest.skip("no /proc")
    assert main(["run", str(CONFIGS / "impact_airtable.toml"), "--out", "/proc/anything"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "--out /proc/anything" in err


def test_locked_joints_hold_any_torque():
    """``friction.model = "locked"`` holds joints whatever the static friction: with holding torques far above
    ``friction.static_N_m`` the arm still leaves the rail as one rigid body (an event condition of the static
    friction made a random 9-joint arm oscillate in the rail forever)."""
    scenario = load_scenario(CONFIGS / "ejection_space.toml", ['friction.model="locked"', "friction.static_N_m=0.001",
                                                                "friction.coulomb_N_m=0.001"])
    outcome = jax.jit(type(scenario).simulate)(scenario, scenario.params)
    mass = float(scenario.robot.total_mass)
    assert int(outcome.status) == 0
    assert float(outcome.separation_velocity) == pytest.approx(0.086 * np.sqrt(812.7 / mass), rel=1e-7)


def test_an_internal_error_is_one_line_not_a_traceback(monkeypatch, capsys):
    """A defect inside a command reaches the user as one line (exit 1), the traceback only on request."""
    from diffspace.app import commands

    def broken(args, loaded):
        raise IndexError("locked joint index 6 out of range 0..5\nsecond line")

    monkeypatch.setitem(commands.COMMANDS, "run", broken)
    monkeypatch.delenv("DIFFSPACE_TRACEBACK", raising=False)
    assert main(["run", str(CONFIGS / "impact_airtable.toml"), "--out", "/tmp/diffspace-internal-error"]) == 1
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.startswith("internal error: IndexError: locked joint index 6")
    monkeypatch.setenv("DIFFSPACE_TRACEBACK", "1")
    with pytest.raises(IndexError):
        main(["run", str(CONFIGS / "impact_airtable.toml"), "--out", "/tmp/diffspace-internal-error"])


@pytest.mark.slow  # a batched sweep compile; the prismatic arm's single runs stay in the fast suite
def test_sweep_over_a_prismatic_joint_of_the_users_arm(tmp_path):
    """A batched sweep traces the scenario (its robot arrays become tracers): the design keys must still resolve
    (they did not: the joint bounds were read from the traced limits). The prismatic joint's axis is in metres and
    lands in the params as metres."""
    path = _arm6(tmp_path)
    config = tmp_path / "sweep.toml"
    config.write_text(f'''[robot]
path = "{path}"
[ejection]
mode = "space"
attitude = [0, 30, 0.0, -60, 40, 20]
locked_joints = []
[simulation]
n_save = 11
[sweep]
method = "grid"
chunk_size = 2
outputs = ["separation_velocity_m_s", "joint3_change_at_separation_m"]
[sweep.axes]
"ejection.attitude[2]" = [0.0, 0.1]
''')
    assert main(["sweep", str(config), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    rows = (tmp_path / "out" / "results.csv").read_text().splitlines()
    header = rows[0].split(",")
    assert len(rows) == 3 and "ejection.attitude[2]" in header
    values = [float(r.split(",")[header.index("ejection.attitude[2]")]) for r in rows[1:]]
    assert values == [0.0, 0.1]
    statuses = [r.split(",")[header.index("status")] for r in rows[1:]]
    assert all(s in ("ok", "not_settled") for s in statuses), statuses
