"""Boot phases and every injected fault, as a client of the real adb server sees them."""

from __future__ import annotations

import json
import time

import adbutils
import pytest

from nnlite_tui.simdevice.app import COMPONENT
from nnlite_tui.simdevice.boot import BootTimings


def _observe(adb_server, serial: str) -> tuple:
    state = adb_server.state(serial)
    if state != "device":
        return (state,)
    d = adb_server.client().device(serial)
    boot = d.shell("getprop sys.boot_completed", timeout=5)
    pm_ok = d.shell2("pm list packages android", timeout=5, v2=True).returncode == 0
    return (state, boot, pm_ok)


def test_boot_phases_in_order(sim_device_factory, adb_server):
    sim = sim_device_factory(boot_seconds=2.5, wait=None)
    seen: list[tuple] = []
    deadline = time.monotonic() + 15
    while not seen or seen[-1] != ("device", "1", True):
        assert time.monotonic() < deadline, seen
        obs = _observe(adb_server, sim.serial)
        if not seen or seen[-1] != obs:
            seen.append(obs)
        time.sleep(0.03)
    expected = [(None,), ("offline",), ("device", "", False), ("device", "1", False), ("device", "1", True)]
    assert [o for o in expected if o in seen] == seen[-len([o for o in expected if o in seen]):]
    assert seen[0] == (None,) and ("offline",) in seen and ("device", "", False) in seen
    assert ("device", "1", False) in seen  # boot_completed before the package manager answers


def test_pm_before_ready_fails_like_early_boot(sim_device_factory, adb_server):
    sim = sim_device_factory(boot=BootTimings(booting=30), wait="device")  # listed, still booting
    r = adb_server.client().device(sim.serial).shell2("pm list packages", v2=True)
    assert r.returncode == 20 and "Can't find service: package" in r.stderr


def test_drop_connection(sim_device_factory, adb_server):
    sim = sim_device_factory()
    d = adb_server.client().device(sim.serial)
    sim.drop(duration=1.5)
    adb_server.wait_state(sim.serial, None, timeout=5)
    with pytest.raises(adbutils.AdbError, match="not found"):
        d.shell("echo hi")
    adb_server.wait_state(sim.serial, "device", timeout=10)
    assert d.shell("echo back") == "back"


def test_drop_from_spec(sim_device_factory, adb_server):
    sim = sim_device_factory(faults="drop_after=1s,drop_for=1s")
    adb_server.wait_state(sim.serial, None, timeout=5)
    adb_server.wait_state(sim.serial, "device", timeout=10)


def test_go_offline(sim_device_factory, adb_server):
    sim = sim_device_factory()
    d = adb_server.client().device(sim.serial)
    sim.go_offline(duration=2.0)
    adb_server.wait_state(sim.serial, "offline", timeout=5)
    with pytest.raises(adbutils.AdbError, match="offline"):
        d.shell("echo hi")
    adb_server.wait_state(sim.serial, "device", timeout=10)
    assert d.shell("echo back") == "back"


def test_hang_shell_times_out_and_other_commands_still_work(sim_device_factory, adb_server):
    sim = sim_device_factory(faults="hang_shell=am start")
    d = adb_server.client().device(sim.serial)
    t0 = time.monotonic()
    with pytest.raises(adbutils.AdbTimeout):
        d.shell(f"am start -W -n {COMPONENT}", timeout=1)
    assert time.monotonic() - t0 < 5
    assert d.shell("echo alive", timeout=5) == "alive"
    assert d.shell("am force-stop org.nnlite.bench; echo $?", timeout=5) == "0"  # only the prefix hangs
    deadline = time.monotonic() + 5
    while sim.faults.hung:  # the client's close reached the device: the hung command was cancelled
        assert time.monotonic() < deadline
        time.sleep(0.05)


def test_install_failure(sim_device_factory, adb_server, test_apk):
    sim = sim_device_factory(faults="install_fail=INSTALL_FAILED_INSUFFICIENT_STORAGE")
    d = adb_server.client().device(sim.serial)
    with pytest.raises(adbutils.AdbInstallError) as err:
        d.install(str(test_apk), nolaunch=True, silent=True)
    assert err.value.reason == "INSTALL_FAILED_INSUFFICIENT_STORAGE"
    cli = adb_server.run("-s", sim.serial, "install", str(test_apk))
    assert cli.returncode == 1 and "Failure [INSTALL_FAILED_INSUFFICIENT_STORAGE]" in cli.stderr + cli.stdout
    sim.fail_installs(None)
    d.install(str(test_apk), nolaunch=True, silent=True)
    assert "org.nnlite.bench" in d.list_packages()


def _start_bench(d, model: str, report: str, run_id: str, *extra: str) -> str:
    return d.shell(["am", "start", "-S", "-W", "-n", COMPONENT, "--es", "model_path", model,
                    "--es", "report_path", report, "--es", "run_id", run_id, *extra], timeout=30)


def _installed_with_model(sim, adb_server, test_apk, tiny_tflite):
    d = adb_server.client().device(sim.serial)
    d.install(str(test_apk), nolaunch=True, silent=True)
    d.sync.push(tiny_tflite, "/data/local/tmp/nnlite/tiny.tflite")
    return d


REPORT = "/sdcard/Android/data/org.nnlite.bench/files/reports/r.json"
FAST = ("--ei", "warmup", "1", "--ei", "runs", "5", "--ef", "min_seconds", "0")


def test_app_crash_writes_no_report(sim_device_factory, adb_server, test_apk, tiny_tflite):
    sim = sim_device_factory(faults="app_crash=1")
    d = _installed_with_model(sim, adb_server, test_apk, tiny_tflite)
    out = _start_bench(d, "/data/local/tmp/nnlite/tiny.tflite", REPORT, "c1", *FAST)
    assert "Status: ok" in out  # the launch itself succeeds; the app dies afterwards
    deadline = time.monotonic() + 20
    while "FATAL EXCEPTION" not in d.shell("logcat -d -s AndroidRuntime"):
        assert time.monotonic() < deadline, "the app did not crash"
        time.sleep(0.1)
    assert d.sync.stat(REPORT).mtime is None
    _start_bench(d, "/data/local/tmp/nnlite/tiny.tflite", REPORT, "c2", *FAST)  # the next launch is fine
    deadline = time.monotonic() + 20
    while d.sync.stat(REPORT).mtime is None:
        assert time.monotonic() < deadline
        time.sleep(0.1)
    assert json.loads(d.sync.read_text(REPORT))["run_id"] == "c2"


def test_truncated_report(sim_device_factory, adb_server, test_apk, tiny_tflite):
    sim = sim_device_factory(faults="truncated_report=1")
    d = _installed_with_model(sim, adb_server, test_apk, tiny_tflite)
    _start_bench(d, "/data/local/tmp/nnlite/tiny.tflite", REPORT, "t1", *FAST)
    deadline = time.monotonic() + 20
    while d.sync.stat(REPORT).mtime is None:
        assert time.monotonic() < deadline
        time.sleep(0.1)
    text = d.sync.read_text(REPORT)
    assert text.startswith("{") and '"run_id": "t1"' in text
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)


def test_reboot_via_adb_and_api(sim_device_factory, adb_server):
    sim = sim_device_factory(boot_seconds=1.0)
    d = adb_server.client().device(sim.serial)
    d.sync.push(b"kept", "/data/local/tmp/kept.txt")
    assert adb_server.run("-s", sim.serial, "reboot").returncode == 0
    adb_server.wait_state(sim.serial, None, timeout=5)
    adb_server.wait_state(sim.serial, "device", timeout=10)
    deadline = time.monotonic() + 10
    while d.shell("getprop sys.boot_completed") != "1":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert d.sync.read_text("/data/local/tmp/kept.txt") == "kept"  # /data survives a reboot
    sim.reboot()
    adb_server.wait_state(sim.serial, None, timeout=5)
    adb_server.wait_state(sim.serial, "device", timeout=10)


@pytest.mark.parametrize("spec, gone_state", [("offline_after=1s,offline_for=1.5s", "offline"),
                                               ("reboot_after=1s", None)])
def test_timed_faults_from_spec(sim_device_factory, adb_server, spec, gone_state):
    sim = sim_device_factory(faults=spec)
    adb_server.wait_state(sim.serial, gone_state, timeout=5)
    adb_server.wait_state(sim.serial, "device", timeout=10)
    sim.wait_phase("ready", timeout=10)
