"""Where a conversion's time goes: wall and CPU seconds per phase, recorded for every conversion.

The worker times its own phases (build, reference, export, lower, serialize, validate, hash) with
the process's CPU clock, which counts every thread torch or the converter starts. The orchestrator
adds what happens around the job: the worker's start and import (on the first job it serves),
and the cache write or fetch that places the artifact (with the calling thread's CPU clock).

Wall seconds include time the worker spent stopped while a host benchmark was timed; CPU seconds
do not, so CPU is the figure to sum when comparing conversion cost across runs or machines.

A result carries them as result["phases"] = {phase: {"s": wall, "cpu_s": cpu}}; the report's
conversion block and the conversion's StageFinished event carry the same dict.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Mapping

from nnlite_tui.core.convert.record import ConversionRecord

# In the order they happen; a result holds only the phases that ran.
PHASES = ("worker_start", "cache_fetch", "build", "reference", "export", "lower", "convert", "serialize",
          "validate", "hash", "cache_write")


class PhaseClock:
    """Accumulates (wall, cpu) seconds per phase; `cpu` is the CPU clock to read (process or thread).

    `on_start(name)` is told as each phase begins (the worker writes it to the job's log, so that a
    console shows the phase while it runs, not only the totals at the end)."""

    def __init__(self, cpu: Callable[[], float] = time.process_time,
                 on_start: Callable[[str], None] | None = None) -> None:
        self.cpu = cpu
        self.on_start = on_start
        self.phases: dict[str, dict[str, float]] = {}

    def started(self, name: str) -> None:
        """Phase `name` begins now (phase() says so itself; a phase timed with now()/since() calls this)."""
        if self.on_start is not None:
            self.on_start(name)

    def now(self) -> tuple[float, float]:
        return time.perf_counter(), self.cpu()

    def add(self, name: str, wall_s: float, cpu_s: float | None) -> None:
        slot = self.phases.setdefault(name, {"s": 0.0, "cpu_s": 0.0})
        slot["s"] += max(0.0, wall_s)
        slot["cpu_s"] += max(0.0, cpu_s or 0.0)

    def since(self, name: str, start: tuple[float, float]) -> tuple[float, float]:
        """Add the time from `start` (a now()) to now under `name`; returns now."""
        end = self.now()
        self.add(name, end[0] - start[0], end[1] - start[1])
        return end

    @contextlib.contextmanager
    def phase(self, name: str) -> Iterator[None]:
        self.started(name)
        start = self.now()
        try:
            yield
        finally:
            self.since(name, start)

    def to_dict(self) -> dict[str, dict[str, float]]:
        return {k: {"s": round(v["s"], 4), "cpu_s": round(v["cpu_s"], 4)} for k, v in self.phases.items()}


def merged(result: ConversionRecord, extra: Mapping[str, Mapping[str, float]]) -> ConversionRecord:
    """The result with `extra` phases added to its own (summed where a phase is in both)."""
    if not extra:
        return result
    phases = {k: dict(v) for k, v in (result.get("phases") or {}).items()}
    for name, cost in extra.items():
        slot = phases.setdefault(name, {"s": 0.0, "cpu_s": 0.0})
        slot["s"] = round(slot["s"] + float(cost.get("s") or 0.0), 4)
        slot["cpu_s"] = round(slot["cpu_s"] + float(cost.get("cpu_s") or 0.0), 4)
    return {**result, "phases": phases}


def totals(phases: Mapping[str, Mapping[str, float]] | None) -> tuple[float, float]:
    """(wall, cpu) seconds summed over a result's phases."""
    phases = phases or {}
    return (sum(float(v.get("s") or 0.0) for v in phases.values()),
            sum(float(v.get("cpu_s") or 0.0) for v in phases.values()))
