"""The link to adb: one adbutils client with timeouts on every call, and the adb server we may own.

Every call here has a deadline (a hung `shell` or `sync` must never hang a device worker) and
every adbutils/socket failure comes out as a DeviceError whose kind says what broke:
"timeout" (no answer in time), "offline" (the server does not see the device, or it is offline),
"adb" (the server or the transport failed). All of them are transient.

The adb server: we use the one on $ANDROID_ADB_SERVER_PORT (default 5037). If none answers, we
start it with adbutils' own adb binary and remember that we did; only a server we started is
ever restarted (recovery level 2).
"""

from __future__ import annotations

import os
import socket
import struct
import subprocess
import threading
import time
from contextlib import contextmanager

from nnlite_tui.core.devices.adb_port import server_port

server_port()  # a bad $ANDROID_ADB_SERVER_PORT is AdbPortError naming it, before adbutils' int() reads it

import adbutils  # noqa: E402
from adbutils.sync import Sync  # noqa: E402

from nnlite_tui.core.devices.base import DeviceError  # noqa: E402
from nnlite_tui.core.devices.facts import Transport  # noqa: E402

SHELL_TIMEOUT_S = 30.0
SYNC_TIMEOUT_S = 60.0
_owned_servers: dict[int, int | None] = {}  # port -> pid of the adb server this process started
_server_lock = threading.Lock()


def adb_binary() -> str:
    """adbutils' own adb (or $ADBUTILS_ADB_PATH), never whatever `adb` is first on PATH."""
    env = os.environ.get("ADBUTILS_ADB_PATH")
    if env:
        return env
    import importlib.resources

    return str(importlib.resources.files("adbutils.binaries") / "adb")


def server_alive(port: int | None = None) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port or server_port()), timeout=2).close()
    except OSError:
        return False
    return True


def not_adb(port: int, timeout: float = 3.0) -> str | None:
    """None when an adb server answers on `port` (OKAY or FAIL to host:version), else what happened."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
            sock.sendall(b"000chost:version")
            answer = sock.recv(4)
    except TimeoutError:
        return f"no answer to an adb request in {timeout:g} s"
    except OSError as exc:
        return f"the connection failed: {exc.strerror or exc}"
    return None if answer in (b"OKAY", b"FAIL") else f"it answered {answer!r}"


def run_adb(*args: str, timeout: float = 30.0) -> subprocess.CompletedProcess:
    """The adb CLI against our server; text output; a timeout is a DeviceError, not a hang."""
    try:
        return subprocess.run([adb_binary(), *args], capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:
        raise DeviceError(f"adb {' '.join(args)}: no answer in {timeout:g} s", kind="timeout") from exc
    except OSError as exc:
        raise DeviceError(f"adb {' '.join(args)}: {exc}", kind="adb") from exc


def _listener_pid(port: int) -> int | None:
    import psutil

    try:
        conns = psutil.net_connections("tcp")
    except psutil.AccessDenied:
        return None
    for conn in conns:
        if conn.status == psutil.CONN_LISTEN and conn.laddr and conn.laddr.port == port and conn.pid:
            return conn.pid
    return None


def server_age() -> float | None:
    """Seconds since the adb server on our port started; None if unknown (none, or not ours to see)."""
    import psutil

    pid = _listener_pid(server_port())
    if pid is None:
        return None
    try:
        return time.time() - psutil.Process(pid).create_time()
    except psutil.Error:
        return None


def ensure_server() -> bool:
    """Make sure an adb server answers; True if this process started it (and so may restart it)."""
    port = server_port()
    with _server_lock:
        if server_alive(port):
            problem = not_adb(port) if port not in _owned_servers else None
            if problem:
                raise DeviceError(f"what listens on port {port} is not an adb server ({problem}); set "
                                  "ANDROID_ADB_SERVER_PORT to the adb server's port (adb's default is 5037)",
                                  kind="adb", transient=False)
            return port in _owned_servers
        result = run_adb("start-server", timeout=30)
        if result.returncode != 0 or not server_alive(port):
            raise DeviceError(f"could not start the adb server on port {port}: "
                              f"{(result.stderr or result.stdout).strip()}", kind="adb", transient=False)
        _owned_servers[port] = _listener_pid(port)
        return True


def started_here() -> tuple[int, int | None] | None:
    """(port, pid) of the adb server this process started, if it did."""
    port = server_port()
    return (port, _owned_servers[port]) if port in _owned_servers else None


def owns_server() -> bool:
    return server_port() in _owned_servers


def restart_server() -> bool:
    """Restart the adb server, only if we started it; False (nothing done) otherwise."""
    port = server_port()
    with _server_lock:
        if port not in _owned_servers:
            return False
        pid = _owned_servers[port]
        run_adb("kill-server", timeout=30)
        deadline = time.monotonic() + 10
        while server_alive(port) and time.monotonic() < deadline:
            time.sleep(0.1)
        if pid is not None and server_alive(port) and _listener_pid(port) == pid:
            import psutil

            psutil.Process(pid).kill()  # our own server ignored kill-server
        result = run_adb("start-server", timeout=30)
        if result.returncode != 0:
            raise DeviceError(f"adb start-server failed: {result.stderr.strip()}", kind="adb")
        _owned_servers[port] = _listener_pid(port)
        return True


def stop_owned_server() -> None:
    """`adb kill-server` for a server this process started (for tools that clean up after themselves)."""
    port = server_port()
    with _server_lock:
        if _owned_servers.pop(port, "none") != "none":
            run_adb("kill-server", timeout=30)


def _fault(exc: BaseException, what: str) -> DeviceError:
    text = str(exc) or type(exc).__name__
    if isinstance(exc, adbutils.AdbError) and text.startswith("Unknown data"):  # adbutils: not "OKAY"/"FAIL"
        return DeviceError(f"{what}: what listens on port {server_port()} is not an adb server (it answered "
                           f"{text[len('Unknown data: '):][:40]}); set ANDROID_ADB_SERVER_PORT to the adb "
                           f"server's port (adb's default is 5037)", kind="adb", transient=False)
    if isinstance(exc, (adbutils.AdbTimeout, socket.timeout, TimeoutError)):
        return DeviceError(f"{what}: no answer in time ({text})", kind="timeout")
    low = text.lower()
    if "not found" in low or "offline" in low or "no devices" in low or "unauthorized" in low:
        return DeviceError(f"{what}: {text}", kind="offline")
    return DeviceError(f"{what}: {type(exc).__name__}: {text}", kind="adb")


def _faults() -> tuple[type[BaseException], ...]:
    # adbutils signals a broken transport with AdbError, raw socket errors, short reads (struct.error)
    # and `assert` on protocol words; all of them mean the link failed, not the model.
    return (adbutils.AdbError, OSError, struct.error, AssertionError, ValueError, EOFError)


class Link:
    """adb calls for one serial, each with a timeout, each failure a DeviceError."""

    def __init__(self, serial: str, shell_timeout_s: float = SHELL_TIMEOUT_S, sync_timeout_s: float = SYNC_TIMEOUT_S):
        self.serial = serial
        self.shell_timeout_s = shell_timeout_s
        self.sync_timeout_s = sync_timeout_s
        self.client = adbutils.AdbClient(host="127.0.0.1", port=server_port(), socket_timeout=shell_timeout_s)

    def device(self):
        return self.client.device(self.serial)

    def state(self) -> str | None:
        """The server's state for this serial (device, offline, unauthorized, ...) or None if not listed."""
        for info in list_devices(self.client):
            if info["serial"] == self.serial:
                return info["state"]
        return None

    def shell(self, cmd: str | list[str], timeout: float | None = None) -> str:
        """stdout+stderr of a shell command (its exit status is not reliable on old devices: read the text)."""
        t = timeout or self.shell_timeout_s
        try:
            result = self.device().shell2(cmd, timeout=t)
        except _faults() as exc:
            raise _fault(exc, f"{self.serial}: shell {_short(cmd)}") from exc
        return result.output

    @contextmanager
    def _sync(self, what: str):
        try:
            yield _TimedSync(self.device(), self.sync_timeout_s)
        except _faults() as exc:
            raise _fault(exc, f"{self.serial}: {what}") from exc

    def push(self, local: str, remote: str, mode: int = 0o644) -> int:
        with self._sync(f"push {remote}") as sync:
            return sync.push(local, remote, mode=mode, check=True)

    def exists(self, remote: str) -> bool:
        with self._sync(f"stat {remote}") as sync:
            return sync.stat(remote).mtime is not None

    def read_bytes(self, remote: str) -> bytes:
        with self._sync(f"pull {remote}") as sync:
            return sync.read_bytes(remote)


def list_devices(client=None) -> list[Transport]:
    """Every transport the adb server lists, with its state (device, offline, unauthorized, ...)."""
    client = client or adbutils.AdbClient(host="127.0.0.1", port=server_port(), socket_timeout=15)
    try:
        return [{"serial": i.serial, "state": i.state} for i in client.list()]
    except _faults() as exc:
        raise _fault(exc, "adb devices") from exc


def _short(cmd: str | list[str]) -> str:
    text = cmd if isinstance(cmd, str) else " ".join(cmd)
    return text if len(text) <= 80 else text[:77] + "..."


class _TimedSync(Sync):
    """adbutils' Sync opens its transport without a timeout; this one has one."""

    def __init__(self, device, timeout: float):
        super().__init__(device)
        self._timeout = timeout

    @contextmanager
    def _prepare_sync(self, path: str, cmd: str):
        with self._device.open_transport(timeout=self._timeout) as c:
            c.send_command("sync:")
            c.check_okay()
            data = path.encode("utf-8")
            c.conn.sendall(cmd.encode("utf-8") + struct.pack("<I", len(data)) + data)
            yield c
