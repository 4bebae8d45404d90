"""Monte-Carlo campaigns: input distributions against SciPy, Saltelli's run layout, the Sobol estimators
against SALib on the same runs and against the Ishigami function's analytic indices, and a campaign of the
toy scenario (``x = A exp(-r T)``) against its closed-form mean, deviation, Sobol indices and derivatives."""

from __future__ import annotations

import html
import json
import math

import numpy as np
import pytest
from scipy import special, stats

from diffspace import scenarios
from diffspace.app.cli import main
from diffspace.design.montecarlo.distributions import Dispersion, normal_cdf, normal_ppf
from diffspace.design.montecarlo.spec import BLOCK, MonteCarloSpec
from diffspace.design.montecarlo.stats import output_statistics, sobol_indices

from .toy_scenario import ENTRY


@pytest.fixture(autouse=True)
def registered(monkeypatch):
    monkeypatch.setitem(scenarios.REGISTRY, "toy", ENTRY)


def test_normal_quantile_and_distribution_function_match_scipy():
    p = np.concatenate([np.logspace(-300, -2, 400), np.linspace(0.01, 0.99, 981), 1.0 - np.logspace(-16, -2, 300)])
    x = special.ndtri(p)
    assert np.max(np.abs(normal_ppf(p) - x) / np.maximum(1.0, np.abs(x))) < 4e-15
    z = np.linspace(-37.0, 8.0, 4001)
    assert np.max(np.abs(normal_cdf(z) / special.ndtr(z) - 1.0)) < 1e-12


DISPERSIONS = [
    (Dispersion("a", "normal", 2.0, 0.2), stats.norm(2.0, 0.2)),
    (Dispersion("b", "normal", 2.0, 0.2, 1.5, 2.5), stats.truncnorm(-2.5, 2.5, loc=2.0, scale=0.2)),
    (Dispersion("c", "normal", 0.0, 1.0, 6.0, 9.0), stats.truncnorm(6.0, 9.0)),  # far upper tail (reflected)
    (Dispersion("d", "normal", 0.0, 1.0, -math.inf, -1.0), stats.truncnorm(-np.inf, -1.0)),
    (Dispersion("e", "uniform", lower=0.085, upper=0.087), stats.uniform(0.085, 0.002)),
    (Dispersion("f", "lognormal", 3.0, 0.6), stats.lognorm(math.sqrt(math.log1p(0.04)), scale=3.0 / math.sqrt(1.04))),
]


@pytest.mark.parametrize("dispersion, reference", DISPERSIONS, ids=[d.key for d, _ in DISPERSIONS])
def test_quantiles_moments_and_samples_follow_scipy(dispersion, reference):
    u = np.linspace(1e-6, 1.0 - 1e-6, 1001)
    assert np.allclose(dispersion.ppf(u), reference.ppf(u), rtol=1e-12, atol=1e-13 * reference.std())
    mean, std = dispersion.moments()
    assert mean == pytest.approx(reference.mean(), rel=1e-12, abs=1e-12 * reference.std())
    assert std == pytest.approx(reference.std(), rel=1e-10)
    spec = MonteCarloSpec((dispersion,), samples=4096, seed=11)
    drawn = spec.values(np.arange(spec.n_cases))[:, 0]
    assert stats.kstest(drawn, reference.cdf).pvalue > 1e-3


def _spec(sobol: bool, seed: int = 5, samples: int = 3000, chunk_size: int = 64) -> MonteCarloSpec:
    dispersions = (Dispersion("k", "normal", 812.7, 16.0), Dispersion("l", "uniform", lower=0.085, upper=0.087),
                   Dispersion("c", "lognormal", 2.0, 0.3))
    return MonteCarloSpec(dispersions, samples, seed, sensitivity=("sobol",) if sobol else (), chunk_size=chunk_size)


def test_saltelli_runs_and_reproducible_cases():
    spec = _spec(sobol=True)
    d = 3
    values = spec.values(np.arange(spec.n_cases)).reshape(spec.samples, d + 2, d)
    a, b = values[:, 0], values[:, 1]
    assert not np.any(a == b)
    for i in range(d):  # AB_i: A with column i from B
        expected = a.copy()
        expected[:, i] = b[:, i]
        assert np.array_equal(values[:, 2 + i], expected)
    # a case's inputs depend on the seed and its index only: not on the chunk size, nor across blocks
    other = _spec(sobol=True, chunk_size=7)
    indices = np.arange(BLOCK * 3 - 10, BLOCK * 3 + 10)
    assert np.array_equal(spec.values(indices), other.values(indices))
    chunked = [c for chunk in range(other.n_chunks) for c in other.cases(chunk)]
    assert [list(c.values()) for c in chunked] == spec.values(np.arange(spec.n_cases)).tolist()
    assert not np.array_equal(_spec(sobol=True, seed=6).values(indices), spec.values(indices))
    plain = _spec(sobol=False)
    assert plain.n_cases == plain.samples and spec.n_cases == spec.samples * (d + 2)


ISHIGAMI_A, ISHIGAMI_B = 7.0, 0.1


def _ishigami(x):
    return np.sin(x[:, 0]) + ISHIGAMI_A * np.sin(x[:, 1]) ** 2 + ISHIGAMI_B * x[:, 2] ** 4 * np.sin(x[:, 0])


def _ishigami_indices():
    """Analytic first and total indices of the Ishigami function on [-pi, pi]^3 (Sobol' & Levitan 1999)."""
    a, b, pi4 = ISHIGAMI_A, ISHIGAMI_B, np.pi**4
    v1, v2, v13 = 0.5 * (1 + b * pi4 / 5) ** 2, a**2 / 8, 8 * b**2 * np.pi**8 / 225
    v = v1 + v2 + v13
    return np.array([v1, v2, 0.0]) / v, np.array([v1 + v13, v2, v13]) / v


def test_sobol_estimators_equal_salib_and_contain_the_ishigami_indices():
    from SALib.analyze import sobol as salib_sobol

    spec = MonteCarloSpec(tuple(Dispersion(k, "uniform", lower=-np.pi, upper=np.pi) for k in ("x1", "x2", "x3")),
                          samples=8192, seed=2, sensitivity=("sobol",))
    y = _ishigami(spec.values(np.arange(spec.n_cases)))
    runs = y.reshape(spec.samples, 5)  # A, B, AB_1, AB_2, AB_3
    ours = sobol_indices(runs, resamples=1000, seed=0)
    salib_layout = runs[:, [0, 2, 3, 4, 1]].ravel()  # SALib: A, AB_1 .. AB_d, B
    problem = {"num_vars": 3, "names": ["x1", "x2", "x3"], "bounds": [[-np.pi, np.pi]] * 3}
    theirs = salib_sobol.analyze(problem, salib_layout, calc_second_order=False, num_resamples=1000, seed=1)
    assert np.allclose(ours.first, theirs["S1"], rtol=0, atol=1e-12)
    assert np.allclose(ours.total, theirs["ST"], rtol=0, atol=1e-12)
    z = stats.norm.ppf(0.975)  # SALib's interval: z times the bootstrap standard deviation
    for mine, salib in ((ours.first_resampled, theirs["S1_conf"]), (ours.total_resampled, theirs["ST_conf"])):
        assert np.allclose(z * mine.std(axis=0, ddof=1), salib, rtol=0.15)
    first, total = _ishigami_indices()
    for which, truth in (("first", first), ("total", total)):
        low, high = ours.interval(which, 0.999).T
        assert np.all((low <= truth) & (truth <= high)), (which, low, truth, high)


def test_failed_runs_are_excluded_and_counted():
    runs = np.arange(40.0).reshape(8, 5) ** 1.5
    runs[2, 3] = np.nan
    runs[5, 0] = np.nan
    found = sobol_indices(runs, resamples=10, seed=0)
    assert found.samples == 6 and found.excluded == 2
    assert np.array_equal(found.first, sobol_indices(runs[[0, 1, 3, 4, 6, 7]], 10, 0).first)
    values = np.array([1.0, 2.0, np.nan, 4.0, np.nan])
    stats_ = output_statistics(values, np.array([False, False, True, False, False]))
    assert (stats_["count"], stats_["failed"], stats_["undefined"]) == (3, 1, 1)
    assert stats_["mean"] == pytest.approx(7.0 / 3.0) and stats_["p50"] == 2.0


TOY = """
[toy]
rate = 1.0
amplitude = 2.0

[montecarlo]
samples = 4096
seed = 7
sensitivity = ["local", "sobol"]
chunk_size = 1024
bootstrap = 2000
confidence = 0.999
[montecarlo.dispersions]
"toy.rate" = {distribution = "normal", std = 0.2}
"toy.amplitude" = {distribution = "uniform", lower = 1.5, upper = 2.5}
"""


def _closed_form(mu, sigma, lower, upper, t=1.0):
    """x = A g(r), g = exp(-r t), r ~ N(mu, sigma), A ~ U(lower, upper) independent: mean, variance, first and
    total Sobol indices of (r, A). E[g^n] = exp(-n mu t + n^2 sigma^2 t^2 / 2) (normal moment generating
    function); for a product of independent factors V_A = Var(A) E[g]^2, V_r = E[A]^2 Var(g),
    V_Ar = Var(A) Var(g), so S_T,A = Var(A) E[g^2] / V and S_T,r = E[A^2] Var(g) / V."""
    g1, g2 = np.exp(-mu * t + 0.5 * sigma**2 * t**2), np.exp(-2 * mu * t + 2 * sigma**2 * t**2)
    a1, var_a = 0.5 * (lower + upper), (upper - lower) ** 2 / 12
    a2, var_g = var_a + a1**2, g2 - g1**2
    variance = a2 * g2 - a1**2 * g1**2
    first = {"toy.rate": a1**2 * var_g / variance, "toy.amplitude": var_a * g1**2 / variance}
    total = {"toy.rate": a2 * var_g / variance, "toy.amplitude": var_a * g2 / variance}
    return a1 * g1, variance, first, total


def test_toy_campaign_matches_the_closed_form(tmp_path):
    path = tmp_path / "toy.toml"
    path.write_text(TOY)
    out = tmp_path / "mc"
    assert main(["montecarlo", str(path), "--out", str(out), "--quiet"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["runs"] == 4096 * 4 and summary["statistics_runs"] == 8192 and summary["failed_runs"] == 0
    mean, variance, first, total = _closed_form(1.0, 0.2, 1.5, 2.5)
    rows = np.genfromtxt(out / "results.csv", delimiter=",", names=True, dtype=None, encoding="utf-8")
    draws = rows["final_value"][np.isin(rows["matrix"], ["A", "B"])]
    m4 = np.mean((draws - draws.mean()) ** 4)
    s = summary["outputs"]["final_value"]
    assert abs(s["mean"] - mean) < 4 * s["std"] / np.sqrt(draws.size)
    assert abs(s["std"] ** 2 - variance) < 4 * np.sqrt((m4 - s["std"] ** 4) / draws.size)
    assert s["p0.135"] == pytest.approx(np.percentile(draws, 0.135), rel=1e-14)
    for key in ("toy.rate", "toy.amplitude"):
        for which, truth in (("first", first), ("total", total)):
            low, high = summary[f"sobol_{which}_ci"]["final_value"][key]
            assert low <= truth[key] <= high, (which, key, low, truth[key], high)
    # local: derivative at the means times the deviation, exact for this model (autodiff)
    local = summary["local_sensitivity"]["final_value"]
    assert local["toy.rate"] == pytest.approx(-2.0 * np.exp(-1.0) * 0.2, rel=1e-12)
    assert local["toy.amplitude"] == pytest.approx(np.exp(-1.0) / np.sqrt(12.0), rel=1e-12)
    for name in ("histograms.png", "tornado.png", "scatter.png", "report.html"):
        assert (out / name).is_file()
    provenance = html.unescape((out / "report.html").read_text().split("<h2>Provenance</h2>")[1])  # config as run
    assert "[montecarlo]" in provenance and '"toy.rate" = {' in provenance


def test_toy_failures_are_counted_per_sample_and_never_replaced(tmp_path, capsys):
    path = tmp_path / "toy.toml"
    path.write_text(TOY.replace("rate = 1.0", "rate = 9.8").replace("samples = 4096", "samples = 256")
                    .replace("chunk_size = 1024", "chunk_size = 128").replace("std = 0.2", "std = 0.5"))
    out = tmp_path / "mc"
    assert main(["montecarlo", str(path), "--out", str(out), "--quiet"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    rows = np.genfromtxt(out / "results.csv", delimiter=",", names=True, dtype=None, encoding="utf-8")
    failed = rows["toyrate"] > 10.0  # the toy fails above 10/s
    assert np.array_equal(rows["status"] == "solver_failure", failed) and np.all(np.isnan(rows["final_value"][failed]))
    draws = np.isin(rows["matrix"], ["A", "B"])
    s = summary["outputs"]["final_value"]
    assert s["failed"] == int((failed & draws).sum()) > 0 and s["count"] == int((~failed & draws).sum())
    assert s["mean"] == pytest.approx(rows["final_value"][draws & ~failed].mean(), rel=1e-14)
    assert summary["sobol_excluded_samples"]["final_value"] == len(np.unique(rows["sample"][failed]))
    assert summary["status_counts"]["solver_failure"] == int(failed.sum())
    from diffspace.design.montecarlo.stats import output_modes
    groups = output_modes(rows["final_value"][draws & ~failed])  # of the usable runs only
    assert s["modes"] == (groups if len(groups) > 1 else None)
    console = capsys.readouterr().out  # every run counted, not only the statistics runs
    assert all(f"note: {note}" in console for note in summary["distribution_notes"])
    assert (f"runs: {len(rows)}: ok {int((~failed).sum())}, warnings 0, failed {int(failed.sum())} "
            f"(solver_failure {int(failed.sum())}); the statistics use the {int(draws.sum())} A and B runs") in console
    outside = [v for kind in ("sobol_first", "sobol_total") for effects in summary[kind].values()
               for v in effects.values() if not 0 <= v <= 1]
    assert console.count("Sobol estimate(s) outside [0, 1]") == (len(outside) > 0)


def test_sobol_estimates_outside_the_unit_interval_are_explained():
    from diffspace.design.montecarlo.stats import sobol_notes

    summary = {"sobol_first": {"v": {"a": 1.13, "b": 0.2}}, "sobol_first_ci": {"v": {"a": [0.9, 1.4], "b": None}},
               "sobol_total": {"v": {"a": 0.98, "b": -0.01}}, "sobol_total_ci": {"v": {"a": None, "b": None}},
               "sobol_samples": {"v": 64}}
    assert sobol_notes(summary) == [
        "2 Sobol estimate(s) outside [0, 1] (farthest: the first-order index of v on a, 1.13, interval 0.9 to 1.4): "
        "sampling error at 64 base samples; raise montecarlo.samples for usable indices"]
    summary["sobol_first"]["v"]["a"] = 1.0
    summary["sobol_total"]["v"]["b"] = 0.0
    assert sobol_notes(summary) == []


@pytest.mark.parametrize("runs", [50, 200, 5000])
def test_unimodal_outputs_have_no_groups_and_a_mixture_has_its_own(runs):
    from diffspace.design.montecarlo.stats import mode_notes, output_modes

    rng = np.random.default_rng(runs)
    unimodal = {"normal": rng.normal(size=runs), "uniform": rng.uniform(size=runs),
                "exponential": rng.exponential(size=runs), "lognormal": rng.lognormal(0.0, 1.0, runs),
                "student_t3": rng.standard_t(3, runs)}
    for name, values in unimodal.items():
        assert len(output_modes(values)) <= 1, name
    low = rng.normal(0.21, 0.003, 3 * runs // 10)  # e.g. a stable velocity on either side of a symmetric attitude
    values = rng.permutation(np.concatenate([low, rng.normal(0.35, 0.005, runs - low.size)]))
    groups = output_modes(values)
    assert [round(g["share"], 2) for g in groups] == [0.3, 0.7]
    assert groups[0]["max"] == low.max() and groups[1]["min"] > low.max()
    stats_ = output_statistics(values, np.zeros(runs, bool))
    assert stats_["modes"] == groups
    assert mode_notes({"v_m_s": stats_}) == [
        f"v_m_s falls in 2 separated groups (30% of the runs from {low.min():.4g} to {low.max():.4g}; 70% of the "
        f"runs from {groups[1]['min']:.4g} to {groups[1]['max']:.4g}): its mean and 3-sigma band describe neither "
        "group; see the histogram and the outputs against the inputs"]
    assert mode_notes({"v": output_statistics(unimodal["normal"], np.zeros(runs, bool))}) == []


def test_rerun_resumes_and_other_commands_ignore_the_table(tmp_path):
    path = tmp_path / "toy.toml"
    path.write_text(TOY.replace("samples = 4096", "samples = 64").replace("chunk_size = 1024", "chunk_size = 32"))
    out = tmp_path / "mc"
    assert main(["montecarlo", str(path), "--out", str(out), "--quiet"]) == 0
    first = (out / "results.csv").read_text()
    assert main(["montecarlo", str(path), "--out", str(out), "--quiet"]) == 0  # the same campaign: from the store
    assert json.loads((out / "summary.json").read_text())["computed_cases"] == 0
    assert (out / "results.csv").read_text() == first
    assert main(["run", str(path), "--out", str(tmp_path / "run")]) == 0


@pytest.mark.parametrize("table, message", [
    ('"toy.rate" = {distribution = "gamma", std = 0.1}', "distribution: one of normal, uniform, lognormal"),
    ('"toy.rate" = {distribution = "normal"}', "needs std"),
    ('"toy.rate" = {distribution = "uniform", lower = 1.0}', "needs lower and upper"),
    ('"toy.rate" = {distribution = "uniform", lower = 2.0, upper = 1.0}', "empty range"),
    ('"toy.rate" = {distribution = "lognormal", std = 0.1, lower = 0.5}', "not a parameter of a lognormal"),
    ('"toy.rate" = {distribution = "normal", std = -0.1}', "std: must be positive"),
    ('"toy.rate" = {distribution = "normal", std = 0.1, lower = 30.0, upper = 31.0}', "keeps no probability"),
    ('"toy.horizon_s" = {distribution = "normal", std = 0.1}', "not a continuous design variable"),
])
def test_bad_dispersions_exit_2_with_one_line(tmp_path, capsys, table, message):
    path = tmp_path / "toy.toml"
    path.write_text(TOY[:TOY.index("[montecarlo.dispersions]")] + "[montecarlo.dispersions]\n" + table + "\n")
    assert main(["montecarlo", str(path), "--out", str(tmp_path / "x"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


@pytest.mark.parametrize("option, message", [
    ('montecarlo.sensitivity=["morris"]', "montecarlo.sensitivity: unknown 'morris'"),
    ('montecarlo.outputs=["nothing"]', "montecarlo.outputs: unknown metric(s) nothing"),
    ("montecarlo.samples=0", "montecarlo.samples"),
    ("montecarlo.confidence=1.5", "montecarlo.confidence"),
    ("montecarlo.max_cases=100", "exceed montecarlo.max_cases"),
    ("montecarlo.colour=1", "montecarlo.colour: unknown key"),
])
def test_bad_campaign_options_exit_2_with_one_line(tmp_path, capsys, option, message):
    path = tmp_path / "toy.toml"
    path.write_text(TOY)
    assert main(["montecarlo", str(path), "--out", str(tmp_path / "x"), "--quiet", "--set", option]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
