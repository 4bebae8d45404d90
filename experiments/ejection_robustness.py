"""Random ejection campaigns near the shipped cases: how many runs end in each status, and how the in-rail
phase compares with MuJoCo where both have one friction level.

Sets (``N`` cases each, seeded):

* ``space``: ``ejection_space.toml`` (all seven joints free, static 4 N m, Coulomb 2 N m), the attitude
  ``attitude_1`` +-20 deg per joint, spring stiffness 600-1000 N/m;
* ``space_one_level``: the same with static = Coulomb, drawn from 1-3 N m;
* ``plane_static_x1`` / ``plane_static_x1.01`` / ``plane_static_x2``: ``ejection_plane.toml``, the named
  attitudes +-15 deg (free joints), stiffness +-15 %, Coulomb 1-3 N m, static = 1, 1.01 or 2 x Coulomb.

For the one-level sets MuJoCo (the bench's in-rail model: spring-loaded slide, hinge ``frictionloss`` =
the friction level, ``damping`` = B, RK4 1e-4 s, tightened friction constraint) gives the separation time
and velocity of every case; the largest relative differences are reported.

Writes ``experiments/results/ejection_robustness/<label>.json``. Run: ``python
experiments/ejection_robustness.py [N] [label] [set,set,...]`` (default 4096 cases of every set, label
``after``).
"""

from __future__ import annotations

import json
import sys
import time
from importlib.metadata import version
from collections import Counter
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

import diffspace
from diffspace.core.status import Status
from diffspace.io.packaged import packaged_config

OUT = Path(__file__).resolve().parent / "results" / "ejection_robustness"
CHUNK = 256


def _cases(scenario, rng, n: int, around: np.ndarray, spread_deg: float, stiffness, coulomb, static_ratio):
    """Batched params: attitudes around the rows of ``around`` (config units), free joints dispersed."""
    free = np.asarray(scenario.free)
    base = around[np.arange(n) % len(around)].copy()
    base[:, free] += rng.uniform(-spread_deg, spread_deg, (n, len(free)))
    params = scenario.params
    level = np.full(n, float(params.coulomb_torque)) if coulomb is None else rng.uniform(*coulomb, n)
    static = np.full(n, float(params.static_torque)) if static_ratio is None else static_ratio * level
    return params.__class__(
        attitude=jnp.asarray(np.deg2rad(base)), spring_stiffness=jnp.asarray(rng.uniform(*stiffness, n)),
        spring_compression=jnp.full(n, params.spring_compression), static_torque=jnp.asarray(static),
        coulomb_torque=jnp.asarray(level), viscous=jnp.full(n, params.viscous),
        smooth_velocity=jnp.full(n, params.smooth_velocity), stop_restitution=jnp.full(n, params.stop_restitution))


def _simulate(scenario, params) -> dict:
    run = jax.jit(jax.vmap(lambda p: _essentials(scenario, p)))
    n = params.attitude.shape[0]
    parts = [run(jax.tree_util.tree_map(lambda x: x[i:i + CHUNK], params)) for i in range(0, n, CHUNK)]
    return {k: np.concatenate([np.asarray(p[k]) for p in parts]) for k in parts[0]}


def _essentials(scenario, params):
    outcome = scenario.simulate(params)
    return {"status": outcome.status, "t_sep": outcome.separation_time, "v_sep": outcome.separation_velocity}


def _mujoco(scenario, params, horizon: float) -> dict:
    from diffspace.app.bench.mujoco_ejection import ejection_mujoco_model, mujoco_separation

    model, _ = scenario.model_of(jax.tree_util.tree_map(lambda x: x[0], params))
    free = np.asarray(scenario.free)
    models = [ejection_mujoco_model(model.robot, stiffness=float(k), compression=float(scenario.params.spring_compression),
                                    frictionloss=float(c), damping=float(scenario.params.viscous))
              for k, c in zip(np.asarray(params.spring_stiffness), np.asarray(params.coulomb_torque))]
    import mujoco

    data = [mujoco.MjData(models[0]) for _ in range(2)]
    return mujoco_separation(models, np.asarray(params.attitude)[:, free], float(scenario.params.spring_compression),
                             horizon, data=data, joint_names=model.robot.joint_names)


def campaign(name: str, config: str, n: int, seed: int, spread_deg: float, stiffness, coulomb, static_ratio,
             around_names, compare: bool, sets=()) -> dict:
    scenario = diffspace.load_scenario(packaged_config(config), list(sets))
    robot = scenario.robot
    around = np.stack([np.rad2deg(np.asarray(robot.attitude(a))) for a in around_names])
    params = _cases(scenario, np.random.default_rng(seed), n, around, spread_deg, stiffness, coulomb, static_ratio)
    start = time.perf_counter()
    result = _simulate(scenario, params)
    wall = time.perf_counter() - start
    counts = Counter(Status(int(s)).label for s in result["status"])
    failed = np.flatnonzero((result["status"] > 0) & (result["status"] < 10))
    summary = {"config": config, "cases": n, "seed": seed, "status_counts": dict(counts), "wall_s": wall,
               "failed_cases": failed[:20].tolist()}
    if compare:
        horizon = 1.2 * 0.5 * np.pi * np.sqrt(float(robot.total_mass) / float(np.min(params.spring_stiffness)))
        start = time.perf_counter()
        mj = _mujoco(scenario, params, horizon)
        both = np.isfinite(mj["t_s"]) & np.isfinite(result["t_sep"])
        summary["mujoco"] = {
            "compared": int(both.sum()), "mujoco_not_separated": int(np.sum(~np.isfinite(mj["t_s"]))),
            "max_rel_diff_separation_velocity": float(np.max(np.abs(result["v_sep"][both] / mj["v_m_s"][both] - 1))),
            "max_rel_diff_separation_time": float(np.max(np.abs(result["t_sep"][both] / mj["t_s"][both] - 1))),
            "wall_s": time.perf_counter() - start}
    print(name, json.dumps(summary), flush=True)
    return summary


SETS = {
    "space": ("ejection_space.toml", 0, 20.0, (600.0, 1000.0), None, None, ["attitude_1"], False),
    "space_one_level": ("ejection_space.toml", 1, 20.0, (600.0, 1000.0), (1.0, 3.0), 1.0, ["attitude_1"], True),
    **{f"plane_static_x{ratio:g}": ("ejection_plane.toml", 2, 15.0, (690.8, 934.6), (1.0, 3.0), ratio,
                                    [f"attitude_{i}" for i in range(1, 6)], ratio == 1.0)
       for ratio in (1.0, 1.01, 2.0)},
}


def main(n: int = 4096, label: str = "after", names: tuple[str, ...] = tuple(SETS)) -> dict:
    results = {}
    for name in names:
        config, seed, spread, stiffness, coulomb, ratio, around, compare = SETS[name]
        results[name] = campaign(name, config, n, seed, spread, stiffness, coulomb, ratio, around, compare)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"{label}.json").write_text(json.dumps({"jax": jax.__version__, "diffspace": version("diffspace"),
                                                    "sets": results}, indent=2) + "\n")
    return results


if __name__ == "__main__":
    args = sys.argv[1:]
    main(int(args[0]) if args else 4096, args[1] if len(args) > 1 else "after",
         tuple(args[2].split(",")) if len(args) > 2 else tuple(SETS))
