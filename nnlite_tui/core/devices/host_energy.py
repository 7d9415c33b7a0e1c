"""Energy per inference on the host, only from a real counter: RAPL's package energy under
/sys/class/powercap (`intel-rapl:N/energy_uj`, also AMD's through the same driver), when this process
can read it. No counter, no figure: the block says "no energy counter on this host" and why; nothing
is estimated from a power model.

The windows are the app's (android-app/PROTOCOL.md section 9f: settle, idle, load, a reading every
20 ms), the validity rules too where they apply (a read that failed, too few readings or updates, a
counter that did not change, an idle window noisier than the load difference). The arithmetic is a
cumulative counter's: the energy of a window is the sum of its readings' increments, an increment
below zero being the counter's wrap past max_energy_range_uj; power is that energy over the span.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict, cast

from nnlite_tui.core.bench import energy_math
from nnlite_tui.core.bench.energy_run import sample

POWERCAP_ROOT = Path("/sys/class/powercap")
NO_COUNTER = "no energy counter on this host"


class WindowSamples(TypedDict):
    t_ns: list[int]  # from the window's first reading
    energy_uj: list[list[int]]  # per reading, each counter's value


class WindowSummary(TypedDict):
    """One window (idle or load) over the RAPL counters: its readings, updates, energy and power."""

    seconds: float
    readings: int
    rate_hz: float | None
    updates: int
    energy_uj: float
    mean_power_mw: float | None
    power_std_mw: float | None
    samples: WindowSamples


class LoadSummary(WindowSummary):
    inferences: int


class EnergyFigures(TypedDict):
    """Validity, reasons and figures, the protocol's (android-app/PROTOCOL.md section 9f) names."""

    valid: bool
    reason: str | None
    reason_codes: list[str]
    power_idle_mw: float | None
    power_load_mw: float | None
    idle_noise_mw: float | None
    power_delta_mw: float | None
    energy_per_inference_mj: float | None


class HostEnergyBlock(EnergyFigures, total=False):
    """The host's `energy` block: the figures, where they come from and the windows they come from."""

    source: str
    counter: str | None
    counter_sources: dict[str, list[str]]
    max_energy_range_uj: list[int]
    window_seconds: float
    settle_seconds: float
    sample_period_ms: int
    charging: None  # a host has no battery to charge
    idle: WindowSummary
    load: LoadSummary


@dataclass(frozen=True)
class RaplCounter:
    path: Path  # the zone's energy_uj
    name: str  # the zone's name (package-0, ...)
    max_range_uj: int  # the counter wraps to 0 past this


def find_counters(root: Path = POWERCAP_ROOT) -> tuple[list[RaplCounter], str | None]:
    """The package zones whose energy this process can read, or none and why."""
    if not root.is_dir():
        return [], f"{NO_COUNTER}: {root} does not exist (no powercap/RAPL driver)"
    zones = sorted(p for p in root.glob("intel-rapl:*") if p.name.count(":") == 1)
    counters, unreadable = [], []
    for zone in zones:
        try:
            name = (zone / "name").read_text().strip()
            if not name.startswith("package"):
                continue  # psys and the like include the package: counting both would count it twice
            int((zone / "energy_uj").read_text())
            counters.append(RaplCounter(zone / "energy_uj", name, int((zone / "max_energy_range_uj").read_text())))
        except (OSError, ValueError) as exc:
            unreadable.append(f"{zone.name}: {type(exc).__name__}: {exc}")
    if counters:
        return counters, None
    if unreadable:
        return [], f"{NO_COUNTER}: RAPL zones are not readable here ({'; '.join(unreadable[:3])})"
    return [], f"{NO_COUNTER}: {root} has no RAPL package zone"


class RaplSource:
    """Readings of every package counter, as BatteryReading-like tuples (t_ns, [µJ per counter])."""

    def __init__(self, counters: Sequence[RaplCounter]):
        self.counters = list(counters)

    def read(self, t_ns: int) -> tuple[int, list[int]]:
        return t_ns, [int(c.path.read_text()) for c in self.counters]


def increments(values: Sequence[Sequence[int]], max_ranges: Sequence[int]) -> list[int]:
    """Energy (µJ) between consecutive readings, summed over the counters, each wrap undone."""
    out = []
    for prev, cur in zip(values, values[1:]):
        total = 0
        for a, b, top in zip(prev, cur, max_ranges):
            d = b - a
            total += d + top if d < 0 else d
        out.append(total)
    return out


@dataclass
class RaplWindow:
    t_ns: list[int]
    energy_uj: list[list[int]]
    duration_ns: int

    def summary(self, max_ranges: Sequence[int]) -> WindowSummary:
        inc = increments(self.energy_uj, max_ranges)
        span = self.t_ns[-1] - self.t_ns[0] if len(self.t_ns) >= 2 else 0
        energy = math.fsum(float(d) for d in inc)
        # Power between consecutive updates (a reading whose counter moved), weighted by their spans.
        points = [0] + [j + 1 for j, d in enumerate(inc) if d != 0]
        cum = [0.0]
        for d in inc:
            cum.append(cum[-1] + d)
        pieces = [((cum[b] - cum[a]) * 1e6 / (self.t_ns[b] - self.t_ns[a]), self.t_ns[b] - self.t_ns[a])
                  for a, b in zip(points, points[1:]) if self.t_ns[b] > self.t_ns[a]]
        mean = energy * 1e6 / span if span > 0 else None  # µJ/ns -> mW
        std = None
        if pieces and mean is not None:
            w = math.fsum(float(ns) for _, ns in pieces)
            std = math.sqrt(math.fsum((p - mean) * (p - mean) * ns for p, ns in pieces) / w)
        return {"seconds": self.duration_ns / 1e9, "readings": len(self.t_ns),
                "rate_hz": (len(self.t_ns) - 1) * 1e9 / span if span > 0 else None,
                "updates": sum(1 for d in inc if d != 0), "energy_uj": energy, "mean_power_mw": mean,
                "power_std_mw": std,
                "samples": {"t_ns": [t - self.t_ns[0] for t in self.t_ns], "energy_uj": self.energy_uj}}


def evaluate(idle: WindowSummary, load: WindowSummary, inferences: int, read_error: str | None) -> EnergyFigures:
    """Validity and figures from two window summaries, in the protocol's order of reasons."""
    reasons: list[tuple[str, str]] = []
    if read_error:
        reasons.append(("counter_read_failed", f"reading the RAPL counter failed: {read_error}"))
    for name, w in (("idle", idle), ("load", load)):
        if w["readings"] < energy_math.MIN_READINGS:
            reasons.append(("too_few_samples", f"only {w['readings']} readings in the {name} window "
                                               f"(at least {energy_math.MIN_READINGS} needed)"))
    if idle["updates"] == 0 or load["updates"] == 0:
        reasons.append(("counter_constant", f"the RAPL counter did not change in both windows (updates "
                                            f"{idle['updates']} idle, {load['updates']} load)"))
    else:
        for name, w in (("idle", idle), ("load", load)):
            if w["updates"] < energy_math.MIN_UPDATES:
                reasons.append(("too_few_samples", f"the RAPL counter changed only {w['updates']} times in the "
                                                   f"{name} window (at least {energy_math.MIN_UPDATES} needed)"))
    p_idle: float | None = None
    p_load: float | None = None
    noise: float | None = None
    delta: float | None = None
    if not reasons:
        idle_mw, load_mw, noise_mw = idle["mean_power_mw"], load["mean_power_mw"], idle["power_std_mw"]
        if idle_mw is None or load_mw is None or noise_mw is None:
            reasons.append(("too_few_samples", "a window has no span between counter updates to measure power over"))
        else:
            p_idle, p_load, noise, delta = idle_mw, load_mw, noise_mw, load_mw - idle_mw
            if delta <= noise_mw:
                reasons.append(("noisy_idle", f"the load drew {delta} mW more than idle, not more than the "
                                              f"idle window's noise of {noise_mw} mW"))
    valid = not reasons
    return {"valid": valid, "reason": "; ".join(t for _, t in reasons) or None,
            "reason_codes": list(dict.fromkeys(c for c, _ in reasons)), "power_idle_mw": p_idle,
            "power_load_mw": p_load, "idle_noise_mw": noise,
            "power_delta_mw": delta if valid else None,
            "energy_per_inference_mj": delta * (load["seconds"]) / inferences if valid and delta is not None else None}


def measure(invoke: Callable[[], Any], window_seconds: float, counters: Sequence[RaplCounter],
            sleep: Callable[[float], None] = time.sleep, clock: Callable[[], int] = time.monotonic_ns) -> HostEnergyBlock:
    """Settle, idle window, load window over the RAPL counters; the host's energy block."""
    source = RaplSource(counters)
    window_ns = int(window_seconds * 1e9)
    sleep(energy_math.SETTLE_SECONDS)

    def idle_body() -> int:
        t0 = clock()
        sleep(window_ns / 1e9)
        return clock() - t0

    def load_body() -> tuple[int, int]:
        t0, n = clock(), 0
        while True:
            invoke()
            n += 1
            if clock() - t0 >= window_ns:
                return clock() - t0, n

    # The app's sampling loop; it keeps whatever read() returns, here (t_ns, [µJ per counter]).
    idle = sample(source, idle_body, clock=clock)  # type: ignore[arg-type]
    load = sample(source, load_body, clock=clock)  # type: ignore[arg-type]
    ranges = [c.max_range_uj for c in counters]
    # sample() keeps what RaplSource.read returned, not battery readings.
    readings = [cast("list[tuple[int, list[int]]]", s.readings) for s in (idle, load)]
    windows = [RaplWindow([r[0] for r in rs], [r[1] for r in rs], ns).summary(ranges)
               for rs, ns in zip(readings, (idle.value, load.value[0]))]
    inferences = load.value[1]
    figures = evaluate(windows[0], windows[1], inferences, idle.error or load.error)
    return {**figures, "source": "host", "counter": "rapl",
            "counter_sources": {"rapl": [str(c.path) for c in counters]},
            "max_energy_range_uj": ranges, "window_seconds": window_seconds,
            "settle_seconds": energy_math.SETTLE_SECONDS, "sample_period_ms": energy_math.SAMPLE_PERIOD_MS,
            "charging": None, "idle": windows[0], "load": {**windows[1], "inferences": inferences}}


def no_counter_block(reason: str) -> HostEnergyBlock:
    return {"valid": False, "reason": reason, "reason_codes": ["no_counter"], "source": "host", "counter": None,
            "power_idle_mw": None, "power_load_mw": None, "idle_noise_mw": None, "power_delta_mw": None,
            "energy_per_inference_mj": None}


def windows_or_reason(window_seconds: float, root: Path = POWERCAP_ROOT):
    """(the after-timed hook measuring the windows, None) with a readable counter, else (None, the block
    that says why there is no figure)."""
    counters, why = find_counters(root)
    if not counters:
        return None, no_counter_block(why or NO_COUNTER)
    return (lambda invoke: {"energy": measure(invoke, window_seconds, counters)}), None
