"""pytest plugin: a private adb server per session and simulated devices registered with it.

Use it from any conftest.py:  pytest_plugins = ["nnlite_tui.simdevice.fixtures"]

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

import importlib.resources
import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from nnlite_tui.simdevice.boot import BootTimings
from nnlite_tui.simdevice.device import SimConfig, SimDevice
from nnlite_tui.simdevice.faults import FaultSpec

ADB_ENV = {"ADB_MDNS": "0", "ADB_EMU": "0"}


def bundled_adb_path() -> str:
    """The adb that the adbutils wheel ships (not whatever `adb` is first on PATH)."""
    path = importlib.resources.files("adbutils.binaries") / "adb"
    return str(path)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _listener_pid(port: int) -> int | None:
    import psutil

    for conn in psutil.net_connections("tcp"):
        if conn.status == psutil.CONN_LISTEN and conn.laddr and conn.laddr.port == port and conn.pid:
            return conn.pid
    return None


def process_gone(pid: int, timeout: float = 0.0) -> bool:
    """True once pid has exited (a zombie awaiting its reaper counts as exited)."""
    import psutil

    deadline = time.monotonic() + timeout
    while True:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


@dataclass
class AdbServer:
    adb: str
    port: int = field(default_factory=free_port)
    pid: int | None = None

    @property
    def env(self) -> dict[str, str]:
        return {**os.environ, **ADB_ENV, "ANDROID_ADB_SERVER_PORT": str(self.port)}

    def run(self, *args: str, timeout: float = 60, input: bytes | None = None) -> subprocess.CompletedProcess:
        """Run this adb binary against this server; text output, never raises on exit status."""
        return subprocess.run([self.adb, *args], env=self.env, capture_output=True, timeout=timeout,
                              input=input.decode() if input else None, text=True)

    def client(self):
        import adbutils

        return adbutils.AdbClient(host="127.0.0.1", port=self.port)

    def start(self) -> "AdbServer":
        result = self.run("start-server", timeout=30)
        if result.returncode != 0:
            raise RuntimeError(f"adb start-server failed: {result.stderr}")
        self.pid = _listener_pid(self.port)
        return self

    def kill(self) -> None:
        self.run("kill-server", timeout=30)
        if self.pid is not None and not process_gone(self.pid, timeout=10):
            import psutil

            psutil.Process(self.pid).kill()  # our own server ignored kill-server: leave no orphan

    def alive(self) -> bool:
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=2).close()
        except OSError:
            return False
        return True

    def state(self, serial: str) -> str | None:
        for info in self.client().list():
            if info.serial == serial:
                return info.state
        return None

    def wait_state(self, serial: str, state: str | None, timeout: float = 20.0) -> None:
        """Until `serial` is listed in `state` (None: until it is no longer listed)."""
        deadline = time.monotonic() + timeout
        while (current := self.state(serial)) != state:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{serial} is {current!r}, expected {state!r} within {timeout}s")
            time.sleep(0.05)


def start_adb_server(adb: str | None = None) -> AdbServer:
    return AdbServer(adb or bundled_adb_path()).start()


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


TINY_MODEL = """
import sys, torch, litert_torch
torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1),
                        torch.nn.Flatten(), torch.nn.Linear(4, 2))
litert_torch.convert(m.eval(), (torch.randn(1, 3, 16, 16),)).export(sys.argv[1])
"""


@pytest.fixture(scope="session")
def tiny_tflite(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("model") / "tiny.tflite"
    done = subprocess.run([sys.executable, "-c", TINY_MODEL, str(path)], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "LITERT_TORCH_SHOW_PROGRESS": "n"})
    if done.returncode != 0:
        raise RuntimeError(f"converting the tiny test model failed:\n{done.stderr[-2000:]}")
    return path
