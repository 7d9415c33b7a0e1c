"""Energy per inference from battery counters (android-app/PROTOCOL.md section 9f), as the app's core
computes it (EnergyMath.kt, EnergyWindow.kt): the simulator's app computes its block with it, and the
host recomputes every block an app sends from the block's own samples and requires the same numbers.

Products in double, sums exactly rounded (math.fsum, as the core's Stats.fsum), in the protocol's
order, so the same readings give the same doubles on both sides.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TypedDict

MIN_READINGS = 10
MIN_UPDATES = 5
NS_PER_HOUR = 3.6e12
SETTLE_SECONDS = 1.0
SAMPLE_PERIOD_MS = 20
STATUS_CHARGING = 2  # BatteryManager.BATTERY_STATUS_CHARGING


class BatteryStateBlock(TypedDict):
    """A BatteryState in the energy block (`battery_before`, `battery_after`)."""

    at_ms: int
    level_percent: float | None
    temperature_c: float | None
    voltage_mv: int | None
    plugged: int | None
    status: int | None
    charging: bool | None


class WindowSamples(TypedDict):
    """A window's readings, column by column; `t_ns` from the window's first reading."""

    t_ns: list[int]
    current_ua: list[int | None]
    charge_uah: list[int | None]
    voltage_uv: list[int | None]


class WindowBlock(TypedDict):
    """One window in the energy block (`idle`; `load` adds its `inferences`), key for key as EnergyWindow.kt."""

    seconds: float
    readings: int
    rate_hz: float | None
    current_updates: int
    charge_updates: int
    mean_current_ua: float | None
    charge_rate_ua: float | None
    mean_voltage_uv: float | None
    voltage_from: str | None
    samples: WindowSamples


class LoadWindowBlock(WindowBlock):
    inferences: int


class EnergyBlock(TypedDict):
    """The report's `energy` block from battery counters, key for key as EnergyRun.block."""

    valid: bool
    reason: str | None
    reason_codes: list[str]
    source: str
    counter_sources: dict[str, str | None]
    counter: str | None
    sign_convention: str | None
    window_seconds: float
    settle_seconds: float
    sample_period_ms: int
    power_idle_mw: float | None
    power_load_mw: float | None
    idle_noise_mw: float | None
    power_delta_mw: float | None
    energy_per_inference_mj: float | None
    charging: bool | None
    battery_before: BatteryStateBlock
    battery_after: BatteryStateBlock
    idle: WindowBlock
    load: LoadWindowBlock


@dataclass(frozen=True)
class BatteryReading:
    """One reading of the counters at `t_ns`: current (µA, the vendor's sign), charge (µAh), voltage (µV);
    None where the device does not give that counter."""

    t_ns: int
    current_ua: int | None
    charge_uah: int | None
    voltage_uv: int | None


@dataclass(frozen=True)
class BatteryState:
    """The sticky ACTION_BATTERY_CHANGED broadcast at one moment (None where absent)."""

    at_ms: int
    level_percent: float | None
    temperature_c: float | None
    voltage_mv: int | None
    plugged: int | None
    status: int | None

    @property
    def charging(self) -> bool | None:
        """On a charger or charging (the counters then describe the charger); None when neither was read."""
        if self.plugged is None and self.status is None:
            return None
        if self.plugged is not None and self.plugged != 0:
            return True
        return self.status == STATUS_CHARGING

    def to_dict(self) -> BatteryStateBlock:
        return {"at_ms": self.at_ms, "level_percent": self.level_percent, "temperature_c": self.temperature_c,
                "voltage_mv": self.voltage_mv, "plugged": self.plugged, "status": self.status,
                "charging": self.charging}

    @classmethod
    def from_dict(cls, d: BatteryStateBlock) -> "BatteryState":
        return cls(d["at_ms"], d.get("level_percent"), d.get("temperature_c"), d.get("voltage_mv"),
                   d.get("plugged"), d.get("status"))


class CounterSeries:
    """The non-null values of one counter in a window, with their times (CounterSeries.kt)."""

    def __init__(self, times: Sequence[int], values: Sequence[int]):
        self.t, self.x = list(times), list(values)
        self.update_idx = [j for j in range(1, len(self.x)) if self.x[j] != self.x[j - 1]]

    @classmethod
    def of(cls, readings: Sequence[BatteryReading], attr: str) -> "CounterSeries":
        pts = [(r.t_ns, getattr(r, attr)) for r in readings if getattr(r, attr) is not None]
        return cls([p[0] for p in pts], [p[1] for p in pts])

    @property
    def count(self) -> int:
        return len(self.x)

    @property
    def updates(self) -> int:
        return len(self.update_idx)

    @property
    def _span(self) -> int:
        return self.t[-1] - self.t[0] if len(self.x) >= 2 else 0

    @property
    def hold_mean(self) -> float | None:
        if self._span <= 0:
            return None
        t, x = self.t, self.x
        return math.fsum(float(x[j]) * float(t[j + 1] - t[j]) for j in range(len(x) - 1)) / float(self._span)

    @property
    def hold_std(self) -> float | None:
        m = self.hold_mean
        if m is None:
            return None
        t, x = self.t, self.x
        return math.sqrt(math.fsum((float(x[j]) - m) * (float(x[j]) - m) * float(t[j + 1] - t[j])
                                   for j in range(len(x) - 1)) / float(self._span))

    @property
    def plain_mean(self) -> float | None:
        return math.fsum(float(v) for v in self.x) / len(self.x) if self.x else None

    @property
    def update_span_ns(self) -> int | None:
        if self.updates < 2:
            return None
        ns = self.t[self.update_idx[-1]] - self.t[self.update_idx[0]]
        return ns if ns > 0 else None

    @property
    def rate_per_hour(self) -> float | None:
        ns = self.update_span_ns
        if ns is None:
            return None
        return float(self.x[self.update_idx[-1]] - self.x[self.update_idx[0]]) * NS_PER_HOUR / float(ns)

    @property
    def smallest_step(self) -> int | None:
        return min((abs(self.x[j] - self.x[j - 1]) for j in self.update_idx), default=None)


@dataclass
class EnergyWindow:
    """One window (idle or load): its readings and its measured length."""

    readings: list[BatteryReading]
    duration_ns: int
    current: CounterSeries = field(init=False)
    charge: CounterSeries = field(init=False)
    voltage: CounterSeries = field(init=False)

    def __post_init__(self) -> None:
        self.current = CounterSeries.of(self.readings, "current_ua")
        self.charge = CounterSeries.of(self.readings, "charge_uah")
        self.voltage = CounterSeries.of(self.readings, "voltage_uv")

    @property
    def rate_hz(self) -> float | None:
        span = self.readings[-1].t_ns - self.readings[0].t_ns if len(self.readings) >= 2 else 0
        return (len(self.readings) - 1) * 1e9 / span if span > 0 else None

    def voltage_uv(self, states: Sequence[BatteryState]) -> tuple[float, str] | None:
        v = self.voltage.hold_mean
        if v is None:
            v = self.voltage.plain_mean
        if v is not None:
            return v, "readings"
        mv = [s.voltage_mv for s in states if s.voltage_mv is not None]
        return (math.fsum(m * 1000.0 for m in mv) / len(mv), "battery broadcast") if mv else None

    def to_dict(self, voltage: tuple[float, str] | None) -> WindowBlock:
        t0 = self.readings[0].t_ns if self.readings else 0
        return {"seconds": self.duration_ns / 1e9, "readings": len(self.readings), "rate_hz": self.rate_hz,
                "current_updates": self.current.updates, "charge_updates": self.charge.updates,
                "mean_current_ua": self.current.hold_mean, "charge_rate_ua": self.charge.rate_per_hour,
                "mean_voltage_uv": voltage[0] if voltage else None, "voltage_from": voltage[1] if voltage else None,
                "samples": {"t_ns": [r.t_ns - t0 for r in self.readings],
                            "current_ua": [r.current_ua for r in self.readings],
                            "charge_uah": [r.charge_uah for r in self.readings],
                            "voltage_uv": [r.voltage_uv for r in self.readings]}}

    @classmethod
    def from_dict(cls, w: WindowBlock) -> "EnergyWindow":
        """A report's window block back into readings (the ns offsets give the same differences)."""
        s = w.get("samples") or {}
        readings = [BatteryReading(t, i, q, v) for t, i, q, v in zip(s.get("t_ns") or [], s.get("current_ua") or [],
                                                                     s.get("charge_uah") or [],
                                                                     s.get("voltage_uv") or [])]
        return cls(readings, round(float(w.get("seconds") or 0.0) * 1e9))


@dataclass
class EnergyResult:
    reasons: list[tuple[str, str]]
    counter: str | None
    sign_convention: str | None
    power_idle_mw: float | None
    power_load_mw: float | None
    idle_noise_mw: float | None
    energy_per_inference_mj: float | None
    idle_voltage: tuple[float, str] | None
    load_voltage: tuple[float, str] | None
    charging: bool | None

    @property
    def valid(self) -> bool:
        return not self.reasons

    @property
    def reason_codes(self) -> list[str]:
        return list(dict.fromkeys(code for code, _ in self.reasons))

    @property
    def power_delta_mw(self) -> float | None:
        if not self.valid or self.power_load_mw is None or self.power_idle_mw is None:
            return None
        return self.power_load_mw - self.power_idle_mw


def kotlin_double(x: float) -> str:
    """A double as Kotlin's toString prints it (the reason sentences quote the app's numbers): plain
    decimals in [1e-3, 1e7), else `1.25E7`; both with the shortest digits that round-trip."""
    from decimal import Decimal

    if math.isnan(x) or math.isinf(x):
        return "NaN" if math.isnan(x) else ("Infinity" if x > 0 else "-Infinity")
    if x == 0 or 1e-3 <= abs(x) < 1e7:
        text = repr(float(x))  # never an exponent in this range
        return text if "." in text else text + ".0"
    sign, digits, exp = Decimal(repr(float(x))).as_tuple()
    assert isinstance(exp, int)  # a finite number (NaN and the infinities are written above)
    text = "".join(map(str, digits)).rstrip("0") or "0"
    power = exp + len(digits) - 1
    return f"{'-' if sign else ''}{text[0]}.{text[1:] or '0'}E{power}"


def evaluate(idle: EnergyWindow, load: EnergyWindow, inferences: int, before: BatteryState, after: BatteryState,
             read_error: str | None = None) -> EnergyResult:
    """EnergyMath.evaluate: every reason that applies, in the protocol's order, and the figures it allows."""
    reasons: list[tuple[str, str]] = []
    windows = (("idle", idle), ("load", load))
    if read_error:
        reasons.append(("counter_read_failed", f"reading the battery counters failed: {read_error}"))
    states = (before, after)
    flags = [s.charging for s in states]
    charging = True if True in flags else None if None in flags else False
    if charging is True:
        reasons.append(("charging", f"the device was on a charger or charging (plugged {before.plugged}/"
                                    f"{after.plugged}, status {before.status}/{after.status} before/after): the "
                                    "counters describe the charger, not the load"))
    elif charging is None:
        reasons.append(("charging_unknown", "whether the device was on a charger could not be read"))
    if all(w.current.count == 0 and w.charge.count == 0 for _, w in windows):
        reasons.append(("no_counter", "neither CURRENT_NOW nor CHARGE_COUNTER could be read"))
    for name, w in windows:
        if len(w.readings) < MIN_READINGS:
            reasons.append(("too_few_samples", f"only {len(w.readings)} readings in the {name} window "
                                               f"(at least {MIN_READINGS} needed)"))
    if all(w.current.updates >= 1 for _, w in windows):
        counter: str | None = "current_now"
    elif all(w.charge.updates >= 1 for _, w in windows):
        counter = "charge_counter"
    else:
        counter = None
    if counter is None and not any(code == "no_counter" for code, _ in reasons):
        reasons.append(("counter_constant", "no counter changed in both windows (CURRENT_NOW updates "
                                            f"{idle.current.updates} idle, {load.current.updates} load; CHARGE_COUNTER "
                                            f"{idle.charge.updates} idle, {load.charge.updates} load)"))
    if counter is not None:
        for name, w in windows:
            updates = w.current.updates if counter == "current_now" else w.charge.updates
            if updates < MIN_UPDATES:
                reasons.append(("too_few_samples", f"{counter} changed only {updates} times in the {name} window "
                                                   f"(at least {MIN_UPDATES} needed)"))
    idle_v, load_v = idle.voltage_uv(states), load.voltage_uv(states)
    if idle_v is None or load_v is None:
        reasons.append(("no_voltage", "no battery voltage could be read"))
    sign = d_idle = d_load = noise_ua = None
    if counter == "current_now":
        mi, ml = idle.current.hold_mean, load.current.hold_mean
        if mi is not None and ml is not None:
            s = -1.0 if mi < 0 and ml < 0 else 1.0 if mi > 0 and ml > 0 else None
            if s is None:
                reasons.append(("sign_undetermined", f"CURRENT_NOW averaged {kotlin_double(mi)} µA idle and "
                                                     f"{kotlin_double(ml)} µA under load: not one sign, so which way "
                                                     "is discharge cannot be told"))
            else:
                # On a charger the shared sign is the charger's, not a vendor's discharge convention.
                sign = None if charging is not False else "discharge_negative" if s < 0 else "discharge_positive"
                d_idle, d_load, noise_ua = s * mi, s * ml, idle.current.hold_std
    elif counter == "charge_counter":
        ri, rl = idle.charge.rate_per_hour, load.charge.rate_per_hour
        if ri is not None and rl is not None:
            # A charge counter is a level: it falls while the battery discharges, whatever the vendor.
            for name, r in (("idle", ri), ("load", rl)):
                if r >= 0:
                    reasons.append(("sign_undetermined", f"CHARGE_COUNTER did not fall during the {name} window "
                                                         f"({kotlin_double(r)} µAh per hour)"))
            d_idle, d_load = -ri, -rl
            step, span = idle.charge.smallest_step, idle.charge.update_span_ns
            assert step is not None and span is not None  # a rate per hour has two updates at least
            noise_ua = float(step) * NS_PER_HOUR / float(span)
    p_idle: float | None = None
    p_load: float | None = None
    noise: float | None = None
    energy: float | None = None
    if not reasons and d_idle is not None and d_load is not None and idle_v is not None and load_v is not None:
        assert noise_ua is not None  # set with d_idle and d_load
        p_idle, p_load = d_idle * idle_v[0] / 1e9, d_load * load_v[0] / 1e9
        noise = noise_ua * idle_v[0] / 1e9
        if p_load - p_idle <= noise:
            reasons.append(("noisy_idle", f"the load drew {kotlin_double(p_load - p_idle)} mW more than idle, not "
                                          f"more than the idle window's noise of {kotlin_double(noise)} mW"))
        else:
            energy = (p_load - p_idle) * (load.duration_ns / 1e9) / inferences
    return EnergyResult(reasons, counter, sign, p_idle, p_load, noise, energy, idle_v, load_v, charging)


def block(r: EnergyResult, origin: str, sources: dict[str, str | None], window_seconds: float, idle: EnergyWindow,
          load: EnergyWindow, inferences: int, before: BatteryState, after: BatteryState) -> EnergyBlock:
    """The report's `energy` block, key for key as EnergyRun.block."""
    return {"valid": r.valid, "reason": "; ".join(text for _, text in r.reasons) or None,
            "reason_codes": r.reason_codes, "source": origin, "counter_sources": dict(sources),
            "counter": r.counter, "sign_convention": r.sign_convention, "window_seconds": window_seconds,
            "settle_seconds": SETTLE_SECONDS, "sample_period_ms": SAMPLE_PERIOD_MS,
            "power_idle_mw": r.power_idle_mw, "power_load_mw": r.power_load_mw, "idle_noise_mw": r.idle_noise_mw,
            "power_delta_mw": r.power_delta_mw, "energy_per_inference_mj": r.energy_per_inference_mj,
            "charging": r.charging, "battery_before": before.to_dict(), "battery_after": after.to_dict(),
            "idle": idle.to_dict(r.idle_voltage), "load": {**load.to_dict(r.load_voltage), "inferences": inferences}}


def log_line(run_id: str, b: EnergyBlock) -> str:
    """The app's ENERGY logcat line (PROTOCOL.md section 8)."""
    def text(v: object) -> str:
        return "null" if v is None else ("true" if v else "false") if isinstance(v, bool) else \
            kotlin_double(v) if isinstance(v, float) else str(v)

    return (f"ENERGY run_id={run_id} valid={text(b['valid'])} counter={text(b['counter'])} "
            f"energy_per_inference_mj={text(b['energy_per_inference_mj'])} reason={text(b['reason'])}")
