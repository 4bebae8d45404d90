"""Console progress: the remaining time is measured after the compile (never from it), the compile stage says
whether it compiles or runs a cached program (as JAX reports it), the ticking thread stops cleanly (also on an
error), ``--quiet`` prints nothing, and the commands show their stages."""

from __future__ import annotations

import io
import threading

import jax
import jax.numpy as jnp
import pytest
from jax import monitoring

from diffspace import scenarios
from diffspace.app.cli import main
from diffspace.design import progress
from diffspace.design.progress import Bar, Spinner, _CompileLog

from .toy_scenario import ENTRY


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def progress_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "diffspace-progress"]


def test_remaining_time_is_measured_after_the_compile():
    """76 cases in chunks of 8: the first chunk takes 60 s (compile), the next ones 2 s each. After three chunks
    7 chunks remain (52 cases, the last one partial): 7 x 2 s = 14 s, whatever the compile took."""
    clock = Clock()
    bar = Bar("sweep", 76, "case", stream=io.StringIO(), clock=clock, first="compiling", batch="chunk")
    assert bar.remaining_s() is None and bar.status().startswith("compiling")
    clock.now = 60.0
    bar.update(8)
    assert bar.remaining_s() is None and "first chunk took 60.0 s" in bar.status()  # no guess from the compile
    for now in (62.0, 64.0):
        clock.now = now
        bar.update(8)
    assert bar.seconds_per_item() == pytest.approx(0.25)
    assert bar.remaining_s() == pytest.approx(14.0)
    assert "about 0:14 left" in bar.status()
    bar.close()


def test_resumed_bar_counts_from_the_stored_cases():
    clock = Clock()
    bar = Bar("sweep", 100, "case", stream=io.StringIO(), clock=clock, initial=40, first="compiling")
    clock.now = 30.0
    bar.update(20)
    clock.now = 35.0
    bar.update(20)
    assert bar.done == 80 and bar.remaining_s() == pytest.approx(5.0)  # 20 left at 0.25 s/case
    bar.close()


def test_bar_without_a_total_reports_the_measured_rate():
    """Among several processes a bar counts this process's cases only: no total, no remaining time."""
    clock = Clock()
    bar = Bar("sweep (process 2/3)", None, "case", stream=io.StringIO(), clock=clock, first="compiling",
              batch="chunk")
    for now in (40.0, 44.0, 48.0):
        clock.now = now
        bar.update(16)
    assert bar.remaining_s() is None and bar.status() == "0.25 s/case after the compile"
    bar.close()


def test_disabled_progress_writes_nothing_and_starts_no_thread():
    stream = Terminal()
    with Spinner("quiet", enabled=False, stream=stream) as spin:
        spin.compile_stage("a program")
        assert not progress_threads()
    bar = Bar("quiet", 10, "case", enabled=False, stream=stream)
    bar.update(5)
    bar.close()
    assert stream.getvalue() == ""


def test_spinner_ticks_on_a_terminal_and_stops_cleanly_even_on_an_error():
    stream = Terminal()
    with pytest.raises(RuntimeError, match="boom"), Spinner("demo", stream=stream) as spin:
        spin.compile_stage("a program")
        assert len(progress_threads()) == 1
        threading.Event().wait(0.6)  # a few ticks
        raise RuntimeError("boom")
    assert not progress_threads()
    text = stream.getvalue()
    assert text.count("\r") >= 2 and "demo: compiling a program" in text
    assert text.endswith("\n") and "demo: stopped in" in text.splitlines()[-1]


def test_compile_stage_follows_jax_compile_and_cache_events(monkeypatch):
    """The events JAX records (a backend compile's duration, a persistent-cache hit) turn the stage into
    'running', and the closing line reports the compile's seconds; not on a terminal, the compile line waits
    DEFER_S for them."""
    monkeypatch.setattr(progress, "DEFER_S", 0.5)
    stream = io.StringIO()
    with Spinner("demo", stream=stream) as spin:
        spin.compile_stage("a program", running="iterating")
        monitoring.record_event_duration_secs(_CompileLog.BACKEND_COMPILE, 2.5)
    lines = stream.getvalue().splitlines()
    assert lines[0] == "demo: iterating (compiled in 2.5 s) ..."  # reported at once: no compile line first
    assert lines[-1].startswith("demo: done in") and "(2.5 s of it compiling)" in lines[-1]
    stream = io.StringIO()
    with Spinner("demo", stream=stream) as spin:
        spin.compile_stage("a program")
        threading.Event().wait(1.0)  # no report within DEFER_S: the compile line is printed
        monitoring.record_event(_CompileLog.CACHE_HIT)
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("demo: compiling a program (") and lines[0].endswith(") ...")
    assert lines[1] == "demo: running a program (compiled program loaded from the cache) ..."
    assert "compiled program from the cache" in lines[-1]


def test_the_event_names_are_the_ones_jax_records():
    """A real compile reports its backend duration under the name the spinner listens to."""
    seen = []

    def listener(event, seconds, **_):
        seen.append(event)

    monitoring.register_event_duration_secs_listener(listener)
    try:
        jax.jit(lambda x: jnp.cos(x) * 3.0 + x)(jnp.arange(7.0)).block_until_ready()
    finally:
        monitoring.unregister_event_duration_listener(listener)
    assert _CompileLog.BACKEND_COMPILE in seen


@pytest.fixture
def toy(monkeypatch, tmp_path):
    monkeypatch.setitem(scenarios.REGISTRY, "toy", ENTRY)
    path = tmp_path / "toy.toml"
    path.write_text("[toy]\nrate = 1.0\namplitude = 2.0\n[sweep]\nchunk_size = 4\n[sweep.axes]\n"
                    '"toy.rate" = {start = 0.0, stop = 3.0, num = 10}\n')
    return path


@pytest.mark.parametrize("command", ["run", "sweep"])
def test_commands_show_progress_and_quiet_hides_it(toy, tmp_path, capsys, command):
    assert main([command, str(toy), "--out", str(tmp_path / "a"), "--no-cache"]) == 0
    err = capsys.readouterr().err
    if command == "run":
        assert "toy: writing the results, plots and 3-D scene" in err and "toy: done in" in err
    else:
        assert "10/10" in err and "first chunk" in err and "s/case" in err
    assert main([command, str(toy), "--out", str(tmp_path / "b"), "--no-cache", "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "compiling" not in err and "done in" not in err and "%" not in err
    assert not progress_threads()
