"""The energy windows (android-app/PROTOCOL.md section 9f), after the timed runs, on the loaded model:
a settle pause, an idle window of `energy_seconds` with nothing running, then a load window of
back-to-back inferences for as long; a side thread reads the counters every 20 ms during both (one
reading when a window opens, one each period, never ahead of schedule, one when it closes). The
sampler's own cost is the same in both windows and cancels in their difference.

The simulated app runs it over the simulated battery (EnergyRun.kt's Python twin); the counters are
anything with `sources()`, `read(t_ns)` and `state()`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from nnlite_tui.core.bench import energy_math
from nnlite_tui.core.bench.energy_math import BatteryReading, BatteryState, EnergyBlock, EnergyWindow

T = TypeVar("T")
PERIOD_NS = energy_math.SAMPLE_PERIOD_MS * 1_000_000


class BatterySource(Protocol):
    def sources(self) -> dict[str, str | None]:
        """Where each counter is read: {"current_now", "charge_counter", "voltage"} -> a name or None."""

    def read(self, t_ns: int) -> BatteryReading:
        """One reading of every readable counter (called on the sampling thread: must be quick)."""

    def state(self) -> BatteryState:
        """The battery broadcast now (level, temperature, voltage, plugged, status)."""


@dataclass
class Sampled(Generic[T]):
    value: T
    readings: list[BatteryReading]
    error: str | None


def sample(source: BatterySource, body: Callable[[], T], period_ns: int = PERIOD_NS,
           clock: Callable[[], int] = time.monotonic_ns) -> Sampled[T]:
    """Run `body` on this thread while a side thread reads `source` every `period_ns` (ThreadSampler)."""
    readings: list[BatteryReading] = []
    error: list[str] = []
    stop = threading.Event()

    def read_into() -> bool:
        try:
            readings.append(source.read(clock()))
            return True
        except (OSError, ValueError) as exc:  # a counter that stops answering (or answers garbage) ends the
            # sampling; the block's reason says why, and the readings so far are kept
            error.append(f"{type(exc).__name__}: {exc}")
            return False

    def loop() -> None:
        next_ns = clock() + period_ns
        while not stop.is_set():
            wait = next_ns - clock()
            if wait > 0 and stop.wait(wait / 1e9):
                break
            if not read_into():
                break
            next_ns += period_ns
            if next_ns <= clock():  # fell behind: skip the missed ticks rather than burst
                next_ns = clock() + period_ns

    read_into()
    thread = threading.Thread(target=loop, name="nnlite-battery", daemon=True)
    thread.start()
    try:
        value = body()
    finally:
        stop.set()
        thread.join()
    if not error:
        read_into()
    return Sampled(value, readings, error[0] if error else None)


def measure(invoke: Callable[[], Any], window_seconds: float, source: BatterySource, origin: str,
            sleep: Callable[[float], None] = time.sleep, clock: Callable[[], int] = time.monotonic_ns,
            on_load: Callable[[bool], None] = lambda busy: None) -> EnergyBlock:
    """The protocol's settle, idle and load windows; the `energy` block. `on_load(True/False)` tells a
    simulated battery when the load window starts and ends (a real one sees it in its current).
    An inference that raises ends the measurement (the caller fails the run at `invoke`)."""
    window_ns = int(window_seconds * 1e9)
    sleep(energy_math.SETTLE_SECONDS)
    sources = source.sources()
    before = source.state()

    def idle_body() -> int:
        t0 = clock()
        sleep(window_ns / 1e9)
        return clock() - t0

    def load_body() -> tuple[int, int]:
        on_load(True)
        try:
            t0 = clock()
            n = 0
            while True:
                invoke()
                n += 1
                if clock() - t0 >= window_ns:  # the last inference ends the window
                    return clock() - t0, n
        finally:
            on_load(False)

    idle = sample(source, idle_body, clock=clock)
    load = sample(source, load_body, clock=clock)
    after = source.state()
    idle_w, load_w = EnergyWindow(idle.readings, idle.value), EnergyWindow(load.readings, load.value[0])
    inferences = load.value[1]
    r = energy_math.evaluate(idle_w, load_w, inferences, before, after, idle.error or load.error)
    return energy_math.block(r, origin, sources, window_seconds, idle_w, load_w, inferences, before, after)
