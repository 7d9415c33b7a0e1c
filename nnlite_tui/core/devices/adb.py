"""Android devices and emulators over adb (adbutils): discovery, the per-device Device, recovery.

`resolve(name, cfg)` turns one `--device` value into devices: a serial, `all` (every attached adb
device, including ones still booting; the host if there is none) or `emulator:<AVD>` (an
EmulatorDevice that starts the AVD in prepare()).

An AdbDevice waits for boot in prepare() (with phases as events), installs or upgrades the
benchmark app when its versionCode differs from the APK's, and runs one benchmark per call by the
android-app protocol. Device faults are DeviceErrors (transient unless retrying cannot help);
recover(1) reconnects, recover(2) restarts the adb server if we started it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from nnlite_tui.core.outcomes import Artifact
from nnlite_tui.core.bench.settings import BenchSettings
from nnlite_tui.core.devices import adb_analytics, adb_app, adb_boot, adb_link
from nnlite_tui.core.devices.adb_app import Timeouts
from nnlite_tui.core.devices.adb_link import Link
from nnlite_tui.core.devices.base import BenchBlock, DeviceError
from nnlite_tui.core.devices.facts import AppStatus, DeviceInfo, DeviceRow, DeviceSnapshot, Transport
from nnlite_tui.core.events import DeviceState, Recovery, Reporter
from nnlite_tui.core.progress import phase_line

BOOT_TIMEOUT_S = 300.0
RECONNECT_TIMEOUT_S = 60.0
LINK_KINDS = ("offline", "adb")  # the device could not be reached, as opposed to its app failing
FRESH_SERVER_S = 5.0


class AdbDevice:
    def __init__(self, serial: str, apk: str | None = None, kind: str | None = None,
                 timeouts: Timeouts | None = None, boot_timeout_s: float = BOOT_TIMEOUT_S,
                 reconnect_timeout_s: float = RECONNECT_TIMEOUT_S):
        self.serial = serial
        self.apk = apk
        self.timeouts = timeouts or Timeouts.from_env()
        self.boot_timeout_s = boot_timeout_s
        self.reconnect_timeout_s = reconnect_timeout_s
        self.link = Link(serial, shell_timeout_s=self.timeouts.shell_s)
        self.kind = kind or ("emulator" if serial.startswith("emulator-") else "phone")
        self.app: AppStatus | None = None  # what ensure_app did, once per prepare
        self._info: DeviceInfo | None = None
        self._closed = threading.Event()
        # Set once recovery reached the last level this device owns (recover(2)); cleared by a good
        # benchmark. While set, faults are not retried: a device that still fails after reconnect and
        # restart is this device's problem, not a reason to climb to re-exec the whole run.
        self.exhausted = False
        self._stayed_away = False  # _came_back() waited in vain: do not wait again until it answers

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.serial!r})"

    # ----- Device protocol -----
    def prepare(self, reporter: Reporter) -> None:
        self.wait_ready(reporter, self.boot_timeout_s)
        info = self._facts()
        self.app = adb_app.ensure_app(self.link, self.apk, self.timeouts)
        adb_app.remove_leftovers(self.link, self.timeouts.shell_s)
        if self.app["action"] in ("installed", "upgraded"):
            reporter.emit(Recovery(action="install", target=self.serial, severity="info",
                                   detail=f"{adb_app.PACKAGE} {self.app['action']} (versionCode "
                                          f"{self.app['version_code']})"))
        snap = self.snapshot()
        reporter.emit(DeviceState(serial=self.serial, state="idle", kind=self.kind,
                                  detail=f"{info['model']} · {info['os_version']}",
                                  temperature_c=snap["max_temperature_c"],
                                  mem_available_kb=snap["memory"]["available_ram_kb"]))

    def wait_ready(self, reporter: Reporter | None, timeout_s: float, started: float | None = None) -> float:
        return adb_boot.wait_ready(self.link, self.kind, reporter, timeout_s, started=started,
                                   cancel=self._closed, alive=self._alive)

    def _alive(self) -> str | None:
        return None  # a phone's or a foreign emulator's process is not ours to watch

    def _facts(self) -> DeviceInfo:
        """The device's static facts, read once; DeviceError if the device cannot be read."""
        if self._info is None:
            info = adb_analytics.device_facts(self.link, self.kind)
            if info["emulator"] and self.kind == "phone":
                self.kind = info["kind"] = "emulator"  # e.g. an emulator reached with `adb connect`
            self._info = info
        return self._info

    # info() and snapshot() never raise: the pipeline calls them outside its DeviceError handling
    # (before/after a benchmark, and for the report of a failure), and a device that dropped there
    # must make a report that says so, not stop the run. Unread values are None, with the error.
    def info(self) -> DeviceInfo:
        try:
            return {**self._facts(), "app": self.app}
        except DeviceError as err:
            return {"serial": self.serial, "kind": self.kind, "model": None, "manufacturer": None,
                    "os_version": None, "sdk": None, "abi": None, "soc": None, "emulator": None, "cpu": None,
                    "app": self.app, "error": str(err)}

    def snapshot(self) -> DeviceSnapshot:
        try:
            facts = self._facts()
            return adb_analytics.device_snapshot(self.link, facts["thermal_zones"], facts["cpus"])
        except DeviceError as err:
            return adb_analytics.unread_snapshot(str(err))

    def benchmark(self, artifact: Artifact, settings: BenchSettings, run_id: str,
                  cancel: threading.Event | None = None,
                  progress: Callable[[str], None] | None = None) -> BenchBlock:
        if progress is not None:  # the app times on the device: what the host knows is the budget it was given
            progress(phase_line("on_device", 0.0, runs=settings.runs, min_s=settings.min_seconds,
                                max_runs=settings.max_runs, max_s=settings.max_seconds))
        try:
            if self.app is None:  # prepare() failed earlier, or a recovery found the app gone
                self.app = adb_app.ensure_app(self.link, self.apk, self.timeouts)
            result = adb_app.run_benchmark(self.link, artifact, settings, run_id, self.timeouts, cancel)
        except DeviceError as err:
            if err.kind == "launch":
                self.app = None  # "Activity class does not exist": check and reinstall next time
            if err.transient and self.exhausted and not (err.kind in LINK_KINDS and self._came_back()):
                raise DeviceError(f"{err} [still failing after reconnect and restart: not retried]",
                                  kind=err.kind, transient=False) from err
            raise
        self.exhausted = self._stayed_away = False
        return result

    def _came_back(self) -> bool:
        """After a link fault on an exhausted device: is it reachable again? (Then the fault was the
        link's, e.g. a reboot or a dropped cable, and a retry can succeed: without this, every model
        queued for a device that is away for a second would fail at once, one after the other.)
        Waits once, up to the reconnect timeout; a device that stayed away is then only probed."""
        if self._stayed_away:
            self._stayed_away = adb_boot.probe(self.link)[0] != "ready"
            return not self._stayed_away
        try:
            self.wait_ready(None, self.reconnect_timeout_s)
        except DeviceError:
            self._stayed_away = True
            return False
        return True

    def recover(self, level: int, reporter: Reporter) -> bool:
        self.exhausted = level >= 2
        if level >= 2 and adb_link.owns_server():
            reporter.emit(Recovery(action="restart-adb-server", target=self.serial,
                                   detail=f"restarting the adb server we started (port {adb_link.server_port()})"))
            adb_link.restart_server()
        return self.reconnect(reporter)

    def reconnect(self, reporter: Reporter) -> bool:
        """Level 1: make the server see the device again (network serials are re-connected)."""
        if ":" in self.serial and not self.serial.startswith("emulator-"):
            self.link.client.disconnect(self.serial)
            try:
                self.link.client.connect(self.serial, timeout=10)
            except adb_link.adbutils.AdbError as exc:
                reporter.emit(Recovery(action="reconnect-failed", target=self.serial, detail=str(exc)))
        elif self.link.state() == "offline":
            adb_link.run_adb("-s", self.serial, "reconnect", timeout=15)
        self.wait_ready(reporter, self.reconnect_timeout_s)
        self.app = None  # a device that went away may have been wiped or rebooted: check the app again
        return True

    def pin_cpus(self, cpus: list[int] | None) -> None:
        """The phone schedules its own cores; the host's pinning does not reach it."""

    def ready_for_benchmark(self, cancel: threading.Event | None = None) -> None:
        """The app starts afresh on the phone for every benchmark: nothing to start ahead here."""

    def kill_children(self) -> None:
        self._closed.set()  # nothing runs on the host: a boot wait notices and gives up

    def close(self) -> None:
        self._closed.set()


# ----- discovery -----
def attached() -> list[Transport]:
    """Devices the adb server lists (starting a server if none runs), with state.

    A server younger than FRESH_SERVER_S that lists nothing is asked again until it is that old: it
    has not yet seen every device (USB scan; an emulator or `nnlite sim-device` started alongside
    this command announces itself a moment later)."""
    adb_link.ensure_server()
    listed = adb_link.list_devices()
    age = adb_link.server_age()
    while not listed and age is not None and age < FRESH_SERVER_S:
        time.sleep(min(0.2, FRESH_SERVER_S - age))
        listed = adb_link.list_devices()
        age = adb_link.server_age()
    return listed


def describe(serial: str, state: str) -> DeviceRow:
    """One row for `nnlite devices`: serial, kind, state, model, Android version, ABI."""
    row: DeviceRow = {"serial": serial, "kind": "emulator" if serial.startswith("emulator-") else "phone",
                      "state": state, "model": None, "android": None, "abi": None, "emulator": None}
    if state != "device":
        return row
    link = Link(serial, shell_timeout_s=10)
    try:
        props = adb_analytics.analytics.parse_getprop(link.shell("getprop"))
    except DeviceError as err:
        row["state"] = f"device ({err.kind})"
        return row
    emulator = bool(adb_analytics.emulator_signals(props))
    boot = props.get("sys.boot_completed") == "1"
    row.update({"kind": "emulator" if emulator else "phone", "state": "device" if boot else "booting",
                "model": props.get("ro.product.model"), "emulator": emulator, "abi": props.get("ro.product.cpu.abi"),
                "android": f"{props.get('ro.build.version.release', '?')} (SDK {props.get('ro.build.version.sdk', '?')})"})
    return row
