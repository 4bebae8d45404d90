"""``diffspace bench`` runs and writes its JSON (tiny sizes; no timing thresholds: speed is never tested)."""

from __future__ import annotations

import json
import math

import pytest

from diffspace.app.bench import BenchConfig, run_bench


def _positive_finite(res: dict, keys):
    for key in keys:
        assert key in res, f"missing key {key}"
        value = res[key]
        assert isinstance(value, (int, float)) and math.isfinite(value) and value > 0, (key, value)


def test_bench_dynamics_writes_json(tmp_path):
    cfg = BenchConfig(fd_batch=8, fd_repeats=1, pin_calls=8, ejection=False, scenarios=False, kernel_scaling=False,
                      warm_start=False)
    res = run_bench(quick=True, out=tmp_path, config=cfg, progress=False)
    bench = json.loads((tmp_path / "bench.json").read_text())
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert bench == summary
    assert bench["fd_batch_size"] == 8
    _positive_finite(
        bench, ["forward_dynamics_per_sample_s", "mass_matrix_per_sample_s", "forward_dynamics_compile_s",
                "mass_matrix_compile_s", "forward_dynamics_single_call_s", "forward_dynamics_compiled_call_s",
                "total_wall_s"],
    )
    assert res["fd_batch_size"] == 8
    pytest.importorskip("pinocchio")
    _positive_finite(
        bench, ["forward_dynamics_per_sample_vs_pinocchio_aba", "mass_matrix_per_sample_vs_pinocchio_crba",
                "pinocchio_aba_per_call_s", "pinocchio_crba_per_call_s", "forward_dynamics_compiled_call_vs_pinocchio_aba"],
    )
    assert bench["forward_dynamics_max_abs_diff_vs_pinocchio"] < 1e-8  # same robot, same answer


@pytest.mark.slow
def test_bench_ejection_writes_json(tmp_path):
    cfg = BenchConfig(
        fd_batch=4, fd_repeats=1, pin_calls=4, ejection_friction="none", ejection_batch=2, ejection_repeats=1,
        ejection_max_segments=3, accuracy=1e-4, rtol_ladder=(1e-6,), mujoco_ladder=(("RK4", 1e-3),), gradient=True,
        scenarios=False, kernel_scaling=False, warm_start=False,
    )
    run_bench(quick=True, out=tmp_path, config=cfg, progress=False)
    bench = json.loads((tmp_path / "bench.json").read_text())
    _positive_finite(
        bench, ["ejection_single_sims_per_s", "ejection_batched_sims_per_s", "ejection_compile_single_s",
                "ejection_compile_batched_s", "ejection_gradient_vs_forward", "ejection_gradient_compile_s"],
    )
    assert bench["ejection_reference_failures"] == 0
    assert bench["ejection_gradient_finite"]
    if "mujoco_version" in bench:
        _positive_finite(bench, ["mujoco_single_sims_per_s", "mujoco_batched_sims_per_s", "ejection_batched_vs_mujoco"])
        assert bench["mujoco_accuracy_reached"]


def test_scenario_compile_probe_reports_compile_and_run_times():
    """The per-scenario compile report on the cheapest scenario; the full bench runs them all."""
    from diffspace.app.bench import scenarios as bench_scenarios

    rows = bench_scenarios.scenario_compile_times(names=["impact"], gradients=False)
    _positive_finite(rows["impact"], ["forward_compile_s", "forward_run_s"])
    assert rows["impact"]["config"] == "impact_airtable.toml"
    lines = bench_scenarios.summary_lines(rows)
    assert "impact" in lines[1] and ("ok" in lines[1] or "OVER" in lines[1])


@pytest.mark.slow  # 160 s of compiles on 2 cores (CI time); the bench itself is tested fast above
@pytest.mark.timeout(900)
def test_gpu_bench_quick_mode_runs_on_the_cpu(tmp_path, capsys):
    """``diffspace bench --gpu --quick`` (the GPU bench's structure with small batches) on whatever device JAX
    has: every part measured, the ejections separate, the gradients are finite, MuJoCo agrees with ours, the
    campaign ran, and the plot is written."""
    from diffspace.app.cli import main

    assert main(["bench", "--gpu", "--quick", "--out", str(tmp_path)]) == 0
    bench = json.loads((tmp_path / "bench.json").read_text())
    scaling = bench["device_scaling"]
    assert bench["mode"] == "gpu" and scaling["device"].startswith(("cpu", "gpu", "cuda"))
    assert [r["batch"] for r in scaling["ejection"]] == [4, 16]
    for row in scaling["ejection"]:
        assert row["ok"] == row["batch"]
        _positive_finite(row, ["sims_per_s", "compile_s", "run_s"])
    assert scaling["gradient"]["finite"] and scaling["gradient"]["gradients_per_s"] > 0
    for row in scaling["forward_dynamics"]:
        _positive_finite(row, ["ns_per_sample", "compile_s"])
    mc = scaling["montecarlo"]
    assert mc["exit_code"] == 0 and mc["runs"] == 4 * 7 and mc["failed_runs"] == 0
    assert mc["time_s"]["simulations"]["wall_s"] > 0
    if isinstance(scaling["mujoco"], dict):
        assert scaling["mujoco"]["velocity_max_rel_diff_from_ours"] < 1e-4  # RK4 1e-4 s: the 1e-6 setting
    assert (tmp_path / "scaling.png").is_file()
    out = capsys.readouterr().out
    assert "gradients/s" in out and "ns/sample" in out and "Monte-Carlo" in out
