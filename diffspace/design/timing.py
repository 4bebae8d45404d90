"""Where a campaign's time went: wall seconds per stage and, within each, the seconds XLA spent compiling.

JAX reports the duration of every backend compile (:mod:`jax.monitoring`, event
``/jax/core/compile/backend_compile_duration``); :class:`StageTimes` adds them up per stage, so a campaign's
``summary.json`` (``time_s``) says, for example, that its simulations took 28 s of which 20 s were the compile,
and its console prints the same in one line (:func:`time_line`). Tracing and lowering are in the stage's wall
time, not in its compile time; a program loaded from the persistent compilation cache costs no compile.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

BACKEND_COMPILE = "/jax/core/compile/backend_compile_duration"


class StageTimes:
    """Wall and compile seconds of named stages, in the order they ran (a stage run twice adds up)."""

    def __init__(self) -> None:
        self.wall: dict[str, float] = {}
        self.compile: dict[str, float] = {}
        self._current: str | None = None

    def _duration(self, event: str, seconds: float, **_) -> None:
        if event == BACKEND_COMPILE and self._current is not None:
            self.compile[self._current] += seconds

    @contextlib.contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time the block as stage ``name``."""
        from jax import monitoring

        outer, self._current = self._current, name
        self.wall.setdefault(name, 0.0)
        self.compile.setdefault(name, 0.0)
        monitoring.register_event_duration_secs_listener(self._duration)
        start = time.perf_counter()
        try:
            yield
        finally:
            self.wall[name] += time.perf_counter() - start
            monitoring.unregister_event_duration_listener(self._duration)
            self._current = outer

    def summary(self) -> dict:
        """``{stage: {"wall_s": ..., "compile_s": ...}}`` and the ``total_s`` of the stages."""
        stages = {name: {"wall_s": self.wall[name], "compile_s": self.compile[name]} for name in self.wall}
        return {**stages, "total_s": sum(self.wall.values())}


def time_line(times: dict) -> str:
    """One console line of a :meth:`StageTimes.summary`: ``time: simulations 28.1 s (compiling 20.3 s), ...``."""
    stages = {name: t for name, t in times.items() if name != "total_s"}
    def part(name: str, t: dict) -> str:
        compiling = f" (compiling {t['compile_s']:.1f} s)" if t["compile_s"] >= 0.05 else ""
        return f"{name.replace('_', ' ')} {t['wall_s']:.1f} s{compiling}"

    parts = [part(name, t) for name, t in stages.items()]
    return f"time: {', '.join(parts)}; total {times['total_s']:.1f} s"
