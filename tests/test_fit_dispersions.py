"""Dispersions from a fit (``[montecarlo] from_fit``): the correlated normal as sampled (mean, covariance,
joint normality, independence of chunking), the covariance ``diffspace fit`` writes and its coverage over refits
on independent noise, the fit -> Monte-Carlo chain through the command line, and one message per refusal."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from diffspace import design, scenarios
from diffspace.app.cli import main
from diffspace.app.commands import load
from diffspace.design.montecarlo.distributions import CorrelatedNormal, Dispersion
from diffspace.design.montecarlo.spec import BLOCK, MonteCarloSpec
from diffspace.scenarios import FitData

from .toy_scenario import PROBED_ENTRY, ProbedToy


@pytest.fixture(autouse=True)
def registered(monkeypatch):
    monkeypatch.setitem(scenarios.REGISTRY, "probed_toy", PROBED_ENTRY)


COVARIANCE = np.array([[4.0, 1.5, 0.12], [1.5, 1.0, 0.18], [0.12, 0.18, 0.09]])  # correlations 0.75, 0.2, 0.6
FITTED = CorrelatedNormal(("a", "b", "c"), (10.0, -2.0, 0.5), tuple(map(tuple, COVARIANCE.tolist())), "fit")
ONE_SIGMA = stats.norm.cdf(1.0) - stats.norm.cdf(-1.0)


def _whitened(samples: np.ndarray, covariance: np.ndarray) -> np.ndarray:
    """The sample covariance of ``samples`` in the coordinates where ``covariance`` is the identity; with ``n``
    draws from it, a Wishart matrix / (n - 1): diagonal 1 +- sqrt(2 / (n - 1)), off-diagonal 0 +- sqrt(1 / (n - 1))."""
    factor = np.linalg.cholesky(covariance)
    return np.cov(np.linalg.solve(factor, (samples - samples.mean(axis=0)).T))


def _within_sampling_error(whitened: np.ndarray, n: int, sigmas: float = 4.0) -> bool:
    d = len(whitened)
    tolerance = sigmas * np.sqrt(np.where(np.eye(d, dtype=bool), 2.0, 1.0) / (n - 1))
    return bool(np.all(np.abs(whitened - np.eye(d)) < tolerance))


def test_the_correlated_group_reproduces_its_mean_and_covariance():
    """20,000 draws beside a hand-written key: mean and covariance within sampling error, jointly normal (the
    Mahalanobis distances follow chi^2(3)), independent of the hand-written key; moments() as given."""
    spec = MonteCarloSpec((Dispersion("k", "uniform", lower=0.0, upper=1.0),), samples=20_000, seed=3,
                          sensitivity=(), correlated=FITTED)
    assert spec.input_keys == ("k", "a", "b", "c")
    x = spec.values(np.arange(spec.n_cases))
    fitted, n = x[:, 1:], len(x)
    assert np.all(np.abs(fitted.mean(axis=0) - FITTED.mean) < 4.0 * np.sqrt(np.diag(COVARIANCE) / n))
    assert _within_sampling_error(_whitened(fitted, COVARIANCE), n)
    assert not _within_sampling_error(_whitened(fitted, np.diag(np.diag(COVARIANCE))), n)  # the correlations count
    distances = np.sum(np.linalg.solve(np.linalg.cholesky(COVARIANCE), (fitted - FITTED.mean).T) ** 2, axis=0)
    assert stats.kstest(distances, stats.chi2(3).cdf).pvalue > 1e-3
    assert np.all(np.abs(np.corrcoef(x.T)[0, 1:]) < 4.0 / np.sqrt(n))
    assert stats.kstest(x[:, 0], stats.uniform().cdf).pvalue > 1e-3
    moments = spec.moments()
    assert moments["k"] == pytest.approx((0.5, 1.0 / np.sqrt(12.0)), rel=1e-14)
    for j, key in enumerate(FITTED.keys):
        assert moments[key] == pytest.approx((FITTED.mean[j], np.sqrt(COVARIANCE[j, j])), rel=1e-14)


def test_a_cases_fitted_values_depend_only_on_the_seed_and_its_index():
    def spec(chunk_size: int, seed: int = 5) -> MonteCarloSpec:
        return MonteCarloSpec((Dispersion("k", "normal", 1.0, 0.1),), samples=3000, seed=seed, sensitivity=(),
                              chunk_size=chunk_size, correlated=FITTED)

    whole = spec(64).values(np.arange(3000))
    other = spec(7)
    assert [list(c.values()) for chunk in range(other.n_chunks) for c in other.cases(chunk)] == whole.tolist()
    around = np.arange(2 * BLOCK - 5, 2 * BLOCK + 5)[::-1]  # across a block boundary, in another order
    assert np.array_equal(other.values(around), whole[around])
    assert np.array_equal(other.values(around[3:4]), whole[around[3:4]])  # one case alone
    assert not np.array_equal(spec(64, seed=6).values(around), whole[around])


def test_saltelli_runs_keep_their_layout_with_an_independent_fitted_group():
    """A diagonal fitted covariance is independent inputs: AB_i is A with input i from B, fitted ones included."""
    diagonal = CorrelatedNormal(("a", "b"), (1.0, 2.0), ((0.25, 0.0), (0.0, 4.0)), "fit")
    assert diagonal.independent and not FITTED.independent
    spec = MonteCarloSpec((Dispersion("k", "normal", 0.0, 1.0),), samples=50, seed=1, sensitivity=("sobol",),
                          correlated=diagonal)
    values = spec.values(np.arange(spec.n_cases)).reshape(50, 5, 3)
    a, b = values[:, 0], values[:, 1]
    for i in range(3):
        expected = a.copy()
        expected[:, i] = b[:, i]
        assert np.array_equal(values[:, 2 + i], expected)


# ------------------------------------------------------------------ coverage of the fitted covariance

TRUTH = {"toy.rate": 1.3, "toy.amplitude": 2.0}
PROBES = np.linspace(0.1, 2.0, 8)  # s
NOISE = 0.02  # the measurements' stated (absolute) standard deviation


def _probed_toy(**values) -> ProbedToy:
    return ProbedToy.from_config({"toy": {"rate": 1.0, "amplitude": 1.5, "horizon_s": 1.0, "probe_s": 0.5, **values}})


def _refits(count: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``count`` fits (``design.run_fit``) of the probed toy's rate and amplitude, each to the truth's values plus
    an independent noise draw; their estimates and reported covariances."""
    scenario = _probed_toy()
    params = [scenario.parameter(k) for k in TRUTH]
    clean = TRUTH["toy.amplitude"] * np.exp(-TRUTH["toy.rate"] * PROBES)
    rng = np.random.default_rng(seed)
    estimates, covariances = [], []
    for _ in range(count):
        data = FitData({"toy.probe_s": PROBES}, {"probed_value": clean + NOISE * rng.normal(size=PROBES.size)},
                       {"probed_value": np.full(PROBES.size, NOISE)}, absolute_sigma=True)
        result, _ = design.run_fit(scenario, data, params, {"toy.rate": 1.0, "toy.amplitude": 1.5},
                                   {"initial_grid": False, "max_iter": 50}, progress=False)
        assert result.converged and not result.at_bound and result.sigma2 == 1.0  # the stated noise, not rescaled
        estimates.append([result.params[k] for k in TRUTH])
        covariances.append(result.covariance)
    return np.array(estimates), np.array(covariances)


def _check_coverage(count: int, seed: int) -> None:
    """Each parameter's +-1 standard error interval covers the truth in 68.3 % of the refits (binomial, 3.5
    sigma); the Mahalanobis distances of the errors average 2 (chi^2(2): sd 2 / sqrt(count)); the refits' mean
    is the truth and their sample covariance the reported one, within sampling error."""
    estimates, covariances = _refits(count, seed)
    errors = estimates - np.array(list(TRUTH.values()))
    std = np.sqrt(np.diagonal(covariances, axis1=1, axis2=2))
    covered = np.mean(np.abs(errors) <= std, axis=0)
    assert np.all(np.abs(covered - ONE_SIGMA) < 3.5 * np.sqrt(ONE_SIGMA * (1 - ONE_SIGMA) / count)), covered
    distances = np.einsum("ni,nij,nj->n", errors, np.linalg.inv(covariances), errors)
    assert abs(distances.mean() - 2.0) < 3.5 * 2.0 / np.sqrt(count), distances.mean()
    reported = covariances.mean(axis=0)
    assert abs(reported[0, 1]) / np.sqrt(reported[0, 0] * reported[1, 1]) > 0.5  # a correlated pair
    assert np.all(np.abs(errors.mean(axis=0)) < 4.0 * np.sqrt(np.diag(reported) / count))
    assert _within_sampling_error(_whitened(estimates, reported), count), _whitened(estimates, reported)


@pytest.mark.timeout(300)
def test_fitted_covariance_covers_refits_on_independent_noise():
    _check_coverage(60, seed=1)


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_fitted_covariance_covers_refits_on_independent_noise_many():
    _check_coverage(400, seed=2)


# ------------------------------------------------------------------ fit -> Monte-Carlo through the command line

PROBED = """
scenario = "probed_toy"

[toy]
rate = 1.0
amplitude = 1.5
horizon_s = 1.0

[fit]
parameters = ["toy.rate", "toy.amplitude"]

[montecarlo]
samples = 4096
seed = 4
chunk_size = 1024
outputs = ["final_value"]
from_fit = "fit"
"""


def _results_inputs(path: Path, keys) -> np.ndarray:
    with open(path, newline="") as f:
        return np.array([[float(row[k]) for k in keys] for row in csv.DictReader(f)])


def _check_chain(fit_dir: Path, mc_dir: Path) -> tuple[dict, dict, np.ndarray]:
    """What any fit -> Monte-Carlo chain guarantees: the fit's summary.json and fit_report.json give the same
    covariance (std_errors on its diagonal, the correlation off it); the campaign records the fit's directory,
    mean and covariance, and draws inputs with the fit's correlation (within sampling error)."""
    fit = json.loads((fit_dir / "summary.json").read_text())
    report = json.loads((fit_dir / "fit_report.json").read_text())
    keys, covariance = list(fit["fitted"]), np.array(fit["covariance"])
    assert keys == list(report["parameters"]) and np.array_equal(covariance, np.array(report["covariance"]))
    std = np.array([fit["std_errors"][k] for k in keys])
    assert np.allclose(np.sqrt(np.diag(covariance)), std, rtol=1e-14, atol=0)
    assert np.allclose(covariance / np.outer(std, std), np.array(report["correlation"]), rtol=0, atol=1e-14)
    mc = json.loads((mc_dir / "summary.json").read_text())
    assert mc["from_fit"]["directory"] == str(fit_dir) and mc["from_fit"]["keys"] == keys
    assert mc["from_fit"]["mean"] == [fit["fitted"][k] for k in keys]
    assert np.allclose(mc["from_fit"]["covariance"], covariance, rtol=1e-14, atol=0)
    for key, s in zip(keys, std):
        entry = mc["dispersions"][key]
        assert entry["from_fit"] == str(fit_dir) and entry["distribution"] == "normal"
        assert entry["sampled_mean"] == fit["fitted"][key] and entry["sampled_std"] == pytest.approx(s, rel=1e-14)
    inputs = _results_inputs(mc_dir / "results.csv", keys)
    rho, sampled = covariance[0, 1] / (std[0] * std[1]), np.corrcoef(inputs.T)[0, 1]
    assert abs(sampled - rho) < 4.0 * (1.0 - rho**2) / np.sqrt(len(inputs)), (sampled, rho)
    assert _within_sampling_error(_whitened(inputs, covariance), len(inputs))
    return fit, mc, inputs


def test_fit_then_montecarlo_from_fit(tmp_path, monkeypatch):
    """``diffspace fit`` on synthetic data (known rate and amplitude, absolute noise), then a campaign with
    ``from_fit = "fit"`` (relative to the config's folder, run from elsewhere): the chain's guarantees, the
    nominal run at the fitted values, and the output's spread that of the correlated inputs: its deviation
    matches the linearised sqrt(g^T C g), not the one that ignores the correlation."""
    rng = np.random.default_rng(7)
    values = TRUTH["toy.amplitude"] * np.exp(-TRUTH["toy.rate"] * PROBES) + NOISE * rng.normal(size=PROBES.size)
    data = tmp_path / "probes.csv"
    data.write_text("probe_s,probed_value,sigma\n" + "".join(f"{t!r},{y!r},{NOISE!r}\n" for t, y in
                                                             zip(PROBES.tolist(), values.tolist())))
    config = tmp_path / "probed.toml"
    config.write_text(PROBED)
    assert main(["fit", str(config), "--data", str(data), "--out", str(tmp_path / "fit"), "--quiet"]) == 0
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert main(["montecarlo", str(config), "--out", str(tmp_path / "mc"), "--quiet"]) == 0
    fit, mc, _ = _check_chain(tmp_path / "fit", tmp_path / "mc")
    rate, amplitude = fit["fitted"]["toy.rate"], fit["fitted"]["toy.amplitude"]
    assert mc["nominal"]["inputs"] == fit["fitted"]
    assert mc["local_derivative"]["final_value"]["toy.rate"] == pytest.approx(-amplitude * np.exp(-rate), rel=1e-12)
    gradient = np.array([-amplitude * np.exp(-rate), np.exp(-rate)])  # d(A exp(-r))/d(r, A) at the fitted values
    covariance = np.array(fit["covariance"])
    linear, uncorrelated = np.sqrt(gradient @ covariance @ gradient), np.sqrt(gradient**2 @ np.diag(covariance))
    assert covariance[0, 1] / np.sqrt(covariance[0, 0] * covariance[1, 1]) > 0.5
    assert mc["outputs"]["final_value"]["std"] == pytest.approx(linear, rel=0.06)
    assert uncorrelated > 1.3 * linear


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_impact_fit_then_montecarlo_from_fit(tmp_path):
    """The same chain on the air-table impact: contact stiffness and restitution fitted to synthetic rebound
    speeds and peak forces (k = 2e7, c = 0.7, 0.3 % noise; relative residuals), then 256 impacts drawn from the
    fit: every one separates, and the campaign's inputs follow the fit's mean and covariance."""
    import jax
    import jax.numpy as jnp

    airtable = Path(__file__).resolve().parents[1] / "configs" / "impact_airtable.toml"
    scenario = scenarios.load_scenario(airtable)
    speeds = np.array([0.06, 0.08, 0.1, 0.13])
    truth = {"contact.stiffness_N_m_n": 2e7, "contact.restitution_c": 0.7}
    metrics = jax.jit(jax.vmap(lambda v: scenario.metrics(scenario.with_design(
        scenario.params, {"impact.approach_speed_m_s": v, **truth}))))(jnp.asarray(speeds))
    rng = np.random.default_rng(3)
    v_out, force = (np.asarray(metrics[k]) * (1 + 0.003 * rng.normal(size=speeds.size))
                    for k in ("detached_velocity_m_s", "peak_force_N"))
    data = tmp_path / "impacts.csv"
    data.write_text("v_in_mm_s,v_out_measured_mm_s,F_peak_measured_N\n" + "".join(
        f"{1e3 * a!r},{1e3 * b!r},{c!r}\n" for a, b, c in zip(speeds.tolist(), v_out.tolist(), force.tolist())))
    config = tmp_path / "impact.toml"
    config.write_text(airtable.read_text() + '\n[montecarlo]\nsamples = 256\nseed = 1\nchunk_size = 64\n'
                      'outputs = ["detached_velocity_m_s", "peak_force_N"]\nfrom_fit = "fit"\n')
    assert main(["fit", str(config), "--data", str(data), "--out", str(tmp_path / "fit"), "--quiet"]) == 0
    assert main(["montecarlo", str(config), "--out", str(tmp_path / "mc"), "--quiet"]) == 0
    fit, mc, inputs = _check_chain(tmp_path / "fit", tmp_path / "mc")
    assert fit["converged"] and mc["outcome_probability"]["separated"] == 1.0 and mc["failed_runs"] == 0
    std = np.sqrt(np.diag(np.array(fit["covariance"])))
    assert np.all(np.abs(inputs.mean(axis=0) - list(fit["fitted"].values())) < 4.0 * std / np.sqrt(len(inputs)))


# ------------------------------------------------------------------ refusals, one message each

CAMPAIGN = """
scenario = "probed_toy"

[toy]
rate = 1.0
amplitude = 1.5

[montecarlo]
samples = 16
chunk_size = 16
from_fit = "fit"
"""


def _fit_dir(directory: Path, fitted: dict, covariance, **entries) -> None:
    """A results directory as ``diffspace fit`` leaves it (its summary.json), with the given numbers."""
    directory.mkdir()
    summary = {"fitted": fitted, "std_errors": {k: None for k in fitted}, "covariance": covariance,
               "converged": True, "at_bound": [], "message": "step below xtol", **entries}
    (directory / "summary.json").write_text(json.dumps({k: v for k, v in summary.items() if v is not ...}))


GOOD = ({"toy.rate": 1.3, "toy.amplitude": 2.0}, [[4e-4, 3e-4], [3e-4, 4e-4]])


@pytest.mark.parametrize("fit, extra, message", [
    (None, [], "montecarlo.from_fit: {dir}/summary.json not found (expected the results directory of diffspace fit)"),
    ({"summary": {"runs": 4}}, [], "montecarlo.from_fit: {dir}/summary.json is not the summary of diffspace fit: "
                                   "no fitted, covariance, converged, at_bound"),
    ({"covariance": ...}, [], "no covariance (written before fits recorded their covariance: rerun it)"),
    ({"converged": False, "message": "maximum iterations reached"}, [],
     "montecarlo.from_fit: the fit in {dir} did not converge (maximum iterations reached)"),
    ({"converged": False, "at_bound": ["toy.rate"]}, [],
     "montecarlo.from_fit: the fit in {dir} ended at a bound of its range (toy.rate)"),
    ({"covariance": [[4e-4, None], [None, 4e-4]]}, [],
     "montecarlo.from_fit: the fit in {dir} gives no finite values with a finite covariance"),
    ({"covariance": [[4e-4, 5e-4], [5e-4, 4e-4]]}, [],
     "montecarlo.from_fit: the covariance of the fit in {dir} is not positive definite (eigenvalues -0.0001, 0.0009)"),
    ({}, ['montecarlo.dispersions."toy.rate"={distribution = "normal", std = 0.1}'],
     "montecarlo.dispersions.toy.rate: also dispersed by montecarlo.from_fit ({dir}); give each key once"),
    ({}, ['montecarlo.sensitivity=["sobol"]'],
     "montecarlo.sensitivity: Sobol indices (Saltelli's estimators) assume independent inputs, and "
     "montecarlo.from_fit gives correlated ones (toy.rate, toy.amplitude)"),
    ({"fitted": {"toy.probe_s": 0.1}, "covariance": [[0.0025]]}, [],
     "montecarlo.from_fit: toy.probe_s: 0.0228 of this normal distribution lies outside the values the key "
     "allows (above 0); a fitted normal is not truncated"),
    ({"fitted": {"toy.horizon_s": 1.0}, "covariance": [[0.01]]}, [],
     "montecarlo.from_fit: toy.horizon_s: not a continuous design variable of 'toy'"),
    ({}, ["montecarlo.from_fit=3"], "montecarlo.from_fit: expected the results directory of diffspace fit"),
], ids=["missing", "not_a_fit", "no_covariance", "not_converged", "at_bound", "not_finite", "not_positive_definite",
        "given_twice", "sobol_correlated", "outside_allowed", "not_a_design_key", "not_a_path"])
def test_refusals_name_the_key_in_one_line(tmp_path, capsys, fit, extra, message):
    config = tmp_path / "campaign.toml"
    config.write_text(CAMPAIGN)
    if fit is not None and "summary" in fit:
        (tmp_path / "fit").mkdir()
        (tmp_path / "fit" / "summary.json").write_text(json.dumps(fit["summary"]))
    elif fit is not None:
        entries = {"fitted": GOOD[0], "covariance": GOOD[1], **fit}
        _fit_dir(tmp_path / "fit", **entries)
    args = ["montecarlo", str(config), "--out", str(tmp_path / "mc"), "--quiet"]
    assert main(args + [a for option in extra for a in ("--set", option)]) == 2
    err = capsys.readouterr().err
    assert message.format(dir=tmp_path / "fit") in err, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err and not (tmp_path / "mc").exists()


def _prepared(config: Path, *overrides: str) -> MonteCarloSpec:
    loaded = load(config, list(overrides))
    return design.prepare_montecarlo(design.parse_montecarlo(loaded.design["montecarlo"]), loaded.scenario,
                                     loaded.builder())


def test_accepted_from_fit_tables(tmp_path, monkeypatch):
    """from_fit alone (its directory relative to the config's folder, whatever the current one; its summary.json
    among the files hashed with the config), beside hand-written keys (drawn first), and with Sobol indices when
    the fitted keys are uncorrelated."""
    config = tmp_path / "campaign.toml"
    config.write_text(CAMPAIGN)
    _fit_dir(tmp_path / "fit", *GOOD)
    (tmp_path / "other").mkdir()
    _fit_dir(tmp_path / "other" / "single", {"toy.rate": 1.3}, [[4e-4]])
    monkeypatch.chdir(tmp_path / "other")
    loaded = load(config, [])
    assert loaded.design["montecarlo"]["from_fit"] == str(tmp_path / "fit")
    assert tmp_path / "fit" / "summary.json" in loaded.files
    spec = _prepared(config)
    assert spec.input_keys == ("toy.rate", "toy.amplitude") and spec.correlated.source == str(tmp_path / "fit")
    assert spec.moments()["toy.amplitude"] == pytest.approx((2.0, 0.02), rel=1e-14)
    spec = _prepared(config, 'montecarlo.dispersions."toy.probe_s"={distribution = "normal", std = 0.01}')
    assert spec.input_keys == ("toy.probe_s", "toy.rate", "toy.amplitude") and spec.dispersions[0].mean == 0.5
    spec = _prepared(config, 'montecarlo.from_fit="other/single"', 'montecarlo.sensitivity=["sobol"]',
                     'montecarlo.dispersions."toy.amplitude"={distribution = "uniform", lower = 1.0, upper = 3.0}')
    assert spec.input_keys == ("toy.amplitude", "toy.rate") and spec.runs_per_sample == 4
