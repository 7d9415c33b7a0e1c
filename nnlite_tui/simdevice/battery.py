"""The simulated phone's battery: a fuel gauge whose counters follow the simulated load.

Spec (`nnlite sim-device --battery SPEC`, `SimConfig.battery`): comma-separated `key=value`:

  idle_ma=180        current the phone draws with the app idle (model loaded, nothing running)
  busy_ma=620        current while the app runs inferences back to back
  voltage_mv=3850    battery voltage (held; `voltage_now` and the broadcast's EXTRA_VOLTAGE)
  current_hz=10      how often CURRENT_NOW updates (the gauge holds its value in between, as real ones do)
  charge_hz=1        how often CHARGE_COUNTER updates (whole µAh, the integral of the true current)
  noise_ma=3         standard deviation of the gauge's error on each CURRENT_NOW update (seeded)
  sign=discharge_negative | discharge_positive   the vendor's sign of a discharging current
  counters=current+charge+voltage                which counters the device gives ('+'-separated)
  charging=1         on a USB charger (plugged 2, status 2): the counters describe the charger
  charger_ma=1500    what the charger pushes into the battery while charging
  frozen=1           the counters never change (a gauge that reports one stale value)
  level=100          battery level in %
  seed=0             the noise's seed

Each CURRENT_NOW update is the mean true current over the update period before it, plus the noise;
the true current is idle_ma, or busy_ma for the part of that period the app spent in its load window.
The simulated app's reports mark the energy block `source: simulated`.
"""

from __future__ import annotations

import random
import threading
from dataclasses import asdict, dataclass, fields
from typing import Any

from nnlite_tui.core.bench.energy_math import BatteryReading, BatteryState

SIGNS = ("discharge_negative", "discharge_positive")
COUNTERS = ("current", "charge", "voltage")
PLUGGED_USB, STATUS_CHARGING, STATUS_DISCHARGING = 2, 2, 3
SOURCES = {"current": "BatteryManager.BATTERY_PROPERTY_CURRENT_NOW (simulated)",
           "charge": "BatteryManager.BATTERY_PROPERTY_CHARGE_COUNTER (simulated)",
           "voltage": "/sys/class/power_supply/battery/voltage_now (simulated)"}


@dataclass(frozen=True)
class BatterySpec:
    idle_ma: float = 180.0
    busy_ma: float = 620.0
    voltage_mv: int = 3850
    current_hz: float = 10.0
    charge_hz: float = 1.0
    noise_ma: float = 3.0
    sign: str = "discharge_negative"
    counters: tuple[str, ...] = COUNTERS
    charging: bool = False
    charger_ma: float = 1500.0
    frozen: bool = False
    level: int = 100
    capacity_mah: float = 4500.0
    seed: int = 0

    def __post_init__(self) -> None:
        if self.sign not in SIGNS:
            raise ValueError(f"battery sign {self.sign!r} is not one of {', '.join(SIGNS)}")
        unknown = [c for c in self.counters if c not in COUNTERS]
        if unknown:
            raise ValueError(f"battery counters {unknown} are not among {', '.join(COUNTERS)}")
        if self.current_hz <= 0 or self.charge_hz <= 0:
            raise ValueError("battery update rates must be > 0")

    @classmethod
    def parse(cls, text: str) -> "BatterySpec":
        types = {f.name: f.type for f in fields(cls)}
        kw: dict[str, Any] = {}
        for item in filter(None, (p.strip() for p in (text or "").split(","))):
            key, sep, value = item.partition("=")
            key = key.strip()
            if not sep or key not in types:
                raise ValueError(f"battery spec: unknown item {item!r} (keys: {', '.join(types)})")
            kind = types[key]
            if key == "counters":
                kw[key] = tuple(c for c in value.split("+") if c)
            elif kind == "bool":
                kw[key] = value.strip().lower() in ("1", "true", "yes", "on")
            elif kind == "int":
                kw[key] = int(value)
            elif kind == "float":
                kw[key] = float(value)
            else:
                kw[key] = value.strip()
        return cls(**kw)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "counters": list(self.counters)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "BatterySpec":
        return cls(**{**d, "counters": tuple(d.get("counters", COUNTERS))})

    def broadcast(self, at_ms: int, temperature_c: float | None) -> BatteryState:
        """ACTION_BATTERY_CHANGED as the device would send it now."""
        return BatteryState(at_ms=at_ms, level_percent=float(self.level), temperature_c=temperature_c,
                            voltage_mv=self.voltage_mv, plugged=PLUGGED_USB if self.charging else 0,
                            status=STATUS_CHARGING if self.charging else STATUS_DISCHARGING)


class SimGauge:
    """The fuel gauge's counters over time (ns on the caller's clock, from `origin_ns`).

    `load(True/False)` marks the app's load window; reads are thread-safe (the sampler's thread)."""

    def __init__(self, spec: BatterySpec, origin_ns: int):
        self.spec = spec
        self.origin = origin_ns
        self._rng = random.Random(spec.seed)
        self._lock = threading.Lock()
        self._busy: list[list[int | None]] = []  # [start, end] of load windows
        self._cur_tick = 0  # last CURRENT_NOW update computed
        self._cur_value = self._gauge_ua(self._true_ma(0.0))
        self._charge_tick = 0
        self._charge_true_uah = spec.capacity_mah * 1000.0 * spec.level / 100.0
        self._charge_value = int(self._charge_true_uah)
        self._integrated_to = origin_ns

    def load(self, busy: bool, at_ns: int) -> None:
        with self._lock:
            if busy:
                self._busy.append([at_ns, None])
            elif self._busy and self._busy[-1][1] is None:
                self._busy[-1][1] = at_ns

    def _busy_ns(self, a: int, b: int) -> int:
        total = 0
        for start, end in self._busy:
            lo, hi = max(a, start), min(b, end if end is not None else b)
            total += max(0, hi - lo)
        return total

    def _true_ma(self, busy_fraction: float) -> float:
        """The battery's true discharge current (negative while the charger fills it)."""
        s = self.spec
        draw = s.idle_ma + (s.busy_ma - s.idle_ma) * busy_fraction
        return draw - s.charger_ma if s.charging else draw

    def _gauge_ua(self, discharge_ma: float) -> int:
        measured = discharge_ma + self._rng.gauss(0.0, self.spec.noise_ma)
        signed = -measured if self.spec.sign == "discharge_negative" else measured
        return int(round(signed * 1000.0))

    def _advance(self, t_ns: int) -> None:
        s = self.spec
        cur_period = int(1e9 / s.current_hz)
        while self.origin + (self._cur_tick + 1) * cur_period <= t_ns:
            a = self.origin + self._cur_tick * cur_period
            b = a + cur_period
            self._cur_tick += 1
            if not s.frozen:
                self._cur_value = self._gauge_ua(self._true_ma(self._busy_ns(a, b) / cur_period))
        charge_period = int(1e9 / s.charge_hz)
        while self.origin + (self._charge_tick + 1) * charge_period <= t_ns:
            a = self.origin + self._charge_tick * charge_period
            b = a + charge_period
            self._charge_tick += 1
            # µA over ns to µAh: the charge the true current moved in this period.
            ma = self._true_ma(self._busy_ns(a, b) / charge_period)
            self._charge_true_uah -= ma * 1000.0 * charge_period / 3.6e12
            if not s.frozen:
                self._charge_value = int(self._charge_true_uah)

    def read(self, t_ns: int) -> BatteryReading:
        with self._lock:
            self._advance(t_ns)
            have = self.spec.counters
            return BatteryReading(t_ns, self._cur_value if "current" in have else None,
                                  self._charge_value if "charge" in have else None,
                                  self.spec.voltage_mv * 1000 if "voltage" in have else None)

    def sources(self) -> dict[str, str | None]:
        have = self.spec.counters
        return {"current_now": SOURCES["current"] if "current" in have else None,
                "charge_counter": SOURCES["charge"] if "charge" in have else None,
                "voltage": SOURCES["voltage"] if "voltage" in have else None}
