"""Command line: bad configs exit 2 with the offending key; runs write summary.json, time series and plots."""

import json
from pathlib import Path

import pytest

from diffspace.app.cli import main

CONFIGS = Path(__file__).resolve().parent.parent / "configs"


def _write(tmp_path, text, name="cfg.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


GOOD_MOTION = f"""
[robot]
path = "{CONFIGS / 'robots' / 'generic_arm7.urdf'}"
[motion]
torque_amplitude_N_m = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
[simulation]
t_final_s = 0.2
rtol = 1e-11
atol = 1e-13
"""


@pytest.mark.parametrize(
    "override,key",
    [
        ("motion.typo=1", "motion.typo"),
        ("simulation.t_final_s=\"long\"", "simulation.t_final_s"),
        ("simulation.t_final_s=-1", "simulation.t_final_s"),
        ("robot.path=\"missing.urdf\"", "robot.path"),
        ("motion.torque_amplitude_N_m=[1.0]", "motion.torque_amplitude_N_m"),
        ("motion.base_motion=\"wobbly\"", "motion.base_motion"),
        ("simulation.rtol=nan", "simulation.rtol"),
    ],
)
def test_bad_motion_config_names_key(tmp_path, capsys, override, key):
    code = main(["run", str(_write(tmp_path, GOOD_MOTION)), "--out", str(tmp_path / "out"), "--set", override])
    err = capsys.readouterr().err
    assert code == 2 and key in err and "Traceback" not in err


@pytest.mark.parametrize(
    "override,key",
    [
        ("ejection.attitude=\"attitude_9\"", "ejection.attitude"),
        ("ejection.attitude=[1.0, 2.0]", "ejection.attitude"),
        ("ejection.spring_stiffness_N_m=0", "ejection.spring_stiffness_N_m"),
        ("ejection.spring_compression_m=-0.1", "ejection.spring_compression_m"),
        ("friction.viscous_N_m_s_rad=-1", "friction.viscous_N_m_s_rad"),
        ("friction.model=\"sticky\"", "friction.model"),
        ("ejection.locked_joints=[1, 9]", "ejection.locked_joints"),
        ("friction.coulomb_N_m=5.0", "friction.coulomb_N_m"),
    ],
)
def test_bad_ejection_config_names_key(tmp_path, capsys, override, key):
    code = main(["run", str(CONFIGS / "ejection_plane.toml"), "--out", str(tmp_path / "out"), "--set", override])
    err = capsys.readouterr().err
    assert code == 2 and key in err and "Traceback" not in err


def test_bad_robot_inertia_names_link(tmp_path, capsys):
    urdf = _write(tmp_path, """<robot name="r"><link name="base"><inertial><mass value="1"/>
        <inertia ixx="1" iyy="1" izz="5" ixy="0" ixz="0" iyz="0"/></inertial></link></robot>""", "bad.urdf")
    cfg = _write(tmp_path, GOOD_MOTION.replace(str(CONFIGS / "robots" / "generic_arm7.urdf"), str(urdf)))
    code = main(["run", str(cfg), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and "robot.path" in err and "base" in err and "triangle" in err


def test_negative_mass_names_link(tmp_path, capsys):
    urdf = _write(tmp_path, """<robot name="r"><link name="base"><inertial><mass value="-1"/>
        <inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link></robot>""", "neg.urdf")
    cfg = _write(tmp_path, GOOD_MOTION.replace(str(CONFIGS / "robots" / "generic_arm7.urdf"), str(urdf)))
    assert main(["run", str(cfg), "--out", str(tmp_path / "out")]) == 2
    assert "mass" in capsys.readouterr().err


def test_missing_config_file(tmp_path, capsys):
    assert main(["run", str(tmp_path / "nope.toml")]) == 2
    assert "not found" in capsys.readouterr().err


def test_free_floating_run_writes_results(tmp_path):
    out = tmp_path / "out"
    assert main(["run", str(_write(tmp_path, GOOD_MOTION)), "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["momentum_drift_kg_m_s"] < 1e-9
    assert (out / "timeseries.csv").is_file() and (out / "motion.png").is_file()


def test_version_prints_the_installed_package_version(capsys):
    from importlib.metadata import version

    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"diffspace {version('diffspace')}"


def _help_texts() -> dict[str, str]:
    """``--help`` of the top-level parser and of every subcommand, as the user sees them."""
    import argparse

    from diffspace.app.cli import build_parser

    parser = build_parser()
    texts = {"diffspace": parser.format_help()}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            texts |= {f"diffspace {name}": sub.format_help() for name, sub in action.choices.items()}
    return texts


def test_every_help_text_is_plain_and_describes_its_command():
    import re

    texts = _help_texts()
    assert set(texts) == {"diffspace"} | {f"diffspace {c}" for c in
                                          ("run", "sweep", "montecarlo", "optimize", "fit", "bench", "view")}
    markup = re.compile(r"``|:(class|func|mod|meth|math|attr):`")
    for name, text in texts.items():
        assert not markup.search(text), (name, markup.search(text).group())
        assert "SPEC" not in text, name
        assert not re.search(r"/work/|shared/|\.\./", text), name  # paths users do not have
        description = text.split("\n\n")[1]  # usage, then the description paragraph
        assert len(description.split()) >= 8, (name, description)


def test_top_level_help_lists_the_exit_codes():
    text = _help_texts()["diffspace"]
    for code in ("0", "1", "2", "3", "130"):
        assert any(line.split()[:1] == [code] for line in text.splitlines()), code


def test_view_of_a_directory_without_a_report_names_every_command_that_writes_one(tmp_path, capsys):
    assert main(["view", str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "run/sweep/montecarlo/optimize/fit" in err
