"""Emulators: the missing-SDK message for real, and start/boot/stop through a fake `emulator` binary
that serves a simulator on the port it is given (tests/devices/fake_emulator.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from nnlite_tui.cli import main
from nnlite_tui.core.bench.settings import BenchSettings
from nnlite_tui.core.devices import emulator
from nnlite_tui.core.devices.registry import DeviceSpecError, resolve_devices
from nnlite_tui.core.events import DeviceState, RecordingReporter, Recovery
from nnlite_tui.simdevice.adb_server import process_gone
from nnlite_tui.core.outcomes import Artifact


class Cfg:
    apk = None


def no_sdk_env(tmp_path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("ANDROID_HOME", "ANDROID_SDK_ROOT")}
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + "/usr/bin:/bin"
    return env


def test_missing_sdk_names_what_to_install(tmp_path):
    env = no_sdk_env(tmp_path)
    if any(os.access(os.path.join(d, "emulator"), os.X_OK) for d in env["PATH"].split(os.pathsep)):
        pytest.skip("an `emulator` binary is on this machine's PATH")
    out = subprocess.run([sys.executable, "-m", "nnlite_tui", "emulator", "start", "Pixel_API_34"], env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 5  # nothing could be done (exit_codes.py)
    assert "Android emulator not found: no Android SDK found" in out.stderr
    assert "ANDROID_HOME" in out.stderr and 'sdkmanager "emulator" "platform-tools"' in out.stderr
    assert "avdmanager create avd -n Pixel_API_34" in out.stderr


def test_unknown_avd_is_a_device_spec_error(fake_sdk, adb_server):
    with pytest.raises(DeviceSpecError) as err:
        resolve_devices(["emulator:Nexus_5"], Cfg())
    assert "AVD 'Nexus_5' not found (available: Pixel_API_34)" in str(err.value)
    assert "avdmanager create avd -n Nexus_5" in str(err.value)


def test_emulator_device_starts_boots_benchmarks_and_stops_its_own_process(fake_sdk, adb_server, make_device,
                                                                            tiny_tflite):
    [found] = resolve_devices(["emulator:Pixel_API_34"], Cfg())
    device = make_device(found.serial, cls=emulator.EmulatorDevice, avd="Pixel_API_34",
                         binary=found.binary)
    rec = RecordingReporter()
    device.prepare(rec)
    pid = device.proc.pid
    argv = (fake_sdk / "emulator" / "argv.log").read_text()
    assert f"-avd Pixel_API_34 -port {device.port} -no-window -no-audio -no-snapshot-save" in argv
    phases = [e.phase for e in rec.of(DeviceState) if e.serial == device.serial and e.phase]
    assert phases[0] == "starting" and phases[-1] == "ready" and "booting" in phases
    assert rec.of(DeviceState)[-1].state == "idle"
    assert emulator.load_state(device.serial)["pid"] == pid
    assert device.benchmark(Artifact(str(tiny_tflite)), BenchSettings(warmup=1, runs=3, min_seconds=0), "run")["valid"]
    # Level 2 recovery restarts an emulator we started: a new process, booted again.
    assert device.recover(2, rec) is True
    assert device.proc.pid != pid and process_gone(pid, timeout=5)
    assert ("restart-emulator", device.serial) in [(e.action, e.target) for e in rec.of(Recovery)]
    new_pid = device.proc.pid
    device.close()
    assert process_gone(new_pid, timeout=10)
    adb_server.wait_state(device.serial, None, timeout=15)
    assert emulator.load_state(device.serial) is None


def test_cli_start_list_stop(fake_sdk, adb_server):
    runner = CliRunner()
    started = runner.invoke(main, ["emulator", "start", "Pixel_API_34", "--timeout", "60"])
    assert started.exit_code == 0, started.output
    serial = started.stdout.strip().splitlines()[-1]
    assert serial.startswith("emulator-")
    pid = emulator.load_state(serial)["pid"]
    try:
        listed = runner.invoke(main, ["emulator", "list"])
        assert "AVDs: Pixel_API_34" in listed.output
        assert f"{serial}  device" in listed.output and f"started by nnlite (pid {pid})" in listed.output
        devices = runner.invoke(main, ["devices", "--json"])
        rows = {r["serial"]: r for r in json.loads(devices.stdout)["devices"]}
        assert rows[serial]["kind"] == "emulator" and rows["host"]["kind"] == "host"
    finally:
        stopped = runner.invoke(main, ["emulator", "stop", "Pixel_API_34"])
    assert stopped.exit_code == 0, stopped.output
    assert f"stopped {serial}" in stopped.output
    assert process_gone(pid, timeout=10)
    adb_server.wait_state(serial, None, timeout=15)
