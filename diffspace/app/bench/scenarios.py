"""First-call compile time of every scenario (SPEC 6), for ``diffspace bench``.

Each probe builds a scenario from its shipped config (``configs/``) exactly as ``diffspace run`` does and
returns the pure function ``run`` jit-compiles (the forward simulation) and, where the scenario has a
headline gradient, ``jax.grad`` of that headline (the closing snare has none in ``run``). The benchmark AOT-compiles each with ``jax.jit(fn).lower(
*args).compile()`` and reports trace + compile seconds separately from run time; nothing is timed in tests.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable

from ...io.packaged import DATA_DIR

CONFIG_DIR = DATA_DIR


def _config(module, name: str) -> dict:
    from ...io.config import read_toml, validate

    path = CONFIG_DIR / name
    return validate(read_toml(path), module.schema(), path.parent)


def _ejection():
    import jax

    from ...scenarios import ejection_study as es

    case = es.case_from_config(_config(es, "ejection_plane.toml"))
    forward = lambda angles: es.evaluate(case, angles)[0].separation_velocity  # noqa: E731
    gradient = jax.grad(lambda angles: es.evaluate(case, angles)[0].stable_velocity)
    return "ejection_plane.toml", (case.angles,), forward, gradient


def _impact():
    import jax
    import jax.numpy as jnp

    from ...scenarios import impact

    cfg = _config(impact, "impact_airtable.toml")
    law, f = impact.build_law(cfg), impact.friction_force(cfg)
    n_save = cfg["simulation"]["n_save"]
    forward = lambda v: impact._simulate(cfg, law, v, f, n_save=n_save)["peak_force_N"]  # noqa: E731
    gradient = jax.grad(lambda v: impact._simulate(cfg, law, v, f)["detached_velocity_m_s"])
    return "impact_airtable.toml", (jnp.asarray(cfg["impact"]["approach_speed_m_s"]),), forward, gradient


def _capture():
    import jax

    from ...scenarios import capture

    case = capture.case_from_config(_config(capture, "capture.toml"))
    forward = lambda p: capture.evaluate(case, p)[0].peak_force  # noqa: E731
    return "capture.toml", (case.params,), forward, jax.grad(forward)


def _snare():
    import jax
    import jax.numpy as jnp

    from ...scenarios import snare
    from ...scenarios import snare_design as sd

    cfg = _config(snare, "snare_capture.toml")
    model = snare.build_model(cfg, snare.striking_mass(cfg)["striking_mass_kg"])
    node, speed = cfg["strike"]["node"], jnp.asarray(cfg["strike"]["approach_speed_m_s"])
    settings = {"rtol": cfg["simulation"]["rtol"], "atol": cfg["simulation"]["atol"],
                "max_steps": cfg["simulation"]["max_steps"]}
    forward = lambda v: sd.snare_contact(model, node, v, "dynamic", **settings)["peak_force_N"]  # noqa: E731
    gradient = jax.grad(lambda v: sd.snare_contact(model, node, v, "virtual")["peak_force_N"])
    return "snare_capture.toml", (speed,), forward, gradient


def _closing():
    import jax.numpy as jnp

    from ...scenarios import snare_closing as sc

    cfg = _config(sc, "snare_closing.toml")
    model = sc.build_model(cfg)
    sh, sim = cfg["shaft"], cfg["simulation"]
    y0, _ = sc.initial_state(model, jnp.asarray(sh["initial_position_m"]), jnp.asarray(sh["initial_velocity_m_s"]))
    t_probe = 0.02  # the compiled program does not depend on the horizon; a short one keeps the timed call short

    def forward(t_end):
        return sc.closing_solve(model, y0, t_end, rtol=sim["rtol"], atol=sim["atol"], n_save=sim["n_save"],
                                max_steps=sim["max_steps"]).ys[5][-1]  # drive work

    return "snare_closing.toml (0.02 s horizon)", (jnp.asarray(t_probe),), forward, None


PROBES: dict[str, Callable] = {"ejection": _ejection, "impact": _impact, "capture": _capture, "snare": _snare,
                               "closing": _closing}


def scenario_compile_times(gradients: bool = True, progress=None) -> dict:
    """``{scenario: {config, forward_compile_s, forward_run_s, gradient_compile_s, gradient_run_s}}``: trace +
    XLA compile of each probe, and one timed call of the compiled program after a warm-up call."""
    import jax

    results = {}
    for name, probe in PROBES.items():
        if progress is not None:
            progress.stage(f"compile scenario '{name}'")
        config, args, forward, gradient = probe()
        row = {"config": config}
        for label, fn in (("forward", forward), ("gradient", gradient)):
            if fn is None or (label == "gradient" and not gradients):
                continue
            t0 = time.perf_counter()
            compiled = jax.jit(fn).lower(*args).compile()
            row[f"{label}_compile_s"] = time.perf_counter() - t0
            jax.block_until_ready(compiled(*args))
            t0 = time.perf_counter()
            jax.block_until_ready(compiled(*args))
            row[f"{label}_run_s"] = time.perf_counter() - t0
        results[name] = row
        if progress is not None:
            progress.done()
    return results


def summary_lines(rows: dict, limit_s: float = 20.0) -> list[str]:
    """One line per scenario: compile times, run times and the SPEC's 20 s compile target."""
    lines = [f"  scenario first-call compile (target < {limit_s:g} s on 2 cores):"]
    for name, r in rows.items():
        grad = (f", gradient {r['gradient_compile_s']:.1f} s (run {1e3 * r['gradient_run_s']:.1f} ms)"
                if "gradient_compile_s" in r else "")
        worst = max(r.get("forward_compile_s", 0.0), r.get("gradient_compile_s", 0.0))
        lines.append(f"    {name:9s} forward {r['forward_compile_s']:.1f} s (run {1e3 * r['forward_run_s']:.1f} ms)"
                     f"{grad}  {'ok' if worst < limit_s else 'OVER'}")
    return lines
