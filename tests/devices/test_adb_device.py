"""AdbDevice against simulated devices through the real adb server: discovery, install, benchmark."""

from __future__ import annotations

import pytest

from nnlite_tui.core.bench.settings import BenchSettings
from nnlite_tui.core.devices import adb
from nnlite_tui.core.devices.adb_app import MODELS_DIR, PACKAGE, REPORTS_DIR
from nnlite_tui.core.devices.base import DeviceError
from nnlite_tui.core.devices.registry import DeviceSpecError, resolve_devices
from nnlite_tui.core.events import DeviceState, RecordingReporter
from nnlite_tui.simdevice.apk import build_test_apk
from nnlite_tui.core.outcomes import Artifact

SMALL = BenchSettings(warmup=1, runs=5, min_seconds=0.0)


class Cfg:
    apk = None


def test_discovery_lists_attached_and_resolves_serials_and_all(sim_device_factory, monkeypatch):
    a = sim_device_factory()
    b = sim_device_factory(profile="emu-x86_64")
    listed = {d["serial"]: d["state"] for d in adb.attached()}
    assert listed == {a.serial: "device", b.serial: "device"}
    assert [d.serial for d in resolve_devices([a.serial], Cfg())] == [a.serial]
    assert sorted(d.serial for d in resolve_devices(["all"], Cfg())) == sorted([a.serial, b.serial])
    import nnlite_tui.core.devices.registry as registry

    monkeypatch.setattr(registry, "NAMED_DEVICE_WAIT_S", 2.0)
    with pytest.raises(DeviceSpecError) as err:
        resolve_devices(["R58M12345XYZ"], Cfg())
    assert "no such adb device" in str(err.value) and a.serial in str(err.value) and b.serial in str(err.value)
    row = adb.describe(b.serial, "device")
    assert row == {"serial": b.serial, "kind": "emulator", "state": "device", "model": "sdk_gphone64_x86_64",
                   "android": "13 (SDK 33)", "abi": "x86_64", "emulator": True}


def test_all_without_adb_devices_falls_back_to_the_host(adb_server, capsys, monkeypatch):
    import nnlite_tui.core.devices.registry as registry

    monkeypatch.setattr(registry, "ANY_DEVICE_WAIT_S", 1.0)
    devices = resolve_devices(["all"], Cfg())
    assert [(d.serial, d.kind) for d in devices] == [("host", "host")]
    assert "no adb device attached" in capsys.readouterr().err


def test_prepare_installs_once_and_upgrades_on_a_new_version_code(sim_device_factory, make_device, tmp_path,
                                                                  monkeypatch):
    sim = sim_device_factory()
    stale = [sim.host_path(f"{MODELS_DIR}/0123abcd.tflite"), sim.host_path(f"{REPORTS_DIR}/old-run.json")]
    for path in stale:  # what a host process that died mid-benchmark leaves behind
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"x")
    device = make_device(sim.serial)
    rec = RecordingReporter()
    device.prepare(rec)
    assert device.app["action"] == "installed" and sim.packages[PACKAGE].version_code == 1
    assert not any(p.exists() for p in stale)
    installed_at = sim.packages[PACKAGE].last_update
    device.prepare(rec)
    assert device.app["action"] == "up-to-date"
    assert sim.packages[PACKAGE].last_update == installed_at  # not reinstalled
    assert [e.state for e in rec.of(DeviceState)] == ["idle", "idle"]
    v2 = build_test_apk(str(tmp_path / "v2.apk"), version_code=2, version_name="0.2.0")
    monkeypatch.setenv("NNLITE_APK", v2)
    device.prepare(rec)
    assert device.app == {"action": "upgraded", "from": 1, "version_code": 2, "apk": v2}
    assert sim.packages[PACKAGE].version_code == 2


def test_no_apk_and_no_app_is_a_permanent_install_error(sim_device_factory, make_device, monkeypatch):
    monkeypatch.delenv("NNLITE_APK")
    monkeypatch.setattr("nnlite_tui.core.devices.adb_app.DEFAULT_APK", adb.adb_app.REPO / "no-such.apk")
    device = make_device(sim_device_factory().serial)
    with pytest.raises(DeviceError) as err:
        device.prepare(RecordingReporter())
    assert err.value.kind == "install" and err.value.transient is False
    assert "android-app/README.md" in str(err.value) and "assembleDebug" in str(err.value)


def test_install_failure_code_is_reported(sim_device_factory, make_device):
    sim = sim_device_factory(faults="install_fail=INSTALL_FAILED_INSUFFICIENT_STORAGE")
    with pytest.raises(DeviceError) as err:
        make_device(sim.serial).prepare(RecordingReporter())
    assert err.value.kind == "install" and not err.value.transient
    assert "INSTALL_FAILED_INSUFFICIENT_STORAGE" in str(err.value)


def test_benchmark_end_to_end_with_device_facts(sim_device_factory, make_device, tiny_tflite):
    sim = sim_device_factory(profile="emu-x86_64")
    device = make_device(sim.serial)
    device.prepare(RecordingReporter())
    info = device.info()
    assert info["kind"] == "emulator" and info["emulator"] is True
    assert set(info["emulator_signals"]) == {"ro.kernel.qemu=1", "ro.boot.qemu=1", "ro.hardware=ranchu",
                                             "ro.build.characteristics=emulator"}
    assert info["os_version"] == "Android 13 (SDK 33, build TE1A.220922.034)"
    assert (info["model"], info["manufacturer"], info["abi"], info["sdk"]) == ("sdk_gphone64_x86_64", "Google",
                                                                             "x86_64", 33)
    assert info["soc"] == "Intel Emulator" and info["board_platform"] == "goldfish_x86_64"
    assert info["cpu"]["cpu_cores"] == 2 and info["cpu"]["vendor_id"] == "GenuineIntel"
    assert info["cpu"]["max_freq_khz"] == {"cpu0": 2200000, "cpu1": 2200000}
    snap = device.snapshot()
    assert snap["memory"]["total_ram_kb"] == 2_030_172 and snap["memory"]["available_ram_kb"] > 0
    assert snap["thermal_c"]["battery"] == 26.0 and snap["max_temperature_c"] >= 40.0
    assert snap["battery"]["level"] == 100 and snap["battery"]["temperature_c"] >= 25.0
    assert set(snap["cpu_freq_khz"]) == {"cpu0", "cpu1"}

    result = device.benchmark(Artifact(str(tiny_tflite)), SMALL, "run42")
    assert result["valid"] is True and result["simulated"] is True
    assert result["run_id"].startswith("run42-") and result["run_id"] == result["launch_id"]
    assert result["stats"]["count"] >= 5 and len(result["samples_ns"]) == result["stats"]["count"]
    assert result["device_report_path"] == f"{REPORTS_DIR}/{result['run_id']}.json"
    assert result["device"]["model"] == "sdk_gphone64_x86_64" and result["device"]["sdk_int"] == 33
    assert "RESULT run_id=" + result["run_id"] in result["log"]
    assert result["cleanup_error"] is None
    assert not sim.host_path(result["device_report_path"]).exists()
    assert not any(sim.host_path(MODELS_DIR).glob("*.tflite"))


def test_invalid_model_is_a_result_not_a_device_fault(sim_device_factory, make_device, tmp_path):
    junk = tmp_path / "junk.tflite"
    junk.write_bytes(b"not a flatbuffer at all" * 10)
    device = make_device(sim_device_factory().serial)
    device.prepare(RecordingReporter())
    result = device.benchmark(Artifact(str(junk)), SMALL, "run")
    assert result["valid"] is False and result["error_stage"] == "load"


def test_the_report_is_looked_for_only_once_it_can_exist(sim_device_factory, make_device, tiny_tflite, monkeypatch):
    import time

    from nnlite_tui.core.devices.adb_link import Link

    sim = sim_device_factory()
    device = make_device(sim.serial)
    device.prepare(RecordingReporter())
    launched: list[float] = []
    looks: list[float] = []
    shell, exists = Link.shell, Link.exists

    def timed_shell(self, cmd, timeout=None):
        if isinstance(cmd, list) and cmd[:2] == ["am", "start"]:
            launched.append(time.monotonic())
        return shell(self, cmd, timeout)

    def timed_exists(self, remote):
        if remote.startswith(REPORTS_DIR):
            looks.append(time.monotonic())
        return exists(self, remote)

    monkeypatch.setattr(Link, "shell", timed_shell)
    monkeypatch.setattr(Link, "exists", timed_exists)
    settings = BenchSettings(warmup=1, runs=5, min_seconds=1.0, warmup_seconds=0.5)
    assert device.benchmark(Artifact(str(tiny_tflite)), settings, "r")["valid"]
    # No report can be there before 0.5 s of warm-up and 1 s of timing: no adb call asks for it earlier.
    assert launched and looks and looks[0] >= launched[0] + 1.5
