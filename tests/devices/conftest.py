"""Fixtures for adb devices: a private adb server with simulated devices (the simdevice plugin),
the test APK of org.nnlite.bench as $NNLITE_APK, short deadlines, and a fake Android SDK."""

from __future__ import annotations

from pathlib import Path

import pytest

from nnlite_tui.core.devices.adb import AdbDevice
from nnlite_tui.core.devices.adb_app import Timeouts

PLUGIN = "tests.sim_plugin"


def pytest_configure(config):
    # Only a top-level conftest may declare pytest_plugins; register it here unless another dir did.
    if not config.pluginmanager.has_plugin(PLUGIN):
        config.pluginmanager.import_plugin(PLUGIN)

# Short deadlines: a crashed app must cost seconds here, not minutes. They stay generous enough for a
# loaded 2-core CI machine; tests of a hung `am start` shorten launch_s themselves (HANG_TIMEOUTS).
FAST_TIMEOUTS = dict(shell_s=15.0, launch_s=10.0, install_s=30.0, report_s=30.0, poll_s=0.1, logcat_every_s=0.4)
HANG_TIMEOUTS = {**FAST_TIMEOUTS, "launch_s": 3.0}


@pytest.fixture(autouse=True)
def apk_env(test_apk, monkeypatch, tmp_path) -> Path:
    monkeypatch.setenv("NNLITE_APK", str(test_apk))
    monkeypatch.setenv("NNLITE_STATE_DIR", str(tmp_path / "state"))
    return test_apk


@pytest.fixture
def make_device(adb_server):
    """AdbDevice(serial) with short deadlines; closed after the test."""
    made = []

    def make(serial: str, cls=AdbDevice, **kw) -> AdbDevice:
        kw.setdefault("timeouts", Timeouts(**FAST_TIMEOUTS))
        kw.setdefault("boot_timeout_s", 30.0)
        kw.setdefault("reconnect_timeout_s", 20.0)
        device = cls(serial, **kw)
        made.append(device)
        return device

    yield make
    for device in made:
        device.close()


@pytest.fixture
def fake_sdk(tmp_path, monkeypatch) -> Path:
    """ANDROID_HOME with a fake `emulator` (tests/devices/fake_emulator.py) that serves simulators."""
    from tests.devices.fake_emulator import install

    sdk = tmp_path / "sdk"
    install(sdk, avds=("Pixel_API_34",), boot_seconds=2.0)
    monkeypatch.setenv("ANDROID_HOME", str(sdk))
    monkeypatch.delenv("ANDROID_SDK_ROOT", raising=False)
    return sdk
