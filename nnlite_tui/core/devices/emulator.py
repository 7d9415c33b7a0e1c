"""Android emulators: find the SDK and its AVDs, start an AVD on an explicit port, watch it boot,
stop it (`adb -s <serial> emu kill`, then the PID we started, never another).

`--device emulator:<AVD>` gives an EmulatorDevice: prepare() starts the AVD (or adopts one that
already runs it, which we then never stop), recover(2) restarts an emulator we started, close()
stops it. `nnlite emulator start` runs it detached and remembers its PID in a small state file,
so that `nnlite emulator stop` can fall back to that PID and to no other.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import TypedDict, cast

from nnlite_tui.core.devices import adb_link
from nnlite_tui.core.devices.adb import AdbDevice
from nnlite_tui.core.devices.base import DeviceError, DeviceSpecError
from nnlite_tui.core.devices.facts import EmulatorRow
from nnlite_tui.core.events import DeviceState, Recovery, Reporter

FLAGS = ("-no-window", "-no-audio", "-no-snapshot-save", "-no-boot-anim")
BOOT_TIMEOUT_S = 600.0
FIRST_PORT, LAST_PORT = 5554, 5682
SYSTEM_IMAGE = "system-images;android-34;google_apis;x86_64"


class EmulatorError(Exception):
    """The SDK, the emulator binary or the AVD is missing; the message says what to install."""


def sdk_root() -> Path | None:
    for var in ("ANDROID_HOME", "ANDROID_SDK_ROOT"):
        value = os.environ.get(var)
        if value and Path(value).is_dir():
            return Path(value)
    return None


def emulator_binary() -> str:
    root = sdk_root()
    if root is not None and (root / "emulator" / "emulator").is_file():
        return str(root / "emulator" / "emulator")
    found = shutil.which("emulator")
    if found:
        return found
    where = ", ".join(f"{v}={os.environ.get(v) or '(unset)'}" for v in ("ANDROID_HOME", "ANDROID_SDK_ROOT"))
    what = f"{root}/emulator/emulator does not exist" if root else "no Android SDK found"
    raise EmulatorError(
        f"Android emulator not found: {what} ({where}; no `emulator` on PATH). Install the Android SDK "
        f"command-line tools, set ANDROID_HOME to the SDK, then install the emulator and a system image: "
        f"`sdkmanager \"emulator\" \"platform-tools\" \"{SYSTEM_IMAGE}\"`, and create an AVD: "
        f"`avdmanager create avd -n Pixel_API_34 -k \"{SYSTEM_IMAGE}\" -d pixel_7`.")


def list_avds(binary: str | None = None) -> list[str]:
    binary = binary or emulator_binary()
    try:
        out = subprocess.run([binary, "-list-avds"], capture_output=True, text=True, timeout=30,
                             stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise EmulatorError(f"{binary} -list-avds failed: {exc}") from exc
    return [line.strip() for line in out.stdout.splitlines()
            if line.strip() and " " not in line.strip() and not line.startswith(("INFO", "WARNING", "ERROR"))]


def check_avd(avd: str) -> str:
    """The emulator binary, once the AVD is known to exist; EmulatorError saying what is missing."""
    binary = emulator_binary()
    avds = list_avds(binary)
    if avd not in avds:
        raise EmulatorError(f"AVD {avd!r} not found (available: {', '.join(avds) or 'none'}). Create it with "
                            f"`avdmanager create avd -n {avd} -k \"{SYSTEM_IMAGE}\"` (install the image first: "
                            f"`sdkmanager \"{SYSTEM_IMAGE}\"`).")
    return binary


def avd_name(serial: str) -> str | None:
    """The AVD an emulator runs (`adb -s <serial> emu avd name`); None if its console does not say."""
    try:
        out = adb_link.run_adb("-s", serial, "emu", "avd", "name", timeout=10)
    except DeviceError:
        return None
    lines = [line.strip() for line in out.stdout.splitlines() if line.strip() and line.strip() != "OK"]
    return lines[0] if out.returncode == 0 and lines else None


def running() -> list[EmulatorRow]:
    """Emulators the adb server lists: serial, state, AVD, and our PID if nnlite started it."""
    rows: list[EmulatorRow] = []
    for d in adb_link.list_devices():
        if d["serial"].startswith("emulator-"):
            state = load_state(d["serial"])
            pid = state.get("pid") if state is not None else None
            ours = pid is not None and _alive(pid, None)
            console = avd_name(d["serial"]) if d["state"] == "device" else None
            started = state.get("avd") if state is not None and ours else None
            rows.append({**d, "avd": console or started, "avd_started": started, "pid": pid if ours else None})
    return rows


def _port_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port(listed: set[str]) -> int:
    for port in range(FIRST_PORT, LAST_PORT, 2):
        if f"emulator-{port}" not in listed and _port_free(port) and _port_free(port + 1):
            return port
    raise EmulatorError(f"no free emulator port pair between {FIRST_PORT} and {LAST_PORT}")


# ----- the process we start -----
def state_dir() -> Path:
    base = os.environ.get("NNLITE_STATE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "nnlite")
    return Path(base) / "emulators"


class EmulatorState(TypedDict, total=False):
    """The state file of an emulator `nnlite emulator start` left running (remember())."""

    serial: str
    avd: str
    pid: int
    started_at: float


def load_state(serial: str) -> EmulatorState | None:
    path = state_dir() / f"{serial}.json"
    try:
        state = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None
    return cast(EmulatorState, state) if isinstance(state, dict) else None  # our own file, as remember() wrote it


def start_process(avd: str, port: int, binary: str, log_path: Path | None = None,
                  extra_args: tuple[str, ...] = ()) -> subprocess.Popen:
    """Start `emulator -avd AVD -port PORT` headless in its own session; output to log_path."""
    log_path = log_path or state_dir() / f"emulator-{port}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as log:
        proc = subprocess.Popen([binary, "-avd", avd, "-port", str(port), *FLAGS, *extra_args],
                                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
    proc.log_path = log_path  # type: ignore[attr-defined]
    return proc


def remember(serial: str, avd: str, pid: int) -> None:
    path = state_dir() / f"{serial}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    state: EmulatorState = {"serial": serial, "avd": avd, "pid": pid, "started_at": time.time()}
    path.write_text(json.dumps(state))


def forget(serial: str) -> None:
    (state_dir() / f"{serial}.json").unlink(missing_ok=True)


def stop(serial: str, pid: int | None, proc: subprocess.Popen | None = None, timeout_s: float = 30.0) -> str:
    """`adb emu kill`, then wait; kill the PID we started (checked to be an emulator) if it stays."""
    try:
        adb_link.run_adb("-s", serial, "emu", "kill", timeout=15)
    except DeviceError:
        pass  # no console answer: the PID fallback below still applies
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and _alive(pid, proc):
        time.sleep(0.2)
    how = "emu kill"
    if _alive(pid, proc) and pid is not None and _is_emulator(pid):
        os.killpg(pid, signal.SIGKILL)  # our own session leader: the emulator and its helpers
        how = f"killed pid {pid}"
    if proc is not None:
        proc.wait(timeout=10)
    forget(serial)
    return how


def _alive(pid: int | None, proc: subprocess.Popen | None) -> bool:
    if proc is not None:
        return proc.poll() is None
    if pid is None:
        return False
    import psutil

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _is_emulator(pid: int) -> bool:
    import psutil

    try:
        return any("-avd" == arg for arg in psutil.Process(pid).cmdline())
    except psutil.Error:
        return False


class EmulatorDevice(AdbDevice):
    """An AVD as a device: started in prepare() unless it already runs; stopped at close() if ours."""

    def __init__(self, serial: str, avd: str, binary: str | None, adopted: bool = False, **kw):
        kw.setdefault("boot_timeout_s", BOOT_TIMEOUT_S)
        super().__init__(serial, kind="emulator", **kw)
        self.avd = avd
        self.binary = binary
        self.adopted = adopted  # it was running before us: never stopped or restarted by us
        self.proc: subprocess.Popen | None = None
        self.started_at: float | None = None

    @classmethod
    def for_avd(cls, avd: str, apk: str | None = None, **kw) -> "EmulatorDevice":
        try:
            binary = check_avd(avd)
            adb_link.ensure_server()
            rows = running()
            for r in rows:
                if avd in (r["avd"], r["avd_started"]):
                    return cls(r["serial"], avd, binary, adopted=True, apk=apk, **kw)
            port = free_port({d["serial"] for d in adb_link.list_devices()})
        except (EmulatorError, DeviceError) as exc:
            raise DeviceSpecError(f"--device emulator:{avd}: {exc}") from exc
        return cls(f"emulator-{port}", avd, binary, apk=apk, **kw)

    @property
    def port(self) -> int:
        return int(self.serial.split("-", 1)[1])

    def start(self, reporter: Reporter | None) -> None:
        if self.binary is None:
            raise EmulatorError(f"{self.serial}: no emulator binary known to start AVD {self.avd} with")
        self.proc = start_process(self.avd, self.port, self.binary)
        self.started_at = time.monotonic()
        remember(self.serial, self.avd, self.proc.pid)
        if reporter is not None:
            reporter.emit(DeviceState(serial=self.serial, state="booting", kind="emulator", phase="starting",
                                      boot_elapsed_s=0.0, boot_completed=False,
                                      detail=f"emulator -avd {self.avd} -port {self.port} (pid {self.proc.pid})"))

    def prepare(self, reporter: Reporter) -> None:
        if not self.adopted and (self.proc is None or self.proc.poll() is not None) and \
                self.link.state() is None:
            self.start(reporter)
        self.wait_ready(reporter, self.boot_timeout_s, started=self.started_at)
        super().prepare(reporter)

    def _alive(self) -> str | None:
        if self.proc is not None and self.proc.poll() is not None:
            tail = Path(self.proc.log_path).read_text(errors="replace").strip().splitlines()[-3:]  # type: ignore
            return f"the emulator exited with code {self.proc.returncode}: {' | '.join(tail)}"
        return None

    def recover(self, level: int, reporter: Reporter) -> bool:
        if level < 2 or self.proc is None:
            return super().recover(level, reporter)
        reporter.emit(Recovery(action="restart-emulator", target=self.serial,
                               detail=f"restarting AVD {self.avd} (pid {self.proc.pid}, started by us)"))
        self.exhausted = True
        stop(self.serial, self.proc.pid, self.proc)
        self.start(reporter)
        self.wait_ready(reporter, self.boot_timeout_s, started=self.started_at)
        self.app = None
        return True

    def close(self) -> None:
        super().close()
        if self.proc is not None:
            stop(self.serial, self.proc.pid, self.proc)
            self.proc = None
