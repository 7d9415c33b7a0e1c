"""pytest plugin: a private adb server per session and simulated devices registered with it.

Registered by the conftest.py of the test directories that use it (tests/sim, tests/devices).

Fixtures
  adb_server          session: the adb binary shipped in the adbutils wheel, on a free port, with
                      ANDROID_ADB_SERVER_PORT, ADB_MDNS=0, ADB_EMU=0 and ADBUTILS_ADB_PATH set in
                      os.environ for the session; `adb kill-server` (and a check that its process
                      is gone) at the end.
  adb_client          an adbutils.AdbClient bound to that server.
  sim_device_factory  make(**SimConfig fields, faults="spec", boot_seconds=S, wait=..., server=AdbServer)
                      -> a started SimDevice. wait="ready" (default): booted, package manager up,
                      listed as `device`; "device"/"offline": listed so (maybe still booting);
                      None: just started. All are stopped after the test and gone from
                      `adb devices` before the next test starts.
  sim_device          one booted simulator (package manager ready, listed as `device`).
  test_apk            session: a tiny signed-looking APK of org.nnlite.bench (see apk.py).
  tiny_tflite         session: a tiny conv model converted with litert_torch (~5-25 s, once).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from nnlite_tui.simdevice.adb_server import ADB_ENV, TINY_MODEL, AdbServer, start_adb_server
from nnlite_tui.simdevice.boot import BootTimings
from nnlite_tui.simdevice.device import SimConfig, SimDevice
from nnlite_tui.simdevice.faults import FaultSpec


@pytest.fixture(scope="session")
def adb_server():
    server = start_adb_server()
    with pytest.MonkeyPatch.context() as mp:
        for key, value in {**ADB_ENV, "ANDROID_ADB_SERVER_PORT": str(server.port),
                           "ADBUTILS_ADB_PATH": server.adb}.items():
            mp.setenv(key, value)
        try:
            yield server
        finally:
            server.kill()


@pytest.fixture
def adb_client(adb_server):
    return adb_server.client()


@pytest.fixture
def sim_device_factory(adb_server):
    made: list[tuple[SimDevice, AdbServer]] = []

    def make(*, faults: str | FaultSpec | None = None, boot_seconds: float | None = None,
             wait: str | None = "ready", server: AdbServer | None = None, **config) -> SimDevice:
        server = server or adb_server
        if isinstance(faults, str) or faults is None:
            faults = FaultSpec.parse(faults)
        if boot_seconds is not None:
            config["boot"] = BootTimings.total(boot_seconds)
        sim = SimDevice(SimConfig(adb_server_port=server.port, faults=faults, **config))
        sim.start(wait_for=None)
        made.append((sim, server))
        if wait:
            if wait == "ready":
                sim.wait_phase("ready", timeout=60)
            if not sim.config.register:
                server.client().connect(f"127.0.0.1:{sim.port}", timeout=10)
            server.wait_state(sim.serial, "device" if wait == "ready" else wait, timeout=60)
        return sim

    yield make
    for sim, server in made:
        sim.stop()
        if not sim.config.register and server.alive():
            server.client().disconnect(f"127.0.0.1:{sim.port}")
    for sim, server in made:
        if server.alive():  # a test may have killed its own server
            server.wait_state(sim.serial, None, timeout=10)


@pytest.fixture
def sim_device(sim_device_factory) -> SimDevice:
    return sim_device_factory()


@pytest.fixture(scope="session")
def test_apk(tmp_path_factory) -> Path:
    from nnlite_tui.simdevice.apk import build_test_apk

    return Path(build_test_apk(str(tmp_path_factory.mktemp("apk") / "nnlite-bench-test.apk")))


@pytest.fixture(scope="session")
def tiny_tflite(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("model") / "tiny.tflite"
    done = subprocess.run([sys.executable, "-c", TINY_MODEL, str(path)], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "LITERT_TORCH_SHOW_PROGRESS": "n"})
    if done.returncode != 0:
        raise RuntimeError(f"converting the tiny test model failed:\n{done.stderr[-2000:]}")
    return path
