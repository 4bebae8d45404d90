"""``--set`` keys are TOML keys: a quoted segment (a design key with dots, as dispersions, sweep axes and bounds
are named) stays one segment, an ``=`` inside it does not end the key, and a malformed key is one clear line."""

from pathlib import Path

import pytest

from diffspace.app.commands import load
from diffspace.core.status import ConfigError
from diffspace.io.config import apply_overrides, key_segments

CONFIGS = Path(__file__).resolve().parent.parent / "configs"


def test_quoted_segments_stay_whole():
    assert key_segments('montecarlo.dispersions."capture.approach_speed_m_s".std') == [
        "montecarlo", "dispersions", "capture.approach_speed_m_s", "std"]
    assert key_segments("a . 'b.c'") == ["a", "b.c"]
    assert key_segments("ejection.attitude[3]") == ["ejection", "attitude[3]"]  # left to the schema to refuse
    cfg = apply_overrides({}, ["x.'y=z'.w=1", 'a.b="s=t"'])
    assert cfg == {"x": {"y=z": {"w": 1}}, "a": {"b": "s=t"}}


def test_a_dispersion_of_a_dotted_design_key_is_overridden():
    key = '"capture.approach_speed_m_s"'
    loaded = load(CONFIGS / "capture_outcomes.toml", [f"montecarlo.dispersions.{key}.upper=0.03",
                                                       "montecarlo.samples=8"])
    dispersion = loaded.design["montecarlo"]["dispersions"]["capture.approach_speed_m_s"]
    assert dispersion == {"distribution": "uniform", "lower": 0.005, "upper": 0.03}
    assert loaded.design["montecarlo"]["samples"] == 8


@pytest.mark.parametrize("item", ['a."b.c=1', "a.b", 'a."unterminated.b=1'])
def test_malformed_overrides_are_one_line(item):
    with pytest.raises(ConfigError) as err:
        apply_overrides({}, [item])
    assert "\n" not in str(err.value) and str(err.value).startswith("--set ")
