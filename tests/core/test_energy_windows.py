"""The energy windows without a device: the simulated battery's gauge over the real sampling loop
(energy_run.measure), checked against the power the gauge was configured with, and the host's RAPL
arithmetic over a hand-made powercap tree whose counter a thread advances (with wraparound)."""

from __future__ import annotations

import time

import pytest

from nnlite_tui.core.bench.energy_run import measure
from nnlite_tui.core.devices import host_energy
from nnlite_tui.simdevice.battery import BatterySpec, SimGauge
from tests.devices.fake_powercap import Meter, powercap_tree


class GaugeSource:
    def __init__(self, spec: BatterySpec):
        self.spec, self.gauge = spec, SimGauge(spec, time.monotonic_ns())

    def sources(self):
        return self.gauge.sources()

    def read(self, t_ns):
        return self.gauge.read(t_ns)

    def state(self):
        return self.spec.broadcast(int(time.time() * 1000), 30.0)

    def load(self, busy):
        self.gauge.load(busy, time.monotonic_ns())


def _windows(spec: BatterySpec, seconds: float = 1.5) -> dict:
    source = GaugeSource(spec)
    return measure(lambda: time.sleep(0.002), seconds, source, "simulated", sleep=time.sleep,
                   on_load=source.load)


def _nominal_delta_mw(spec: BatterySpec) -> float:
    return (spec.busy_ma - spec.idle_ma) * spec.voltage_mv / 1000.0


def test_the_gauge_gives_the_configured_power_in_both_sign_conventions():
    for sign in ("discharge_negative", "discharge_positive"):
        spec = BatterySpec(sign=sign, noise_ma=2.0, current_hz=20.0)
        b = _windows(spec)
        assert b["valid"] is True and b["counter"] == "current_now" and b["sign_convention"] == sign
        assert (b["idle"]["mean_current_ua"] < 0) == (sign == "discharge_negative")
        v = spec.voltage_mv / 1000.0
        # Idle: the configured current, within a few standard errors of the gauge's noise.
        assert b["power_idle_mw"] == pytest.approx(spec.idle_ma * v, abs=4 * 2.0 * v)
        # Load: the gauge lags by up to one update period (1/20 s of the 1.5 s window) at the window's start.
        lag = 1 / (spec.current_hz * b["load"]["seconds"])
        assert _nominal_delta_mw(spec) * (1 - 2 * lag) - 10 <= b["power_delta_mw"] <= _nominal_delta_mw(spec) + 10
        per_inference = b["power_delta_mw"] * b["load"]["seconds"] / b["load"]["inferences"]
        assert b["energy_per_inference_mj"] == pytest.approx(per_inference)
        nominal = _nominal_delta_mw(spec) * b["load"]["seconds"] / b["load"]["inferences"]
        assert nominal * (1 - 2 * lag) - 0.01 <= b["energy_per_inference_mj"] <= nominal * 1.01


def test_charge_counter_only_charging_frozen_and_noisy_are_invalid_for_their_reason():
    charge_only = _windows(BatterySpec(counters=("charge", "voltage"), charge_hz=10.0), 1.5)
    assert charge_only["counter"] == "charge_counter" and charge_only["sign_convention"] is None
    assert charge_only["valid"] is True and charge_only["power_delta_mw"] == pytest.approx(
        _nominal_delta_mw(BatterySpec()), rel=0.25)
    charging = _windows(BatterySpec(charging=True))
    assert charging["valid"] is False and "charging" in charging["reason_codes"]
    assert charging["energy_per_inference_mj"] is None and charging["power_idle_mw"] is None
    assert charging["battery_before"]["plugged"] == 2 and charging["battery_before"]["status"] == 2
    frozen = _windows(BatterySpec(frozen=True))
    assert frozen["valid"] is False and frozen["reason_codes"] == ["counter_constant"]
    assert frozen["energy_per_inference_mj"] is None
    noisy = _windows(BatterySpec(noise_ma=2000.0))
    assert noisy["valid"] is False and noisy["reason_codes"] == ["noisy_idle"]
    assert noisy["energy_per_inference_mj"] is None and noisy["power_idle_mw"] is not None
    slow = _windows(BatterySpec(current_hz=2.0, counters=("current", "voltage")), 1.5)
    assert slow["valid"] is False and slow["reason_codes"] == ["too_few_samples"]


def test_battery_spec_parses_like_the_fault_spec():
    spec = BatterySpec.parse("charging=1,sign=discharge_positive,current_hz=4,noise_ma=10,counters=charge+voltage")
    assert (spec.charging, spec.sign, spec.current_hz, spec.noise_ma, spec.counters) == \
        (True, "discharge_positive", 4.0, 10.0, ("charge", "voltage"))
    with pytest.raises(ValueError, match="unknown item"):
        BatterySpec.parse("chargng=1")
    with pytest.raises(ValueError, match="sign"):
        BatterySpec.parse("sign=up")


# ----- RAPL on the host -----
def test_rapl_energy_per_inference_from_a_counter_that_wraps(tmp_path):
    max_range = 3_000_000  # µJ: at 12 W the counter wraps four times a second
    path = powercap_tree(tmp_path, max_range)
    counters, why = host_energy.find_counters(tmp_path)
    assert why is None and [c.name for c in counters] == ["package-0"] and counters[0].max_range_uj == max_range
    meter = Meter(path, max_range, idle_w=2.0, busy_w=12.0)
    meter.start()

    def invoke():
        meter.busy.set()
        time.sleep(0.005)

    try:
        block = host_energy.measure(invoke, 1.5, counters)
    finally:
        meter.stop.set()
        meter.join()
    assert meter.wraps >= 2
    assert block["valid"] is True, block["reason"]
    assert block["source"] == "host" and block["counter"] == "rapl"
    # Hand computation: 2 W idle, 12 W while busy (the busy flag stays set once the load starts).
    assert block["power_idle_mw"] == pytest.approx(2000.0, rel=0.05)
    assert block["power_load_mw"] == pytest.approx(12000.0, rel=0.05)
    load = block["load"]
    expected = 10_000.0 * load["seconds"] / load["inferences"]  # mW * s / n = mJ per inference
    assert block["energy_per_inference_mj"] == pytest.approx(expected, rel=0.08)


def test_wraparound_increments_by_hand():
    assert host_energy.increments([[990], [30], [500]], [1000]) == [40, 470]
    assert host_energy.increments([[5, 10], [7, 2]], [100, 20]) == [2 + 12]


def test_no_counter_no_figure(tmp_path):
    counters, why = host_energy.find_counters(tmp_path / "absent")
    assert counters == [] and why.startswith("no energy counter on this host")
    hook, block = host_energy.windows_or_reason(10.0, tmp_path / "absent")
    assert hook is None and block["valid"] is False and block["energy_per_inference_mj"] is None
    assert block["reason"].startswith("no energy counter on this host")
    # On this machine: the real /sys/class/powercap, whatever it has, either gives a readable package
    # counter or says why not.
    counters, why = host_energy.find_counters()
    assert bool(counters) != bool(why)
