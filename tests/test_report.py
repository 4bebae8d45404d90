"""The HTML report: STL and URDF visuals, the embedded scene against the core's kinematics, and the reports of
real runs (ejection, capture, snare closing, deployment, unilateral, an STL robot, a primitive one) rendered by
headless Chromium (every host unresolvable; skipped with a reason where no Chromium is
installed: ``.ci/run`` installs Debian's ``chromium``)."""

from __future__ import annotations

import json
import re
import struct
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import jax
import numpy as np
import pytest

from diffspace.app.cli import main
from diffspace.app.report.browser import find_chromium, render
from diffspace.app.report.scene_data import DIGITS
from diffspace.core.dynamics import frame_pose
from diffspace.design import simulate_default
from diffspace.io.scene import load_scene
from diffspace.io.stl import decimated, read_stl
from diffspace.io.urdf import load_visuals
from diffspace.scenarios import load_scenario

from .test_conformance import SHORT

ROOT = Path(__file__).resolve().parent.parent
TETRA = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 3.0]])
TETRA_FACES = np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])


def write_stl(path: Path, vertices, faces, binary: bool) -> Path:
    triangles = np.asarray(vertices, float)[np.asarray(faces)]
    if binary:
        data = b"diffspace test".ljust(80) + struct.pack("<I", len(triangles))
        for tri in triangles:
            data += struct.pack("<12fH", 0.0, 0.0, 0.0, *tri.ravel(), 0)
        path.write_bytes(data)
    else:
        lines = ["solid test"] + ["facet normal 0 0 0\nouter loop\n" + "".join(f"vertex {x} {y} {z}\n" for x, y, z in t)
                                  + "endloop\nendfacet" for t in triangles] + ["endsolid test"]
        path.write_text("\n".join(lines))
    return path


def triangles_of(mesh) -> set:
    return {tuple(sorted(map(tuple, np.round(mesh.vertices[f], 9)))) for f in mesh.faces}


@pytest.mark.parametrize("binary", [True, False])
def test_stl_read_back(tmp_path, binary):
    mesh = read_stl(write_stl(tmp_path / "t.stl", TETRA, TETRA_FACES, binary))
    assert len(mesh.vertices) == 4  # shared corners merged
    assert triangles_of(mesh) == {tuple(sorted(map(tuple, TETRA[f]))) for f in TETRA_FACES}


def test_decimation_keeps_extent_and_bounds_faces():
    from diffspace.io.scene import sphere

    fine = sphere(0.5, segments=120)
    coarse = decimated(fine, 500)
    assert len(fine.faces) > 5000 and 0 < len(coarse.faces) <= 500
    np.testing.assert_allclose(np.ptp(coarse.vertices, axis=0), np.ptp(fine.vertices, axis=0), rtol=0.15)


MESH_URDF = """<?xml version="1.0"?>
<robot name="stl_arm">
  <link name="base">
    <inertial><mass value="20"/><inertia ixx="0.5" ixy="0" ixz="0" iyy="0.5" iyz="0" izz="0.5"/></inertial>
    <visual><origin xyz="0 0 -0.1"/><geometry><mesh filename="meshes/base.stl" scale="0.4 0.4 0.1"/></geometry></visual>
  </link>
  <link name="link1">
    <inertial><origin xyz="0 0 0.2"/><mass value="2"/><inertia ixx="0.03" ixy="0" ixz="0" iyy="0.03" iyz="0" izz="0.002"/></inertial>
    <visual><origin xyz="0 0 0.2"/><geometry><cylinder radius="0.03" length="0.4"/></geometry></visual>
  </link>
  <link name="link2">
    <inertial><origin xyz="0 0 0.15"/><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.001"/></inertial>
    <visual><geometry><mesh filename="package://stl_arm/meshes/link2.stl"/></geometry></visual>
    <visual><origin xyz="0 0 0.3"/><geometry><sphere radius="0.04"/></geometry></visual>
  </link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="link1"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3"/></joint>
  <joint name="j2" type="revolute"><origin xyz="0 0 0.4"/><parent link="link1"/><child link="link2"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3"/></joint>
</robot>
"""


def mesh_robot(folder: Path) -> Path:
    """A two-link arm whose base and second link are STL meshes (a cube and a tetrahedron)."""
    (folder / "meshes").mkdir(parents=True)
    cube = np.array([[x, y, z] for x in (-0.5, 0.5) for y in (-0.5, 0.5) for z in (-0.5, 0.5)])
    cube_faces = np.array([[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1], [2, 3, 7], [2, 7, 6],
                           [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]])
    write_stl(folder / "meshes" / "base.stl", cube, cube_faces, binary=True)
    write_stl(folder / "meshes" / "link2.stl", 0.1 * TETRA, TETRA_FACES, binary=False)
    path = folder / "stl_arm.urdf"
    path.write_text(MESH_URDF)
    return path


def test_urdf_visuals_placed_in_the_link_frames(tmp_path):
    visuals, problems = load_visuals(mesh_robot(tmp_path))
    assert problems == []
    base, link1, link2 = visuals["base"], visuals["link1"], visuals["link2"]
    np.testing.assert_allclose(base.vertices.min(axis=0), [-0.2, -0.2, -0.15])  # scaled cube, moved down 0.1
    np.testing.assert_allclose(base.vertices.max(axis=0), [0.2, 0.2, -0.05])
    np.testing.assert_allclose(link1.vertices.min(axis=0), [-0.03, -0.03, 0.0], atol=1e-12)  # cylinder on z
    np.testing.assert_allclose(link1.vertices.max(axis=0), [0.03, 0.03, 0.4], atol=1e-12)
    np.testing.assert_allclose(link2.vertices.max(axis=0), [0.1, 0.2, 0.34])  # tetrahedron + sphere at z = 0.3


def test_unknown_mesh_format_is_reported_not_fatal(tmp_path):
    path = mesh_robot(tmp_path)
    path.write_text(MESH_URDF.replace("meshes/base.stl", "meshes/base.dae"))
    visuals, problems = load_visuals(path)
    assert "base" not in visuals and "link1" in visuals
    assert len(problems) == 1 and "only STL meshes" in problems[0]


# ------------------------------------------------------------------------------------------------ real runs
EJECTION = ["simulation.t_final_s=2.0"]
BROWSER_RUNS = ("ejection", "capture", "snare_closing", "deployment", "unilateral")
"""The runs whose reports the browser test opens, with the conformance tests' short overrides (compile dominates).
The slow suite opens them in two groups (a planar and a 3-D scene, then the other three; five reports at once took
290 s of a loaded 2-core CI machine); the fast suite's browser test is the meshes test's two reports."""
FAST_BROWSER_RUNS = ("capture", "unilateral")


def run_cli(config: Path, out: Path, overrides=()) -> Path:
    sets = [a for o in overrides for a in ("--set", o)]
    assert main(["run", str(config), "--out", str(out), "--no-cache", "--quiet", *sets]) == 0
    assert (out / "report.html").is_file()
    return out


def run_process(name: str, out: Path) -> Path:
    """``diffspace run`` of a short case of ``name`` in its own process (several compile at once)."""
    config, overrides = SHORT[name]
    sets = [a for o in overrides for a in ("--set", o)]
    command = [sys.executable, "-m", "diffspace.app.cli", "run", str(ROOT / "configs" / config), "--out", str(out),
               "--no-cache", "--quiet", *sets]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, f"{name}: {done.stderr[-2000:]}"
    return out


def embedded(report: Path) -> dict:
    text = report.read_text()
    match = re.search(r'<script type="application/json" id="diffspace-data">(.*?)</script>', text, re.S)
    return json.loads(match.group(1).replace("<\\/", "</"))


@pytest.mark.slow  # CI time; the browser tests of the fast suite draw posed scenes
@pytest.mark.timeout(600)
def test_ejection_scene_poses_are_the_cores_frame_poses(tmp_path):
    """Every body's pose in the report equals frame_pose of the simulated (locked) robot at the sampled times."""
    config = ROOT / "configs" / "ejection_plane.toml"
    out = run_cli(config, tmp_path / "ejection", EJECTION)
    scene = embedded(out / "report.html")["scenes"][0]
    scenario = load_scenario(config, EJECTION)
    outcome = simulate_default(scenario)
    ts, qs = np.asarray(outcome.solution.ts), np.asarray(outcome.solution.ys.q)
    robot = scenario.model_of(scenario.params)[0].robot
    times = np.asarray(scene["times"])
    index = np.array([np.argmin(np.abs(ts - t)) for t in times])
    assert np.max(np.abs(ts[index] - times)) <= 1e-9 * max(1.0, ts[-1])  # sampled saved times, not interpolated
    links = [b for b in scene["bodies"] if b["name"] in robot.frame_names]
    assert {b["name"] for b in links} == set(scenario.robot.body_names)  # every link of the full arm is drawn
    tolerance = 10.0 ** (1 - DIGITS)  # the embedded numbers carry DIGITS significant digits
    for body in links:
        rot, pos = jax.vmap(lambda q, n=body["name"]: frame_pose(robot, q, n))(qs[index])
        np.testing.assert_allclose(np.reshape(body["rot"], (-1, 3, 3)), rot, rtol=tolerance, atol=tolerance)
        np.testing.assert_allclose(np.reshape(body["pos"], (-1, 3)), pos, rtol=tolerance, atol=tolerance)
    saved = load_scene(out / "scene.npz")
    assert len(saved.times) == len(times) and saved.title == scene["title"]


def rendered(browser: str, report: Path, t: float, png: Path) -> np.ndarray:
    """Screenshot of the report at ``#t=t`` after checking, in its DOM (the same browser start), that it drew
    that time without JavaScript errors."""
    from matplotlib.image import imread

    text = render(browser, report, f"#t={t!r}", png)
    errors = re.search(r'<pre id="diffspace-errors">(.*?)</pre>', text, re.S)
    assert errors is not None and errors.group(1).strip() == "", f"{report}: JavaScript errors: {errors}"
    assert 'data-ready="1"' in text, f"{report}: the 3-D view never finished drawing"
    shown = [float(x) for x in re.findall(r'data-frame-time="([^"]+)"', text)]
    times = embedded(report)["scenes"][0]["times"]
    expected = max((x for x in times if x <= t + 1e-12), default=times[0])  # the viewer's frame at or before t
    assert shown and shown[0] == pytest.approx(expected, rel=1e-9, abs=1e-12)
    return imread(png)[..., :3]


def start_and_end(browser: str, out: Path, name: str, pictures: Path) -> tuple[np.ndarray, np.ndarray]:
    """The report of ``out`` rendered at t = 0 and at its last sampled time."""
    report = out / "report.html"
    end = embedded(report)["scenes"][0]["times"][-1]
    return (rendered(browser, report, 0.0, pictures / f"{name}_start.png"),
            rendered(browser, report, end, pictures / f"{name}_end.png"))


def check_pictures(name: str, first: np.ndarray, last: np.ndarray) -> None:
    """The 3-D view is not blank at either time, and it changes between them."""
    view = (slice(120, 760), slice(0, 1280))  # the 3-D view at the top of the page
    assert first[view].std() > 0.05 and last[view].std() > 0.05, f"{name}: blank 3-D view"
    assert np.mean(np.abs(first[view] - last[view])) > 1e-4, f"{name}: the view does not change over time"


def chromium() -> str:
    browser = find_chromium()
    if browser is None:
        pytest.skip("no Chromium found (install Debian's chromium, as .ci/run does)")
    return browser


@pytest.mark.timeout(900)
@pytest.mark.parametrize("names", [
    pytest.param(FAST_BROWSER_RUNS, id="capture-unilateral", marks=pytest.mark.slow),  # CI time: the meshes test
    # below opens reports in the browser in the fast suite
    pytest.param(tuple(n for n in BROWSER_RUNS if n not in FAST_BROWSER_RUNS), id="others", marks=pytest.mark.slow),
])
def test_scenario_reports_render_in_headless_chromium(tmp_path, names):
    """Short runs of the ejection, capture, snare closing, deployment and unilateral scenarios (two at a time,
    each in its own process), each report opened at #t=0 and #t=<end>: drawn without JavaScript errors, at the
    time asked, not blank, and different at the two times."""
    browser = chromium()
    start = time.perf_counter()

    def one(name: str):
        return start_and_end(browser, run_process(name, tmp_path / name), name, tmp_path)

    with ThreadPoolExecutor(max_workers=2) as pool:
        pictures = dict(zip(names, pool.map(one, names)))
    for name, (first, last) in pictures.items():
        check_pictures(name, first, last)
    print(f"{len(names)} reports run and rendered in {time.perf_counter() - start:.0f} s")


@pytest.mark.timeout(900)
def test_reports_with_and_without_meshes_render_in_headless_chromium(tmp_path):
    """A robot with STL visuals and one drawn from primitives, in the browser."""
    browser = chromium()
    urdf = mesh_robot(tmp_path / "robot")
    meshed = tmp_path / "stl.toml"
    meshed.write_text(f'[robot]\npath = "{urdf}"\n[motion]\ninitial_attitude = [30.0, -60.0]\n'
                      'torque_amplitude_N_m = [3.0, 1.0]\ntorque_period_s = 1.0\nend_effector = "link2"\n'
                      '[simulation]\nt_final_s = 1.0\n')
    outs = {"stl_meshes": run_cli(meshed, tmp_path / "stl_meshes"),
            "primitives": run_cli(ROOT / "configs" / "free_floating.toml", tmp_path / "primitives",
                                  ["simulation.t_final_s=1.0"])}
    meshes = {b["name"]: len(b["f"]) // 3 for b in embedded(outs["stl_meshes"] / "report.html")["scenes"][0]["bodies"]}
    assert meshes["base"] == 12 and meshes["link2"] > 4  # the STL cube; the tetrahedron with its sphere
    for name, out in outs.items():
        check_pictures(name, *start_and_end(browser, out, name, tmp_path))
        size = (out / "report.html").stat().st_size  # Plotly inlined gzip-packed (2.0 MB), not as text (4.8 MB)
        assert size < 2_500_000 and "function(" not in (out / "report.html").read_text()[:3_000_000].split(
            'id="diffspace-plotly">')[1][:1000], size


def test_planar_scenes_are_seen_facing_their_plane():
    """A scene moving in the x-z plane is seen from -y (z up), one in the x-y plane from above (y up), at a
    small tilt; a scene moving in 3-D keeps the oblique default view."""
    from diffspace.app.report.scene_data import DEFAULT_EYE, camera
    from diffspace.io.scene import Line, Scene

    t = np.linspace(0.0, 1.0, 20)
    circle = np.stack([np.cos(3 * t), np.zeros_like(t), np.sin(3 * t)], axis=1)  # in the x-z plane

    def eye_of(points):
        scene = Scene("s", t, lines=(Line("l", np.stack([np.zeros_like(points), points], axis=1)),))
        view = camera(scene)
        return np.array([view["eye"][k] for k in "xyz"]), np.array([view["up"][k] for k in "xyz"])

    eye, up = eye_of(circle)
    assert eye[1] < -2.0 and abs(eye[0]) < 0.5 and up @ [0, 0, 1] == 1.0
    eye, up = eye_of(circle[:, [0, 2, 1]])  # the x-y plane
    assert eye[2] > 2.0 and up @ [0, 1, 0] == 1.0
    helix = np.column_stack([circle[:, 0], circle[:, 2], t])
    assert np.allclose(eye_of(helix)[0], DEFAULT_EYE)
