"""The run's remaining time, from the measured cost of what remains (not from a count of models).

The run converts the costliest models first (convert/ranking.py), so models finished per hour
early in a run says little about the rest: a count-based rate overstated a run's end by 5x. Here
each unit left is priced:

- conversion: the ranking's estimate for the unit (ConversionCost, CPU seconds on the fitted
  host) times this run's measured ratio of actual to estimated seconds, the median of the latest
  RECENT conversions (largest first: they are the most like those left); a unit without an
  estimate costs the median conversion measured so far; a cached one costs nothing. With
  --isolation pause a conversion's clock runs on while host benchmarks hold it: that time is
  taken out (the benchmarks are priced on their own);
- benchmark: the median benchmark stage measured so far (per unit), on the devices in parallel.

Conversions run on as many workers as were seen converting at once. With a host device whose
benchmarks hold conversions (--isolation pause) the two add up; otherwise the slower of the two
streams sets the end, plus one benchmark after the last conversion.

The uncertainty comes from the spread of the measured ratios (the wider of the latest ones' and
all ones' quartiles price the conversions again); before a conversion has finished, the ranking's own fit (about 2x either way)
stands. Paused time is counted apart: an estimate is of running time, and a unit's time in
flight leaves out the pauses.

Pure Python: the console, `status` and the bench script fold the same events.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from nnlite_tui.core.events import (TERMINAL, ConversionCost, Event, ModelStatus, RunControl, RunFinished,
                                    RunStarted, StageFinished, StageStarted)

PRIOR_LOW, PRIOR_HIGH = 0.5, 2.0  # the ranking's fit, before this run measured a conversion
FEW = 3  # fewer measured ratios than this: widen the band to at least the prior's
RECENT = 8  # conversions whose ratios price what is left
HOLDS_KEPT = 64  # benchmark spans kept, to take hold time out of the conversions that overlap them
MIN_UNHELD = 0.1  # a conversion is never priced below this share of its clock time


@dataclass(frozen=True)
class Eta:
    seconds: float  # the central estimate of running time left
    low: float
    high: float
    basis: str = "cost"  # "cost": priced unit by unit; "count": units left at the rate seen (no costs known)

    @property
    def spread(self) -> float:
        """Half the band, for "6:20 ±1:10"."""
        return (self.high - self.low) / 2


@dataclass
class _Unit:
    cost: float | None = None  # the ranking's estimate (CPU seconds), None: not ranked
    converted: bool = False
    benchmarked: bool = False
    terminal: bool = False
    converting_since: float | None = None
    benchmarking_since: float | None = None


@dataclass
class EtaEstimator:
    units: dict[str, _Unit] = field(default_factory=dict)
    ratios: list[float] = field(default_factory=list)  # actual / estimated conversion seconds
    conversions: list[float] = field(default_factory=list)  # measured, not from the cache
    benchmarks: list[float] = field(default_factory=list)
    holds_conversions: bool = False
    devices: int = 1
    workers: int = 1  # the most conversions seen in flight at once
    paused_at: float | None = None
    pauses: list[tuple[float, float]] = field(default_factory=list)
    finished: bool = False
    converting: set[str] = field(default_factory=set)
    holds: list[tuple[float, float]] = field(default_factory=list)  # benchmarks' (start, end), the latest

    # --- folding ---
    def fold(self, event: Event) -> None:
        if isinstance(event, RunStarted):
            self.units = {name: self.units.get(name, _Unit()) for name in event.models}
            self.holds_conversions = event.holds_conversions
            self.devices = max(1, len(event.devices))
            self.finished = False
        elif isinstance(event, ConversionCost):
            self._unit(event.model).cost = event.seconds
        elif isinstance(event, StageStarted):
            unit = self._unit(event.model)
            if event.stage == "convert":
                unit.converting_since = event.ts
                self.converting.add(event.model)
                self.workers = max(self.workers, len(self.converting))
            elif event.stage == "benchmark":
                unit.benchmarking_since = event.ts
        elif isinstance(event, StageFinished):
            self._stage_finished(event)
        elif isinstance(event, ModelStatus):
            unit = self._unit(event.model)
            unit.terminal = event.status in TERMINAL
            if event.status in ("converted", "benchmarking"):
                unit.converted = True
            if event.status == "queued":  # a retry starts over
                unit.converted = unit.benchmarked = False
            if unit.terminal or event.status == "queued":
                unit.converting_since = unit.benchmarking_since = None
                self.converting.discard(event.model)
        elif isinstance(event, RunControl):
            if event.action == "pause" and self.paused_at is None:
                self.paused_at = event.ts
            elif event.action in ("resume", "stop_after_current", "stop_now") and self.paused_at is not None:
                self.pauses.append((self.paused_at, event.ts))
                self.paused_at = None
        elif isinstance(event, RunFinished):
            self.finished = True

    def _stage_finished(self, event: StageFinished) -> None:
        unit = self._unit(event.model)
        if event.stage == "convert":
            unit.converting_since = None
            self.converting.discard(event.model)
            unit.converted = event.ok
            if event.ok and event.detail != "cached":
                seconds = event.seconds
                if self.holds_conversions:  # its clock ran on while host benchmarks held it: those are priced apart
                    held = self._held_within(event.ts - seconds, event.ts)
                    seconds = max(seconds * MIN_UNHELD, seconds - held)
                self.conversions.append(seconds)
                if unit.cost:
                    self.ratios.append(seconds / unit.cost)
        elif event.stage == "benchmark":
            unit.benchmarking_since = None
            unit.benchmarked = event.ok
            if event.ok:
                self.benchmarks.append(event.seconds)
            self.holds.append((event.ts - event.seconds, event.ts))
            del self.holds[:-HOLDS_KEPT]

    def _held_within(self, start: float, end: float) -> float:
        """Seconds of [start, end] that host benchmarks held the conversions."""
        return sum(max(0.0, min(b, end) - max(a, start)) for a, b in self.holds)

    def _unit(self, name: str) -> _Unit:
        unit = self.units.get(name)
        if unit is None:
            unit = self.units[name] = _Unit()
        return unit

    # --- figures ---
    def paused_s(self, now: float) -> float:
        """Seconds the operator has held the run paused, all told."""
        spans = self.pauses + ([(self.paused_at, now)] if self.paused_at is not None else [])
        return sum(max(0.0, b - a) for a, b in spans)

    def _running_since(self, since: float, now: float) -> float:
        spans = self.pauses + ([(self.paused_at, now)] if self.paused_at is not None else [])
        paused = sum(max(0.0, min(b, now) - max(a, since)) for a, b in spans)
        return max(0.0, now - since - paused)

    def estimate(self, now: float) -> Eta | None:
        """Running time left (paused time not included), or None before anything can be priced."""
        left = [u for u in self.units.values() if not u.terminal]
        if self.finished or not left:
            return Eta(0.0, 0.0, 0.0) if self.units else None
        if self.ratios:
            # The run converts the costliest first: its latest conversions are the most like those
            # left (a small model's fixed costs weigh more against its estimate than a large one's).
            recent = self.ratios[-RECENT:]
            mid = statistics.median(recent)
            # The band: the quartiles of the latest ratios and of all of them, whichever is wider.
            (low, high), (all_low, all_high) = _quartiles(recent), _quartiles(self.ratios)
            low, high = min(low, all_low, mid), max(high, all_high, mid)
            if len(self.ratios) < FEW:
                low, high = min(low, mid * PRIOR_LOW), max(high, mid * PRIOR_HIGH)
        else:
            mid, low, high = 1.0, PRIOR_LOW, PRIOR_HIGH
        fallback = statistics.median(self.conversions) if self.conversions else None
        bench = statistics.median(self.benchmarks) if self.benchmarks else None
        if bench is None and fallback is None and not any(u.cost for u in left):
            return None
        seconds, low_s, high_s = (self._left(left, k, k / mid, fallback, bench, now) for k in (mid, low, high))
        return Eta(seconds, low_s, high_s)

    def _left(self, left: list[_Unit], k: float, scale: float, fallback: float | None, bench: float | None,
              now: float) -> float:
        """Seconds left with `k` seconds per estimated second (`scale`: k over the median ratio)."""
        convert = benchmark = 0.0
        for unit in left:
            if not unit.converted:
                if unit.cost is not None:
                    price = unit.cost * k
                else:  # not ranked: a conversion like those measured
                    price = fallback * scale if fallback is not None else 0.0
                if unit.converting_since is not None:
                    price = max(0.0, price - self._running_since(unit.converting_since, now))
                convert += price
            if not unit.benchmarked and bench is not None:
                price = bench
                if unit.benchmarking_since is not None:
                    price = max(0.0, price - self._running_since(unit.benchmarking_since, now))
                benchmark += price
        convert /= max(1, self.workers)
        if self.holds_conversions:
            return convert + benchmark
        # The last conversion's unit is benchmarked after it.
        return max(convert + (bench or 0.0) if convert else 0.0, benchmark / self.devices)


def _quartiles(values: list[float]) -> tuple[float, float]:
    if len(values) == 1:
        return values[0], values[0]
    q = statistics.quantiles(values, n=4, method="inclusive")
    return q[0], q[2]
