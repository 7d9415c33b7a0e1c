"""A phone's round waits until the device is back at the session's thermal baseline (the simulator warms up
while it benchmarks and cools with a 20 s time constant)."""

from __future__ import annotations

from nnlite_tui.core.bench.thermal_baseline import TOLERANCE_C, Baseline
from nnlite_tui.core.events import RecordingReporter


def test_a_warm_phone_waits_for_its_baseline_and_the_wait_is_recorded(sim_device, make_device, monkeypatch):
    monkeypatch.setenv("NNLITE_THERMAL_WAIT_S", "120")
    device = make_device(sim_device.serial)
    device.prepare(RecordingReporter())
    baseline = Baseline.of(device)
    assert baseline.figures["battery_c"] is not None and baseline.figures["max_c"] is not None
    assert baseline.figures["thermal_status"] is None or baseline.figures["thermal_status"] >= 0
    sim_device.hardware._heat = 2.0  # as after a long benchmark: 2 C warmer, cooling with a 20 s time constant
    waited = baseline.wait(device, poll_s=0.5)
    assert waited["at_call"]["battery_c"] > baseline.figures["battery_c"] + TOLERANCE_C  # warmer after the run
    assert waited["reached"] and waited["waited_s"] > 0
    assert waited["start"]["battery_c"] <= baseline.figures["battery_c"] + TOLERANCE_C
    # bounded: a limit shorter than the cooling ends the wait, unreached, and says so
    sim_device.hardware._heat = 3.0
    short = baseline.wait(device, limit_s=0.5, poll_s=0.2)
    assert not short["reached"] and short["waited_s"] < 5
