"""Boot monitoring: wait until a device is listed, online, booted and its package manager answers.

Phases, in the order a phone or an emulator goes through them (the same names the device
simulator uses): absent (not listed by the adb server), offline (listed, no handshake yet, or
unauthorized), booting (online, sys.boot_completed not 1), booted (boot completed, package
manager not answering yet), ready. Each phase change is a DeviceState event with the elapsed time.
"""

from __future__ import annotations

import threading
import time

from nnlite_tui.core.devices.adb_link import Link
from nnlite_tui.core.devices.base import DeviceError
from nnlite_tui.core.events import DeviceState, Reporter

PHASES = ("absent", "offline", "booting", "booted", "ready")
PROBE_TIMEOUT_S = 10.0
HEARTBEAT_S = 5.0


def probe(link: Link) -> tuple[str, str]:
    """(phase, detail) of the device right now; never raises for a device that is simply not up yet."""
    state = link.state()
    if state is None:
        return "absent", "not listed by the adb server"
    if state == "unauthorized":
        return "offline", "unauthorized: accept the USB debugging prompt on the device"
    if state != "device":
        return "offline", f"adb state {state}"
    try:
        boot = link.shell("getprop sys.boot_completed", timeout=PROBE_TIMEOUT_S).strip()
        if boot != "1":
            return "booting", "sys.boot_completed not set"
        pm = link.shell("pm path android", timeout=PROBE_TIMEOUT_S)
    except DeviceError as err:
        return "offline", str(err)
    if "package:" not in pm:
        return "booted", (pm.strip().splitlines() or ["package manager not ready"])[0]
    return "ready", ""


def wait_ready(link: Link, kind: str, reporter: Reporter | None, timeout_s: float, poll_s: float = 0.5,
               started: float | None = None, cancel: threading.Event | None = None,
               alive=None) -> float:
    """Poll until ready, emitting a DeviceState per phase change (and a heartbeat); seconds waited.

    `started` is when the boot began (an emulator we launched), so elapsed times count from it.
    `alive()` returning a message means the boot cannot succeed (our emulator process died).
    """
    t0 = started if started is not None else time.monotonic()
    deadline = time.monotonic() + timeout_s
    last_phase, last_emit = None, 0.0
    while True:
        phase, detail = probe(link)
        now = time.monotonic()
        elapsed = round(now - t0, 2)
        if phase == "ready":
            if last_phase is not None:
                _emit(reporter, DeviceState(serial=link.serial, state="device", kind=kind, phase="ready",
                                            boot_elapsed_s=elapsed, boot_completed=True, detail="boot complete"))
            return elapsed
        if phase != last_phase or now - last_emit >= HEARTBEAT_S:
            _emit(reporter, DeviceState(serial=link.serial, state="booting", kind=kind, phase=phase,
                                        boot_elapsed_s=elapsed, boot_completed=phase == "booted", detail=detail))
            last_phase, last_emit = phase, now
        dead = alive() if alive is not None else None
        if dead:
            raise DeviceError(f"{link.serial}: {dead} (while {phase})", kind="offline", transient=True)
        if now >= deadline:
            raise DeviceError(f"{link.serial} not ready after {timeout_s:g} s (still {phase}: {detail})",
                              kind="offline")
        if cancel is not None and cancel.wait(poll_s):
            raise DeviceError(f"{link.serial}: waiting for boot cancelled", kind="cancelled", transient=False)
        if cancel is None:
            time.sleep(poll_s)


def _emit(reporter: Reporter | None, event) -> None:
    if reporter is not None:
        reporter.emit(event)
