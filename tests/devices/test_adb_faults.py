"""Each simulator fault against AdbDevice: what kind of DeviceError it becomes, how fast, and that
the device works again afterwards (the runner's retry/recovery builds on exactly this)."""

from __future__ import annotations

import threading
import time

import pytest

from nnlite_tui.core.bench.settings import BenchSettings
from nnlite_tui.core.devices.adb_app import Timeouts
from nnlite_tui.core.devices.base import DeviceError
from nnlite_tui.core.events import DeviceState, RecordingReporter
from nnlite_tui.core.outcomes import Artifact
from tests.devices.conftest import HANG_TIMEOUTS

SMALL = BenchSettings(warmup=1, runs=5, min_seconds=0.0)


@pytest.fixture
def ready(sim_device_factory, make_device):
    def make(device_kw=None, **sim_kw):
        sim = sim_device_factory(**sim_kw)
        device = make_device(sim.serial, **(device_kw or {}))
        device.prepare(RecordingReporter())
        return sim, device
    return make


def test_truncated_report_is_a_transient_report_error(ready, tiny_tflite):
    sim, device = ready(faults="truncated_report=1")
    with pytest.raises(DeviceError) as err:
        device.benchmark(Artifact(str(tiny_tflite)), SMALL, "run")
    assert err.value.kind == "report" and err.value.transient and "unreadable report" in str(err.value)
    assert device.benchmark(Artifact(str(tiny_tflite)), SMALL, "run")["valid"] is True


def test_app_crash_is_seen_in_logcat_before_the_deadline(ready, tiny_tflite):
    sim, device = ready(faults="app_crash=1")
    t0 = time.monotonic()
    with pytest.raises(DeviceError) as err:
        device.benchmark(Artifact(str(tiny_tflite)), SMALL, "run")
    assert err.value.kind == "crash" and err.value.transient
    assert "simulated crash" in str(err.value)
    assert time.monotonic() - t0 < device.timeouts.report_s / 2  # not a wait for the report deadline
    assert device.benchmark(Artifact(str(tiny_tflite)), SMALL, "run")["valid"] is True


def test_hung_am_start_times_out_and_the_retry_works(ready, tiny_tflite):
    sim, device = ready(device_kw={"timeouts": Timeouts(**HANG_TIMEOUTS)})
    sim.hang_shell("am start")
    t0 = time.monotonic()
    with pytest.raises(DeviceError) as err:
        device.benchmark(Artifact(str(tiny_tflite)), SMALL, "run")
    assert err.value.kind == "timeout" and err.value.transient
    assert time.monotonic() - t0 < device.timeouts.launch_s + 8
    sim.clear_faults()
    assert device.benchmark(Artifact(str(tiny_tflite)), SMALL, "run")["valid"] is True


def test_connection_drop_mid_benchmark_then_reconnect(ready, tiny_tflite, adb_server):
    sim, device = ready()
    slow = BenchSettings(warmup=1, runs=5, min_seconds=3.0, max_runs=100_000_000)  # tiny invokes: ~3 s of them
    dropper = threading.Timer(1.2, sim.drop, args=(2.0,))
    dropper.start()
    with pytest.raises(DeviceError) as err:
        device.benchmark(Artifact(str(tiny_tflite)), slow, "run")
    dropper.join()
    assert err.value.transient and err.value.kind in ("offline", "adb", "timeout")
    rec = RecordingReporter()
    assert device.recover(1, rec) is True
    assert adb_server.state(sim.serial) == "device"
    assert device.benchmark(Artifact(str(tiny_tflite)), SMALL, "run")["valid"] is True


def test_after_restart_a_link_fault_of_a_device_that_comes_back_stays_retryable(ready, tiny_tflite):
    # Recovery reached its last level for this device (exhausted); then the device reboots under a
    # benchmark. It comes back, so the fault is retried, not turned into a failure of every queued model.
    sim, device = ready(device_kw={"reconnect_timeout_s": 20.0})
    device.recover(2, RecordingReporter())
    assert device.exhausted
    rebooter = threading.Timer(0.3, sim.reboot)
    rebooter.start()
    with pytest.raises(DeviceError) as err:
        device.benchmark(Artifact(str(tiny_tflite)), BenchSettings(warmup=1, runs=5, min_seconds=2.0, max_runs=100_000_000),
                         "run")
    rebooter.join()
    assert err.value.kind in ("offline", "adb") and err.value.transient, err.value
    assert "not retried" not in str(err.value)
    assert device.benchmark(Artifact(str(tiny_tflite)), SMALL, "run")["valid"] is True
    assert not device.exhausted


def test_after_restart_a_device_that_stays_away_fails_its_models_without_more_waiting(ready, tiny_tflite):
    sim, device = ready(device_kw={"reconnect_timeout_s": 1.0})
    device.recover(2, RecordingReporter())
    sim.stop()
    for _ in range(2):
        t0 = time.monotonic()
        with pytest.raises(DeviceError) as err:
            device.benchmark(Artifact(str(tiny_tflite)), SMALL, "run")
        assert not err.value.transient and "not retried" in str(err.value)
    assert time.monotonic() - t0 < 1.0  # the second model did not wait for the device again


def test_prepare_waits_for_a_booting_device_with_phase_events(sim_device_factory, make_device):
    sim = sim_device_factory(boot_seconds=4.0, wait="offline")
    device = make_device(sim.serial)
    rec = RecordingReporter()
    device.prepare(rec)
    states = rec.of(DeviceState)
    phases = [e.phase for e in states if e.phase]
    assert phases[0] in ("offline", "booting") and phases[-1] == "ready"
    assert "booted" in phases or "booting" in phases
    assert states[-1].state == "idle"
    elapsed = [e.boot_elapsed_s for e in states if e.phase]
    assert elapsed == sorted(elapsed) and elapsed[-1] > 0.5
    assert [e.boot_completed for e in states if e.phase == "ready"] == [True]


def test_boot_deadline_is_a_transient_offline_error(sim_device_factory, make_device):
    sim = sim_device_factory(boot_seconds=60.0, wait="offline")
    device = make_device(sim.serial, boot_timeout_s=1.5)
    with pytest.raises(DeviceError) as err:
        device.prepare(RecordingReporter())
    assert err.value.kind == "offline" and err.value.transient and "not ready after 1.5 s" in str(err.value)


def test_info_and_snapshot_of_a_vanished_device_say_so_instead_of_raising(ready, make_device, adb_server):
    sim, device = ready()
    fresh = make_device(sim.serial)  # never prepared: nothing cached
    serial = sim.serial
    sim.stop()
    adb_server.wait_state(serial, None)
    snap = device.snapshot()
    assert snap["max_temperature_c"] is None and snap["memory"]["available_ram_kb"] is None
    assert serial in snap["error"]
    assert device.info()["model"] == "sdk_gphone64_arm64"  # read while it was there
    info = fresh.info()
    assert info["serial"] == serial and info["model"] is None and info["emulator"] is None and info["error"]
