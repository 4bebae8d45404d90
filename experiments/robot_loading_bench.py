"""Robot loading time vs the number of links: ``python experiments/robot_loading_bench.py [--quick]``.

Loads serial chains written as URDF (100 .. 20,000 links; every second joint fixed, so 20,000 links are
10,000 bodies, the body limit) and as native TOML, all-movable URDF chains up to the body limit, and times
how fast a description over the limit is refused. Writes ``experiments/results/robot_loading/`` (JSON with
every timing, the fitted cost per link and a log-log plot). Timings are the best of a few repeats (wall
clock and process CPU time, one process, after a warm-up load); file writing is not timed.
"""

from __future__ import annotations

import argparse
import json
import platform
import tempfile
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from diffspace.io import load_robot  # noqa: E402
from diffspace.core.robot import MAX_BODIES  # noqa: E402
from diffspace.core.status import ConfigError  # noqa: E402

INERTIA = '<inertia ixx="0.01" iyy="0.02" izz="0.025" ixy="0" ixz="0" iyz="0"/>'


def chain_urdf(n_links: int, fixed_every: int) -> str:
    """Serial chain, links 0.1 m apart with a CoM offset and an inertial rpy; joints 1, 1 + k, 1 + 2k, ... fixed
    (k = ``fixed_every``; 0: none), so 20,000 links with k = 2 make 10,000 bodies."""
    links = [
        f'<link name="l{i}"><inertial><origin xyz="0 0 0.05" rpy="0.1 0.2 0.3"/><mass value="1"/>{INERTIA}'
        "</inertial></link>"
        for i in range(n_links)
    ]
    joints = [
        f'<joint name="j{i}" type="{"fixed" if fixed_every and i % fixed_every == 1 else "revolute"}">'
        f'<parent link="l{i - 1}"/><child link="l{i}"/><origin xyz="0 0 0.1" rpy="0 0.01 0"/><axis xyz="0 1 0"/>'
        '<limit lower="-2" upper="2" effort="10" velocity="1"/></joint>'
        for i in range(1, n_links)
    ]
    return '<robot name="chain">' + "".join(links) + "".join(joints) + "</robot>"


def chain_toml(n_links: int, fixed_every: int) -> str:
    lines = ['[base]\nname = "l0"\nmass = 1.0\ncom = [0, 0, 0.05]\ninertia = [0.01, 0.02, 0.025, 0, 0, 0]']
    for i in range(1, n_links):
        kind = "fixed" if fixed_every and i % fixed_every == 1 else "revolute"
        lines.append(
            f'[[joints]]\nname = "j{i}"\ntype = "{kind}"\nparent = "l{i - 1}"\nchild = "l{i}"\nxyz = [0, 0, 0.1]\n'
            "axis = [0, 1, 0]\nlink = { mass = 1.0, com = [0, 0, 0.05], inertia = [0.01, 0.02, 0.025, 0, 0, 0] }"
        )
    return "\n".join(lines) + "\n"


def time_load(path: Path, repeats: int) -> dict:
    """Best wall-clock and process CPU time of ``repeats`` loads (CPU time is robust to a shared machine)."""
    wall, cpu, outcome = np.inf, np.inf, {}
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        try:
            robot = load_robot(path)
            outcome = {"bodies": len(robot.body_names), "joints": robot.n_joints, "mass_kg": float(robot.total_mass)}
        except ConfigError as err:
            outcome = {"refused": str(err)}
        wall, cpu = min(wall, time.perf_counter() - start), min(cpu, time.process_time() - start_cpu)
    return {"seconds": wall, "cpu_seconds": cpu, "file_MB": path.stat().st_size / 1e6, **outcome}


def series(tmp: Path, writer, suffix: str, sizes, fixed_every: int, repeats: int) -> list[dict]:
    rows = []
    for n in sizes:
        path = tmp / f"chain_{n}_{fixed_every}{suffix}"
        path.write_text(writer(n, fixed_every))
        row = {"links": n, **time_load(path, repeats if n <= 3000 else 1)}
        rows.append(row)
        state = "refused" if "refused" in row else f"{row['bodies']} bodies"
        print(f"{suffix} links={n:6d} ({state}): {row['seconds']:.3f} s wall, {row['cpu_seconds']:.3f} s CPU", flush=True)
    return rows


def per_link_fit(rows: list[dict]) -> dict:
    """Least-squares ``t = a + b n`` of CPU time over the loaded rows (``b``: cost per link) and the slope of
    ``log t`` vs ``log n`` from 1,000 links on (1 = linear)."""
    ok = [r for r in rows if "refused" not in r]
    n, t = np.array([r["links"] for r in ok], float), np.array([r["cpu_seconds"] for r in ok])
    b, a = np.polyfit(n, t, 1)
    large = n >= 1000
    exponent = np.polyfit(np.log(n[large]), np.log(t[large]), 1)[0] if large.sum() > 1 else float("nan")
    return {"seconds_per_link": b, "intercept_s": a, "loglog_slope_from_1000_links": float(exponent)}


def main(quick: bool, out: Path) -> dict:
    sizes = [100, 300, 1000, 3000] if quick else [100, 300, 1000, 3000, 10_000, 20_000]
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        (tmp / "warm.urdf").write_text(chain_urdf(10, 2))
        load_robot(tmp / "warm.urdf")
        urdf = series(tmp, chain_urdf, ".urdf", sizes, 2, 3)
        toml = series(tmp, chain_toml, ".toml", sizes, 2, 3)
        movable = series(tmp, chain_urdf, ".urdf", [n for n in sizes if n <= MAX_BODIES] + [MAX_BODIES + 1], 0, 3)
    result = {
        "description": __doc__.splitlines()[0],
        "machine": {"platform": platform.platform(), "processor": platform.processor()},
        "max_bodies": MAX_BODIES,
        "urdf_half_fixed": {"rows": urdf, "fit": per_link_fit(urdf)},
        "toml_half_fixed": {"rows": toml, "fit": per_link_fit(toml)},
        "urdf_all_movable": {"rows": movable, "fit": per_link_fit(movable)},
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / "robot_loading.json").write_text(json.dumps(result, indent=2))
    fig, ax = plt.subplots(figsize=(6, 4))
    for label, rows in (("URDF, half fixed", urdf), ("TOML, half fixed", toml), ("URDF, all movable", movable)):
        ok = [r for r in rows if "refused" not in r]
        ax.loglog([r["links"] for r in ok], [r["cpu_seconds"] for r in ok], "o-", label=label)
    ax.set_xlabel("links")
    ax.set_ylabel("load time [s CPU]")
    ax.set_title("Robot loading time (linear = slope 1)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "robot_loading.png", dpi=120)
    return result


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="sizes up to 3,000 links only")
    parser.add_argument("--out", default=str(Path(__file__).resolve().parent / "results" / "robot_loading"))
    args = parser.parse_args()
    main(args.quick, Path(args.out))
