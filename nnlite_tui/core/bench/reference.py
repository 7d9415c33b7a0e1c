"""Drift on record: every device times the same reference workloads at intervals during a run.

Two references, because a small model and a large one do not slow down alike:
- "compute": reference_model.py, converted once into reference.tflite (shipped in the package: the
  artifact of runtimes.REFERENCE_RUNTIME, which every device runs), about
  0.1 ms, all in cache: it feels the core's clock;
- "memory": reference_memory.py, 128 MiB of weights read once per inference, made at first use beside
  the conversion cache: it feels the memory bandwidth and last-level cache a neighbour takes.
They are timed on each device when the device starts its first unit and then between units, at most
every INTERVAL_S and only while their cost stays within BUDGET of the run's wall time. Their figures
go to events.jsonl (ReferenceTimed), to the run's references.json and to the device's history across
runs (reference_history.py); each round records the device's nearest compute figure, so a reader can
see whether the device itself was slower while a unit was timed. Medians are never rescaled by them
(bench/README.md, "Reference model"); `compare` reads them to say how far the device moved between
two runs (core/report/compare_sessions.py).
"""

from __future__ import annotations

import bisect
import os
import statistics
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict

from nnlite_tui.core.bench import reference_memory
from nnlite_tui.core.bench.settings import BenchSettings
from nnlite_tui.core.runtimes import REFERENCE_RUNTIME, get_runtime

REFERENCE_FILE = Path(__file__).with_name(f"reference{get_runtime(REFERENCE_RUNTIME).suffix}")
REFERENCE_SHA256 = "8ff2cf59f5d8c806a9e846f9786b1236aab533702fcf2a2016ca13004ca0469f"
# About 0.15 s of timed work (a thousand runs of its ~0.1 ms) after a short warm-up: a figure whose
# noise is small next to a drift, in about half a second of the device's time.
SETTINGS = BenchSettings(warmup=3, warmup_seconds=0.05, runs=30, min_seconds=0.15, max_seconds=5.0)
INTERVAL_S = 60.0  # at most one round of the references per device per minute...
BUDGET = 0.03  # ...and only while the references have cost at most 3% of the run's wall time so far
FIRST_AFTER_S = 0.0  # the first reference: when the device takes its first unit
COMPUTE, MEMORY = "compute", "memory"


class SessionFigures(TypedDict):
    """One reference's figures in this session (references.json, the device history)."""

    median_ns: float
    figures: int
    first_at: float  # wall time of the first figure
    last_at: float
    values_ns: list[float]


class NearestFigure(TypedDict):
    """The compute reference's figure nearest a moment (a round's `reference`)."""

    at: float  # its wall time
    median_ns: float
    age_s: float  # < 0: taken after the moment


@dataclass(frozen=True)
class Reference:
    name: str
    settings: BenchSettings

    def artifact(self, cache_root: str | Path) -> Path:
        return REFERENCE_FILE if self.name == COMPUTE else reference_memory.memory_reference(cache_root)


REFERENCES = (Reference(COMPUTE, SETTINGS), Reference(MEMORY, reference_memory.SETTINGS))


def active_references() -> tuple[Reference, ...]:
    """The references a run times: all of them, or those named in $NNLITE_REFERENCES (comma-separated;
    the test suite's many tiny runs time only the compute one)."""
    names = {n.strip() for n in (os.environ.get("NNLITE_REFERENCES") or "").split(",") if n.strip()}
    return tuple(r for r in REFERENCES if not names or r.name in names)


@dataclass
class ReferenceClock:
    """One device's reference figures and when the next one is due (thread-safe)."""

    started: float  # monotonic time the run started
    session_id: str = field(default_factory=lambda: uuid.uuid4().hex[:16])  # this process's session of the device
    wall_started: float = field(default_factory=time.time)
    interval_s: float = INTERVAL_S
    budget: float = BUDGET
    figures: list[tuple[float, float]] = field(default_factory=list)  # compute: (wall time, median ns), in order
    by_name: dict[str, list[tuple[float, float]]] = field(default_factory=dict)  # every reference's figures
    spent_s: float = 0.0
    last_at: float | None = None  # monotonic time of the last reference
    last_cost_s: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def due(self, now: float) -> bool:
        with self._lock:
            if self.last_at is None:
                return now - self.started >= FIRST_AFTER_S
            if now - self.last_at < self.interval_s:
                return False
            return self.spent_s + self.last_cost_s <= self.budget * (now - self.started)

    def record(self, now: float, cost_s: float, wall_at: float | None, median_ns: float | None,
               name: str = COMPUTE) -> None:
        """A visit of the references ended (`median_ns` None when it failed or when the figures were
        given one by one to `figure`: its cost still counts)."""
        with self._lock:
            self.last_at, self.last_cost_s = now, cost_s
            self.spent_s += cost_s
        if wall_at is not None and median_ns is not None:
            self.figure(name, wall_at, median_ns)

    def figure(self, name: str, wall_at: float, median_ns: float) -> None:
        with self._lock:
            bisect.insort(self.by_name.setdefault(name, []), (wall_at, median_ns))
            if name == COMPUTE:
                bisect.insort(self.figures, (wall_at, median_ns))

    def session(self) -> dict[str, SessionFigures]:
        """Per reference: the median of this session's figures, their count and time span."""
        with self._lock:
            return {name: {"median_ns": statistics.median(m for _, m in figs), "figures": len(figs),
                           "first_at": figs[0][0], "last_at": figs[-1][0],
                           "values_ns": [m for _, m in figs]}
                    for name, figs in self.by_name.items() if figs}

    def nearest(self, wall_at: float) -> NearestFigure | None:
        """The figure nearest in time to `wall_at`: {at, median_ns, age_s} (age < 0: taken after)."""
        with self._lock:
            if not self.figures:
                return None
            i = bisect.bisect_left(self.figures, (wall_at, float("-inf")))
            near = min(self.figures[max(0, i - 1):i + 1], key=lambda f: abs(f[0] - wall_at))
        return {"at": near[0], "median_ns": near[1], "age_s": round(wall_at - near[0], 3)}
