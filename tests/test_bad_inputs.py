"""Hostile but fair input through the real command line (subprocesses): each case exits 2 (or 3 for a
solver failure naming the phase, 130 for Ctrl-C) with one line naming the key or file and no traceback;
results directories are written whole or not at all (issue 10). Function-level loader cases:
``test_bad_inputs_io.py``."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest

from .toy_scenario import cli_process

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = ROOT / "configs"
IMPACT = CONFIGS / "impact_airtable.toml"
ROBOT_CFG = """[robot]\npath = "{path}"\n[motion]\n[simulation]\nt_final_s = 0.1\n"""


def _run(args: list[str], timeout: float = 600) -> tuple[int, str]:
    proc = cli_process(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, err = proc.communicate(timeout=timeout)
    return proc.returncode, err


DIAGNOSTICS = ("error:", "solver failure:", "interrupted:", "internal error:")


def _one_line(err: str, *needles: str) -> None:
    """The failure is one line, the last on stderr; the lines before it may only be progress."""
    lines = [line for line in err.strip().splitlines() if line.strip()]
    assert "Traceback" not in err, err
    diagnostics = [line for line in lines if line.startswith(DIAGNOSTICS)]
    assert len(diagnostics) == 1 and diagnostics[0] == lines[-1], err
    for needle in needles:
        assert needle in lines[-1], (needle, lines[-1])


def _toy(tmp_path, text="") -> Path:
    path = tmp_path / "toy.toml"
    path.write_text("[toy]\nrate = 1.0\namplitude = 2.0\n" + text)
    return path


def test_out_is_a_regular_file(tmp_path):
    target = tmp_path / "results.txt"
    target.write_text("not a directory")
    code, err = _run(["run", str(_toy(tmp_path)), "--out", str(target)])
    assert code == 2
    _one_line(err, "--out", "not a directory")


def test_out_below_a_regular_file(tmp_path):
    (tmp_path / "file").write_text("x")
    code, err = _run(["run", str(_toy(tmp_path)), "--out", str(tmp_path / "file" / "sub")])
    assert code == 2
    _one_line(err, "--out", "cannot write")


def test_huge_integer_in_set(tmp_path):
    code, err = _run(["run", str(_toy(tmp_path)), "--out", str(tmp_path / "o"), "--set", "toy.rate=" + "9" * 40])
    assert code == 2
    _one_line(err, "toy.rate", "out of range")


def test_config_not_utf8(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_bytes(b"[toy]\nrate = 1.0 # \xff\xfe\n")
    code, err = _run(["run", str(path), "--out", str(tmp_path / "o")])
    assert code == 2
    _one_line(err, str(path), "UTF-8")


def test_data_csv_not_utf8_and_with_bom(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_bytes(b"v_in_mm_s,v_out_measured_mm_s,F_peak_measured_N\n94.8,57.5,21\xe94\n")
    code, err = _run(["fit", str(IMPACT), "--data", str(bad), "--out", str(tmp_path / "f")])
    assert code == 2
    _one_line(err, str(bad), "UTF-8")


@pytest.mark.parametrize("name, urdf, needle", [
    ("no_child", '<robot name="r"><link name="a"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" '
     'ixy="0" ixz="0" iyz="0"/></inertial></link><joint name="j" type="revolute"><parent link="a"/>'
     '<axis xyz="0 0 1"/></joint></robot>', "missing <child>"),
    ("bad_limit", '<robot name="r"><link name="a"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" '
     'ixy="0" ixz="0" iyz="0"/></inertial></link><link name="b"><inertial><mass value="1"/><inertia ixx="1" '
     'iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link><joint name="j1" type="revolute"><parent '
     'link="a"/><child link="b"/><axis xyz="0 0 1"/><limit lower="-1" upper="abc"/></joint></robot>', "j1"),
    ("loop", '<robot name="r"><link name="a"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" '
     'ixy="0" ixz="0" iyz="0"/></inertial></link><link name="b"><inertial><mass value="1"/><inertia ixx="1" '
     'iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link><link name="c"><inertial><mass value="1"/>'
     '<inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>'
     '<joint name="j1" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/></joint>'
     '<joint name="j2" type="revolute"><parent link="a"/><child link="c"/><axis xyz="0 0 1"/></joint>'
     '<joint name="j3" type="revolute"><parent link="b"/><child link="c"/><axis xyz="0 0 1"/></joint>'
     '</robot>', "'c' is the child of joints 'j2', 'j3'"),
])
def test_bad_urdf_names_file_and_joint(tmp_path, name, urdf, needle):
    robot = tmp_path / f"{name}.urdf"
    robot.write_text(urdf)
    config = tmp_path / "cfg.toml"
    config.write_text(ROBOT_CFG.format(path=robot))
    code, err = _run(["run", str(config), "--out", str(tmp_path / "o")])
    assert code == 2
    _one_line(err, needle)


def test_robot_path_is_a_directory(tmp_path):
    config = tmp_path / "cfg.toml"
    config.write_text(ROBOT_CFG.format(path=tmp_path))
    code, err = _run(["run", str(config), "--out", str(tmp_path / "o")])
    assert code == 2
    _one_line(err, "robot.path", "directory")


def test_ctrl_c_during_a_sweep_keeps_the_chunks(tmp_path):
    """Ctrl-C (SIGINT) once three chunks exist: exit 130, one line saying what was kept, the chunks kept. The child
    takes Python's Ctrl-C handler explicitly (``cli_process``): a test session started as a background job (``&`` in a
    script, as CI may be) starts its children with SIGINT ignored, and the sweep then ran to its end and exited 0.
    The toy's one-case chunks take about 2 ms, so 50,000 of them keep the sweep running for 100 s or more; it exits
    0.3-0.5 s after the signal."""
    spec = '\n[sweep]\nchunk_size = 1\n[sweep.axes]\n"toy.rate" = {start = 0.0, stop = 1.0, num = 50000}\n'
    out = tmp_path / "sweep"
    proc = cli_process(["sweep", str(_toy(tmp_path, spec)), "--out", str(out), "--quiet"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    store = Path(str(out) + ".partial") / "store"
    deadline = time.time() + 300
    while time.time() < deadline and len(list(store.glob("chunk_*.npz"))) < 3:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130
    _one_line(err, "interrupted", "rerun the same command to resume")
    assert len(list(store.glob("chunk_*.npz"))) >= 3 and not out.exists()


def test_failed_run_writes_its_run_so_far_and_other_commands_are_refused(tmp_path):
    """A failed run (asked to overwrite) leaves its own summary, status and reason, not the previous run's."""
    out = tmp_path / "out"
    code, _ = _run(["run", str(_toy(tmp_path)), "--out", str(out)])
    assert code == 0
    code, err = _run(["run", str(_toy(tmp_path)), "--out", str(out), "--overwrite", "--set", "toy.rate=11.0"])
    assert code == 3  # rates above 10/s are a solver failure in the toy
    _one_line(err, "solver failure", str(out))
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "solver_failure" and summary["reason"] and summary["time_reached_s"] > 0
    assert not Path(str(out) + ".partial").exists()
    code, err = _run(["sweep", str(_toy(tmp_path, '\n[sweep.axes]\n"toy.rate" = [1.0]\n')), "--out", str(out)])
    assert code == 2
    _one_line(err, "--out", "'run'")
    assert json.loads((out / "manifest.json").read_text())["command"] == "run"


@pytest.mark.slow  # CI time; test_failed_runs checks a run stopped by its step budget fast
@pytest.mark.timeout(1200)
def test_segment_budget_names_phase_and_time(tmp_path):
    code, err = _run(["run", str(CONFIGS / "ejection_plane.toml"), "--out", str(tmp_path / "o"),
                      "--set", "simulation.max_segments=2"])
    assert code == 3
    _one_line(err, "max_segments", "phase", "t =")
