"""Console progress of the commands (on stderr; nothing at all when disabled, i.e. ``--quiet``).

* :class:`Spinner`: one stage after another (``stage(text)``) with the seconds spent, ticking from a
  background thread while the main thread traces and compiles. The compile stage says whether it compiles
  (``first run of this scenario; later runs start warm``), or runs a program loaded from the persistent
  compilation cache: JAX reports every persistent-cache hit and the duration of every backend compile
  (:mod:`jax.monitoring`), which the spinner listens to. On leaving it prints one line with the measured times.
* :class:`Bar`: counts items (sweep cases, optimiser steps, fit iterations) as they finish. The first item
  carries the compile, so until it is done the bar says so instead of guessing; the remaining time is then
  estimated from the items finished *after* the first one (time per item measured after the compile), never
  from the compile.

On a terminal both redraw one line a few times a second; elsewhere (logs, CI) they print a line per stage or
per update only (a compile stage's line only when JAX has not reported the compile or a cache hit within
:data:`DEFER_S`, so a warm start does not claim to compile).
"""

from __future__ import annotations

import math
import sys
import threading
import time
from collections.abc import Callable
from typing import Self, TextIO

FRAMES = "|/-\\"
TICK_S = 0.25
DEFER_S = 3.0  # not on a terminal: a compile stage's line waits this long for JAX's compile or cache report
COMPILED_S = 0.5  # backend compiles shorter than this (small helper programs) are not "the compile"
WARM = "first run of this scenario; later runs start warm"


def compile_cache_on() -> bool:
    """Whether JAX's persistent compilation cache is on (``diffspace`` commands turn it on; ``--no-cache`` off)."""
    import jax

    return bool(jax.config.jax_compilation_cache_dir)


def compiling(what: str) -> str:
    """The compile stage's text: what compiles and whether a later run starts warm."""
    note = WARM if compile_cache_on() else "the compilation cache is off: every run compiles"
    return f"compiling {what} ({note})"


class _CompileLog:
    """Persistent-cache hits and backend compile seconds reported by JAX while registered."""

    CACHE_HIT = "/jax/compilation_cache/cache_hits"
    BACKEND_COMPILE = "/jax/core/compile/backend_compile_duration"

    def __init__(self, on_hit: Callable[[], None] = lambda: None, on_compiled: Callable[[float], None] = lambda s: None):
        self.hits, self.compile_s, self.on_hit, self.on_compiled = 0, 0.0, on_hit, on_compiled

    def _event(self, event: str, **_) -> None:
        if event == self.CACHE_HIT:
            self.hits += 1
            self.on_hit()

    def _duration(self, event: str, seconds: float, **_) -> None:
        if event == self.BACKEND_COMPILE and seconds >= COMPILED_S:
            self.compile_s += seconds
            self.on_compiled(seconds)

    def __enter__(self):
        from jax import monitoring

        monitoring.register_event_listener(self._event)
        monitoring.register_event_duration_secs_listener(self._duration)
        return self

    def __exit__(self, *exc) -> None:
        from jax import monitoring

        monitoring.unregister_event_listener(self._event)
        monitoring.unregister_event_duration_listener(self._duration)

    def note(self) -> str:
        """What the compile cost, as measured."""
        if self.compile_s > 0:
            return f"{self.compile_s:.1f} s of it compiling"
        return "compiled program from the cache" if self.hits else ""


class _Ticker:
    """A daemon thread calling ``draw()`` every :data:`TICK_S` seconds until stopped (and joined)."""

    def __init__(self, draw: Callable[[], None]):
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(draw,), name="diffspace-progress", daemon=True)
        self._thread.start()

    def _run(self, draw) -> None:
        while not self._stop.wait(TICK_S):
            draw()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()


class Spinner:
    """Stages of one long call, each with its elapsed seconds; see the module docstring.

    ::

        with Spinner("ejection", enabled=not quiet) as spin:
            spin.compile_stage("the simulation")   # ticks while it traces and compiles
            outcome = jax.block_until_ready(simulate(...))
            spin.stage("writing results and plots")
    """

    def __init__(self, name: str, enabled: bool = True, stream: TextIO | None = None,
                 clock: Callable[[], float] = time.perf_counter):
        self.name, self.enabled, self.clock = name, enabled, clock
        self.stream = stream if stream is not None else sys.stderr
        self.tty = enabled and bool(getattr(self.stream, "isatty", lambda: False)())
        self._lock = threading.Lock()
        self._text, self._frame, self._width = "", 0, 0
        self._compiling: str | None = None
        self._pending: str | None = None  # a compile stage's line not yet printed (not a terminal)
        self._start = self._stage_start = 0.0
        self._log = _CompileLog(self._cache_hit, self._compiled)
        self._ticker: _Ticker | None = None

    def __enter__(self) -> Self:
        self._start = self._stage_start = self.clock()
        if self.enabled:
            self._log.__enter__()
            self._ticker = _Ticker(self._draw if self.tty else self._print_pending)
        return self

    def stage(self, text: str) -> None:
        """Begin the next stage (the previous one ends here)."""
        with self._lock:
            self._text, self._compiling, self._pending, self._stage_start = text, None, None, self.clock()
        if self.enabled and not self.tty:
            self._line(f"{self.name}: {text} ...")

    def compile_stage(self, what: str, running: str | None = None) -> None:
        """Begin the stage whose first call traces and compiles ``what`` (:func:`compiling`). Once JAX reports the
        compile done, or a persistent-cache hit, the text becomes ``running`` (default "running ``what``") with
        the compile's seconds or "compiled program loaded from the cache". Not on a terminal, the compile line
        is printed only if no such report came within :data:`DEFER_S` (a warm start says only that it runs)."""
        with self._lock:
            self._text, self._stage_start = compiling(what), self.clock()
            self._compiling = running or f"running {what}"
            self._pending = None if self.tty else self._text

    def _print_pending(self) -> None:
        with self._lock:
            due = self._pending is not None and self.clock() - self._stage_start >= DEFER_S
            text, self._pending = (self._pending, None) if due else (None, self._pending)
        if text is not None:
            self._line(f"{self.name}: {text} ...")

    def _cache_hit(self) -> None:
        self._compiled_as("compiled program loaded from the cache")

    def _compiled(self, seconds: float) -> None:
        self._compiled_as(f"compiled in {seconds:.1f} s")

    def _compiled_as(self, note: str) -> None:
        with self._lock:
            if self._compiling is None:
                return
            self._text, self._compiling, self._pending = f"{self._compiling} ({note})", None, None
        if not self.tty:
            self._line(f"{self.name}: {self._text} ...")

    def _draw(self) -> None:
        with self._lock:
            self._frame += 1
            text = (f"{FRAMES[self._frame % len(FRAMES)]} {self.name}: {self._text} "
                    f"{self.clock() - self._stage_start:.0f} s")
            pad = max(self._width - len(text), 0)
            self._width = len(text)
            self.stream.write("\r" + text + " " * pad)
            self.stream.flush()

    def _line(self, text: str) -> None:
        with self._lock:
            if self.tty:
                self.stream.write("\r" + " " * self._width + "\r")
                self._width = 0
            self.stream.write(text + "\n")
            self.stream.flush()

    def __exit__(self, kind, error, trace) -> None:
        if not self.enabled:
            return
        if self._ticker is not None:
            self._ticker.stop()
        self._log.__exit__(kind, error, trace)
        total = self.clock() - self._start
        note = self._log.note()
        verdict = "stopped" if kind is not None else "done"
        self._line(f"{self.name}: {verdict} in {total:.1f} s" + (f" ({note})" if note else ""))


class Bar:
    """Items counted as they finish (``update(n)``) out of ``total`` (``None``: unknown), with a remaining time
    measured after the compile; see the module docstring. ``initial``: items already done (a resumed sweep)."""

    def __init__(self, label: str, total: int | None, unit: str, enabled: bool = True, initial: int = 0,
                 stream: TextIO | None = None, clock: Callable[[], float] = time.perf_counter,
                 first: str | None = None, batch: str | None = None):
        self.label, self.total, self.unit, self.enabled, self.clock = label, total, unit, enabled, clock
        self.batch = batch or unit  # what one update is (a chunk of cases, a step)
        self.done = initial
        self.stream = stream if stream is not None else sys.stderr
        self.first = first or compiling(f"the first {self.batch}")
        self._times: list[tuple[float, int]] = []  # (time, items) of every update
        self._start = clock()
        self._bar = None
        self._ticker: _Ticker | None = None
        self._log: _CompileLog | None = None
        if enabled:
            self._log = _CompileLog().__enter__()
            self._open()

    def _open(self) -> None:
        from tqdm import tqdm

        counts = "{n_fmt}/{total_fmt} " if self.total is not None else "{n_fmt} "
        share = "{percentage:3.0f}%|{bar}| " if self.total is not None else ""
        self._bar = tqdm(total=self.total, initial=self.done, desc=self.label, unit=self.unit, file=self.stream,
                         bar_format="{desc}: " + share + counts + "{unit} [{elapsed}{postfix}]",
                         mininterval=0.0, dynamic_ncols=True)
        self._bar.set_postfix_str(self.status(), refresh=True)
        if getattr(self.stream, "isatty", lambda: False)():
            self._ticker = _Ticker(self._refresh)

    def _refresh(self) -> None:
        self._bar.set_postfix_str(self.status(), refresh=True)

    def seconds_per_item(self) -> float | None:
        """Mean time per item over the items finished after the first update (which carries the compile)."""
        if len(self._times) < 2:
            return None
        (t0, _), (t1, _) = self._times[0], self._times[-1]
        items = sum(n for _, n in self._times[1:])
        return (t1 - t0) / items if items else None

    def remaining_s(self) -> float | None:
        """Estimated seconds left: the items left, in updates of the mean post-compile size, at the measured
        post-compile time per update; ``None`` before any post-compile update or without a total."""
        per_item = self.seconds_per_item()
        if per_item is None or self.total is None:
            return None
        later = self._times[1:]
        size = sum(n for _, n in later) / len(later)
        updates_left = math.ceil(max(self.total - self.done, 0) / size)
        return updates_left * size * per_item

    def status(self) -> str:
        """The bar's note: compiling, waiting for a second measurement, or the remaining time."""
        if not self._times:
            loaded = self._log is not None and self._log.hits
            first = f"running the first {self.batch} (compiled program loaded from the cache)" if loaded else self.first
            return f"{first} {self.clock() - self._start:.0f} s"
        per_item = self.seconds_per_item()
        if per_item is None:
            first = self._times[0][0] - self._start
            return f"first {self.batch} took {first:.1f} s with the compile; timing the next"
        rate = f"{per_item:.3g} s/{self.unit} after the compile"
        remaining = self.remaining_s()
        return rate if remaining is None else f"about {_clock(remaining)} left at {rate}"

    def _stop_listening(self) -> None:
        if self._log is not None:
            self._log.__exit__(None, None, None)
            self._log = None

    def update(self, n: int = 1) -> None:
        self._times.append((self.clock(), n))
        self._stop_listening()
        self.done += n
        if self._bar is not None:
            self._bar.set_postfix_str(self.status(), refresh=False)
            self._bar.update(n)

    def close(self) -> None:
        self._stop_listening()
        if self._ticker is not None:
            self._ticker.stop()
            self._ticker = None
        if self._bar is not None:
            self._bar.set_postfix_str(self.summary(), refresh=False)
            self._bar.close()
            self._bar = None

    def summary(self) -> str:
        if not self._times:
            return "nothing computed"
        first = self._times[0][0] - self._start
        per_item = self.seconds_per_item()
        after = f", then {per_item:.3g} s/{self.unit}" if per_item is not None else ""
        return f"first {self.batch} {first:.1f} s (with the compile){after}"

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _clock(seconds: float) -> str:
    seconds = round(seconds)
    minutes, s = divmod(seconds, 60)
    hours, m = divmod(minutes, 60)
    return f"{hours}:{m:02d}:{s:02d}" if hours else f"{m}:{s:02d}"
