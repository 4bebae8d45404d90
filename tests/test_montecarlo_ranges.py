"""A Monte-Carlo never simulates a value its config key does not allow: a dispersion that can draw one is refused
when the config is read, with the share of it that lies outside (an untruncated normal approach speed drew
-0.00124 m/s and was reported as a run that never touched)."""

import math
from pathlib import Path

import pytest
from scipy import stats

from diffspace import design
from diffspace.app.commands import load
from diffspace.core.status import ConfigError
from diffspace.design.montecarlo.distributions import Dispersion

CONFIGS = Path(__file__).resolve().parent.parent / "configs"
SPEED = 'montecarlo.dispersions."capture.approach_speed_m_s"'


def _prepare(*overrides: str):
    loaded = load(CONFIGS / "capture_outcomes.toml", list(overrides))
    return design.prepare_montecarlo(design.parse_montecarlo(loaded.design["montecarlo"]), loaded.scenario,
                                     loaded.builder())


def test_mass_outside_matches_scipy():
    normal = Dispersion("k", "normal", 0.05, 0.02, 0.01, math.inf)
    kept = stats.truncnorm((0.01 - 0.05) / 0.02, math.inf, loc=0.05, scale=0.02)
    assert normal.mass_outside(0.03, 0.08) == pytest.approx(kept.cdf(0.03) + kept.sf(0.08), rel=1e-12)
    lognormal = Dispersion("k", "lognormal", 2.0, 0.5)
    sigma = math.sqrt(math.log1p(0.25 / 4.0))
    reference = stats.lognorm(sigma, scale=2.0 * math.exp(-0.5 * sigma**2))
    assert lognormal.mass_outside(1.5, 3.0) == pytest.approx(reference.cdf(1.5) + reference.sf(3.0), rel=1e-12)
    assert Dispersion("k", "uniform", None, None, -1.0, 1.0).mass_outside(0.0, 0.5) == pytest.approx(0.75)


def test_an_untruncated_normal_speed_is_refused_with_its_share_outside():
    with pytest.raises(ConfigError) as err:
        _prepare(f'{SPEED}={{distribution = "normal", mean = 0.02, std = 0.02}}')
    message = str(err.value)
    assert "\n" not in message and message.startswith("montecarlo.dispersions.capture.approach_speed_m_s: 0.159 ")
    assert "above 0" in message and "truncate" in message


def test_truncated_and_negligible_tails_are_accepted():
    _prepare(f'{SPEED}={{distribution = "normal", mean = 0.02, std = 0.02, lower = 0.001}}')
    _prepare(f'{SPEED}={{distribution = "normal", mean = 0.02, std = 0.001}}')  # 20 sigma: never drawn
    for name in ("capture_montecarlo.toml", "ejection_montecarlo.toml", "capture_outcomes.toml"):
        loaded = load(CONFIGS / name, [])
        design.prepare_montecarlo(design.parse_montecarlo(loaded.design["montecarlo"]), loaded.scenario,
                                  loaded.builder())
