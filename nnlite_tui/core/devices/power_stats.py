"""Per-rail energy from the Power Stats HAL, where adb can read it (Pixel 6 and later: the on-device
power monitor's rails), for the app's energy windows.

`dumpsys android.hardware.power.stats.IPowerStats/default` prints, between
`============= PowerStats HAL 2.0 energy meter ==============` and its `End of` line, one line per
channel: `[<rail>]:<subsystem>   <cumulative energy> mWs` (the AIDL HAL's dump; the value is printed
from a float, so about seven significant digits). Rail names differ per device.

While a launch that asked for energy runs, a side thread reads that dump about once a second with
the device's clock (mksh's $EPOCHREALTIME, the clock the app's battery broadcasts are stamped with).
Afterwards the snapshots inside each window (idle: from `battery_before.at_ms` for the idle window's
seconds; load: the load window's seconds up to `battery_after.at_ms`) give each rail's mean power, and
the load minus idle difference its energy per inference. A window the dump did not cover twice, or a
device without the HAL, gives no rail figure (the rails are then absent, or say why).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypedDict

from nnlite_tui.core.devices.adb_link import Link
from nnlite_tui.core.devices.base import DeviceError

SERVICE = "android.hardware.power.stats.IPowerStats/default"
START = re.compile(r"^=+ PowerStats HAL [\d.]+ energy meter =+$")
END = re.compile(r"^=+ End of PowerStats HAL [\d.]+ energy meter =+$")
CHANNEL = re.compile(r"^\s*(\S.*?)\s+(-?[\d.]+(?:e[+-]?\d+)?) mWs(?:\s+\(\s*-?[\d.]+\))?\s*$")
CLOCK = re.compile(r"^T=(\d+(?:\.\d+)?)$")
POLL_S = 1.0
MIN_SNAPSHOTS = 2  # per window
MIN_COVER = 0.5  # of a window's length, between its first and last snapshot


@dataclass(frozen=True)
class RailSnapshot:
    at_ms: float  # device wall clock, the midpoint of the dump
    energy_mws: dict[str, float]  # cumulative energy per channel


def parse_energy_meter(text: str) -> dict[str, float] | None:
    """Channel -> cumulative mWs from a dump; None when it has no energy meter section."""
    inside = False
    out: dict[str, float] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if START.match(line):
            inside, out = True, {}
            continue
        if inside and END.match(line):
            return out or None
        if inside:
            m = CHANNEL.match(raw)
            if m and m.group(1) != "Channel":
                out[m.group(1)] = float(m.group(2))
    return None


def snapshot_command() -> str:
    return f"echo T=$EPOCHREALTIME; dumpsys {SERVICE} 2>&1; echo T=$EPOCHREALTIME"


def parse_snapshot(text: str) -> RailSnapshot | None:
    clocks = [float(m.group(1)) for m in (CLOCK.match(line.strip()) for line in text.splitlines()) if m]
    rails = parse_energy_meter(text)
    if rails is None or len(clocks) != 2:
        return None  # no HAL, or a shell without $EPOCHREALTIME: no time to put the reading at
    return RailSnapshot(at_ms=(clocks[0] + clocks[1]) / 2 * 1000.0, energy_mws=rails)


_available: dict[str, bool] = {}


def available(link: Link, timeout: float) -> bool:
    """Whether this device's HAL can be read through adb (asked once per serial)."""
    if link.serial not in _available:
        try:
            _available[link.serial] = parse_snapshot(link.shell(snapshot_command(), timeout=timeout)) is not None
        except DeviceError:
            return False  # the link's trouble, not the HAL's: ask again next time
    return _available[link.serial]


class RailPoller(threading.Thread):
    """Reads the HAL's energy meter every POLL_S while the app's launch runs."""

    def __init__(self, link: Link, timeout: float, period_s: float = POLL_S):
        super().__init__(name=f"nnlite-rails-{link.serial}", daemon=True)
        self.link, self.timeout, self.period_s = link, timeout, period_s
        self.snapshots: list[RailSnapshot] = []
        self.errors: list[str] = []
        self._stop = threading.Event()

    def run(self) -> None:
        while not self._stop.is_set():
            try:
                snap = parse_snapshot(self.link.shell(snapshot_command(), timeout=self.timeout))
            except DeviceError as err:
                self.errors.append(str(err))
                snap = None
            if snap is not None:
                self.snapshots.append(snap)
            self._stop.wait(self.period_s)

    def stop(self) -> list[RailSnapshot]:
        self._stop.set()
        self.join(self.timeout)
        return list(self.snapshots)


def _window_power(snaps: list[RailSnapshot], start_ms: float, end_ms: float) -> tuple[dict[str, float] | None, str]:
    inside = [s for s in snaps if start_ms <= s.at_ms <= end_ms]
    span = inside[-1].at_ms - inside[0].at_ms if len(inside) >= 2 else 0.0
    if len(inside) < MIN_SNAPSHOTS or span < MIN_COVER * (end_ms - start_ms):
        return None, f"{len(inside)} HAL readings covering {span / 1000:.2f} s of the {(end_ms - start_ms) / 1000:.2f} s window"
    first, last = inside[0], inside[-1]
    rails = set(first.energy_mws) & set(last.energy_mws)
    # mWs over ms -> mW
    return {r: (last.energy_mws[r] - first.energy_mws[r]) * 1000.0 / span for r in sorted(rails)}, ""


class RailFigures(TypedDict):
    power_idle_mw: float
    power_load_mw: float
    power_delta_mw: float
    energy_per_inference_mj: float | None


class RailEnergy(TypedDict, total=False):
    """The energy block's `rails`: each rail's figures, or why there are none."""

    source: str
    readings: int
    rails: dict[str, RailFigures]
    valid: bool
    reason: str | None


def _number(part: object, key: str) -> float | None:
    """A number of the app's energy block (`part` a JSON object of it); None when absent or not a number."""
    value = part.get(key) if isinstance(part, dict) else None
    return None if isinstance(value, bool) or not isinstance(value, (int, float)) else value


def rail_energy(snaps: list[RailSnapshot], block: Mapping[str, object]) -> RailEnergy:
    """Per-rail mean power in each window and energy per inference (load minus idle) of an energy block."""
    before = _number(block.get("battery_before"), "at_ms")
    after = _number(block.get("battery_after"), "at_ms")
    idle_s, load = _number(block.get("idle"), "seconds"), block.get("load")
    load_s, inferences = _number(load, "seconds"), _number(load, "inferences")
    out: RailEnergy = {"source": f"dumpsys {SERVICE}", "readings": len(snaps), "rails": {}}
    if before is None or after is None or idle_s is None or load_s is None or not inferences:
        return {**out, "valid": False, "reason": "the energy block does not place its windows in time"}
    idle_w = (float(before), float(before) + idle_s * 1000.0)
    load_w = (float(after) - load_s * 1000.0, float(after))
    idle_p, why_idle = _window_power(snaps, *idle_w)
    load_p, why_load = _window_power(snaps, *load_w)
    if idle_p is None or load_p is None:
        why = "; ".join(f"{name} window: {w}" for name, w in (("idle", why_idle), ("load", why_load)) if w)
        return {**out, "valid": False, "reason": f"the Power Stats HAL did not cover the windows ({why})"}
    rails: dict[str, RailFigures] = {}
    for rail in sorted(set(idle_p) & set(load_p)):
        delta = load_p[rail] - idle_p[rail]
        rails[rail] = {"power_idle_mw": idle_p[rail], "power_load_mw": load_p[rail], "power_delta_mw": delta,
                       # A rail that drew no more under load has no energy per inference to show.
                       "energy_per_inference_mj": delta * load_s / inferences if delta > 0 else None}
    return {**out, "valid": True, "reason": None, "rails": rails}
