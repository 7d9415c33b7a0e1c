"""A private adb server for the simulator: the adb binary shipped in the adbutils wheel on a free port.

Used by the test suite's simulator fixtures (tests/sim_plugin.py) and by the scripts in bench/.
"""

from __future__ import annotations

import importlib.resources
import os
import socket
import subprocess
import time
from dataclasses import dataclass, field


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


# A tiny conv model, converted with litert_torch by `python -c TINY_MODEL OUT.tflite`.
TINY_MODEL = """
import sys, torch, litert_torch
torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1),
                        torch.nn.Flatten(), torch.nn.Linear(4, 2))
litert_torch.convert(m.eval(), (torch.randn(1, 3, 16, 16),)).export(sys.argv[1])
"""
