"""First-call compile time of every scenario, for ``diffspace bench``.

Each scenario is built from its shipped config exactly as ``diffspace run`` does. The forward program is
``scenario.simulate(scenario.params)``; the gradient program is ``jax.grad`` of the scenario's headline metric
with respect to its headline design variable (``AbstractScenario.headline``) through
:func:`diffspace.design.gradient.design_metrics`, the function every design command differentiates (forward
mode inside a reverse-mode rule). Both are AOT-compiled with
``jax.jit(fn).lower(...).compile()``; trace + compile seconds are reported separately from one timed call of
the compiled program after a warm-up call. Nothing is timed in tests.
"""

from __future__ import annotations

import time

from ...io.packaged import packaged_config

CONFIGS = {  # scenario name -> shipped config
    "ejection": "ejection_plane.toml",
    "impact": "impact_airtable.toml",
    "capture": "capture.toml",
    "capture_snare": "capture_snare_optimize.toml",
    "snare": "snare_capture.toml",
    "snare_closing": "snare_closing.toml",
    "free_floating": "free_floating.toml",
    "deployment": "deployment_scheme3.toml",
    "unilateral": "unilateral_contact.toml",
    "flexible_arm": "flexible_arm.toml",
}


def design_start(loaded, key: str) -> float:
    """The config's value of a design variable (names resolved), or the middle of its range when the config
    holds no number there."""
    configured = loaded.builder().configured(loaded.scenario, (key,))
    if configured is not None:
        return configured[key]
    p = loaded.scenario.parameter(key)
    return (p.lower * p.upper) ** 0.5 if p.log else 0.5 * (p.lower + p.upper)


def _programs(name: str):
    """``((forward, args), (gradient, args) or None)`` of a scenario's shipped config."""
    import jax
    import jax.numpy as jnp

    from ...design.gradient import design_metrics
    from ..commands import load

    loaded = load(packaged_config(CONFIGS[name]), [])
    scenario = loaded.scenario

    def forward(s):
        return s.simulate(s.params)

    if scenario.headline is None:
        return (forward, (scenario,)), None
    metric, key = scenario.headline

    def headline(x, s):
        return design_metrics(s, {key: x})[metric]

    return (forward, (scenario,)), (jax.grad(headline), (jnp.asarray(design_start(loaded, key)), scenario))


def _timed_compile(fn, args) -> tuple[float, float]:
    import jax

    t0 = time.perf_counter()
    compiled = jax.jit(fn).lower(*args).compile()
    compile_s = time.perf_counter() - t0
    jax.block_until_ready(compiled(*args))
    t0 = time.perf_counter()
    jax.block_until_ready(compiled(*args))
    return compile_s, time.perf_counter() - t0


def scenario_compile_times(names=None, gradients: bool = True, progress=None) -> dict:
    """``{scenario: {config, forward_compile_s, forward_run_s, gradient_compile_s, gradient_run_s}}``."""
    results = {}
    for name in names or [n for n in CONFIGS if packaged_config(CONFIGS[n]).is_file()]:
        if progress is not None:
            progress.stage(f"compile scenario '{name}'")
        (forward, args), gradient = _programs(name)
        row = {"config": CONFIGS[name]}
        row["forward_compile_s"], row["forward_run_s"] = _timed_compile(forward, args)
        if gradients and gradient is not None:
            row["gradient_compile_s"], row["gradient_run_s"] = _timed_compile(*gradient)
        results[name] = row
        if progress is not None:
            progress.done()
    return results


FORWARD_TARGET_S = 10.0
"""Compile target [s] of a scenario's forward program on the 2-core CPU."""
GRADIENT_TARGET_S = 15.0
"""Compile target [s] of a scenario's headline gradient on the 2-core CPU."""


def summary_lines(rows: dict) -> list[str]:
    """One line per scenario: compile times, run times and whether each compile met its target
    (:data:`FORWARD_TARGET_S`, :data:`GRADIENT_TARGET_S`)."""
    lines = [f"  scenario first-call compile (targets on 2 cores: forward <= {FORWARD_TARGET_S:g} s, "
             f"gradient <= {GRADIENT_TARGET_S:g} s):"]
    for name, r in rows.items():
        grad = (f", gradient {r['gradient_compile_s']:.1f} s (run {1e3 * r['gradient_run_s']:.1f} ms)"
                if "gradient_compile_s" in r else "")
        met = (r["forward_compile_s"] <= FORWARD_TARGET_S
               and r.get("gradient_compile_s", 0.0) <= GRADIENT_TARGET_S)
        lines.append(f"    {name:14s} forward {r['forward_compile_s']:.1f} s (run {1e3 * r['forward_run_s']:.1f} ms)"
                     f"{grad}  {'ok' if met else 'OVER'}")
    return lines
