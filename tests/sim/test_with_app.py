"""`nnlite sim-device --with-app`: a device with the benchmark app already installed, so that a run
needs no APK; end to end through the real adb server."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nnlite_tui.core.devices import adb_app
from nnlite_tui.core.devices.adb_link import Link
from nnlite_tui.simdevice.apk import build_test_apk

REPO = Path(__file__).resolve().parents[2]


def _gradle_version() -> tuple[int, str]:
    gradle = (REPO / "android-app" / "app" / "build.gradle.kts").read_text()
    return int(re.search(r"versionCode = (\d+)", gradle).group(1)), re.search(r'versionName = "([^"]+)"', gradle).group(1)


def test_the_preinstalled_app_is_the_one_nnlite_expects_and_install_faults_do_not_touch_it(
        sim_device_factory, adb_server, tmp_path, monkeypatch):
    sim = sim_device_factory(with_app=True, faults="install_fail=INSTALL_FAILED_INSUFFICIENT_STORAGE")
    code, name = _gradle_version()
    s = ("-s", sim.serial)
    assert adb_server.run(*s, "shell", "pm list packages org.nnlite").stdout.split() == ["package:org.nnlite.bench"]
    dumpsys = adb_server.run(*s, "shell", "dumpsys package org.nnlite.bench").stdout
    assert f"versionCode={code} " in dumpsys and f"versionName={name}\n" in dumpsys

    link, timeouts = Link(sim.serial), adb_app.Timeouts(shell_s=15)
    monkeypatch.delenv("NNLITE_APK", raising=False)
    monkeypatch.setattr(adb_app, "DEFAULT_APK", tmp_path / "not-built.apk")  # as on a machine without the SDK
    assert adb_app.ensure_app(link, None, timeouts)["action"] == "kept"  # no APK anywhere: the app is used
    installed = sim.host_path(sim.packages["org.nnlite.bench"].path)
    same = tmp_path / "same.apk"
    same.write_bytes(installed.read_bytes())
    assert adb_app.ensure_app(link, str(same), timeouts)["action"] == "up-to-date"  # installs would fail: none tried
    newer = build_test_apk(str(tmp_path / "newer.apk"), version_code=code + 1)
    with pytest.raises(adb_app.DeviceError, match="INSTALL_FAILED_INSUFFICIENT_STORAGE"):
        adb_app.ensure_app(link, newer, timeouts)  # a different version is installed, and the fault shows


def test_a_plain_simulator_has_no_benchmark_app(sim_device, adb_server):
    listed = adb_server.run("-s", sim_device.serial, "shell", "pm list packages org.nnlite").stdout
    assert "org.nnlite.bench" not in listed


def _listed(adb_server) -> dict[str, str]:
    return {i.serial: i.state for i in adb_server.client().list()}


@pytest.mark.slow
def test_sim_device_with_app_and_a_run_started_together_benchmark_on_the_simulator(adb_server, tmp_path):
    """The README's newcomer commands, started at the same moment, without any APK."""
    env = {k: v for k, v in os.environ.items() if k != "NNLITE_APK"}
    env["PYTHONPATH"] = str(REPO)
    before = set(_listed(adb_server))
    sim = subprocess.Popen([sys.executable, "-m", "nnlite_tui", "sim-device", "--with-app"], cwd=REPO, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        run = subprocess.run([sys.executable, "-m", "nnlite_tui", "run", "sample_models", "--device", "all",
                              "--out", str(tmp_path / "demo"), "--include", "mnist_lenet", "--headless",
                              "--runs", "5", "--min-seconds", "0.2", "--warmup", "1"],
                             cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, run.stdout + run.stderr
        serial = next(s for s in _listed(adb_server) if s not in before)
        assert f"1 model(s) on {serial}" in run.stdout + run.stderr, run.stdout + run.stderr
        report = json.loads((tmp_path / "demo" / "reports" / f"mnist_lenet__{serial}__xnnpack.json").read_text())
        assert report["valid"] is True and report["emulator"] is True
        code, name = _gradle_version()
        assert report["benchmark"]["simulated"] is True and report["benchmark"]["app_version"] == name
        assert report["device"]["app"] == {"action": "kept", "version_code": code, "apk": None}
        assert report["duration"] > 0 and report["os_version"].startswith("Android 14")
    finally:
        os.killpg(sim.pid, signal.SIGTERM)  # the simulator we started, and only it
        out, _ = sim.communicate(timeout=30)
    assert f"with org.nnlite.bench {_gradle_version()[1]} installed" in out and "sim-device stopped" in out
    deadline = time.monotonic() + 30
    while set(_listed(adb_server)) - before and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not set(_listed(adb_server)) - before, "the stopped simulator is still listed"
