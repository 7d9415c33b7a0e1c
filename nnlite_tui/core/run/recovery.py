"""Recovery escalation for device faults: cool down -> reconnect -> restart -> re-exec the process.

Each consecutive fault of a device climbs one level; a successful benchmark resets it. Every step
is a Recovery event. Re-exec is the last resort and only for the headless CLI (cfg.allow_reexec):
the run stops, the store is flushed, and the CLI replaces the process with itself, which resumes.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TypedDict

from nnlite_tui.core.devices.base import Device, DeviceError
from nnlite_tui.core.events import DeviceState, Event, Recovery, Reporter

LEVELS = ("cool-down", "reconnect", "restart", "re-exec")
COOLDOWN_POLL_S = 2.0


class RoundWait(TypedDict, total=False):
    """What was waited for before a round (its record's `cooldown`): --cooldown-temp's wait
    (RecoveryPolicy.wait_for_temperature) and the wait for the thermal baseline (bench/thermal_baseline.py)."""

    threshold_c: float
    start_c: float | None
    end_c: float | None
    waited_s: float
    reached: bool
    thermal_baseline: Mapping[str, object]


class ReexecRequested(Exception):
    pass


class RecoveryPolicy:
    """Escalation state per device. It is given what it acts through: the reporter that devices
    talk to, the stop-now event that cuts every wait short, and the serials of the run's devices."""

    def __init__(self, cfg, reporter: Reporter, stop_now: threading.Event, serials: Sequence[str]):
        self.cfg = cfg
        self.reporter = reporter
        self.stop_now = stop_now
        self.serials = tuple(serials)
        self.faults: dict[str, int] = {}
        self._lock = threading.Lock()
        self.reexec_requested = False

    @property
    def emit(self) -> Callable[[Event], None]:
        return self.reporter.emit

    def _sleep(self, seconds: float) -> None:
        """Sleep, but wake for stop-now."""
        self.stop_now.wait(seconds)

    def prepare_device(self, device: Device) -> None:
        for attempt in range(1, self.cfg.max_attempts + 1):
            try:
                device.prepare(self.reporter)
                return
            except DeviceError as err:
                self.emit(Recovery(action="prepare-failed", target=device.serial, severity="error",
                                   detail=f"{err} (attempt {attempt} of {self.cfg.max_attempts})"))
                self.device_fault(device, err)
        self.emit(DeviceState(serial=device.serial, state="lost", kind=device.kind,
                              detail="could not be prepared"))

    def device_ok(self, device: Device) -> None:
        with self._lock:
            self.faults[device.serial] = 0

    def device_fault(self, device: Device, err: Exception) -> None:
        with self._lock:
            level = self.faults.get(device.serial, 0) + 1
            self.faults[device.serial] = level
        action = LEVELS[min(level, len(LEVELS)) - 1]
        if action == "re-exec" and not (self.cfg.allow_reexec and self._all_devices_failing()):
            # One bad device among good ones is not worth restarting the process: its models fail
            # after their attempt cap while the other devices go on.
            action = "restart"
        if action == "cool-down":
            self.cool_down(device, self.cfg.cooldown_s, reason=str(err))
        elif action in ("reconnect", "restart"):
            lvl = 1 if action == "reconnect" else 2
            self.emit(Recovery(action=action, target=device.serial, detail=str(err)))
            try:
                ok = device.recover(lvl, self.reporter)
            except DeviceError as exc:
                ok = False
                self.emit(Recovery(action=f"{action}-failed", target=device.serial, detail=str(exc),
                                   severity="error"))
            if not ok:
                self._sleep(self.cfg.cooldown_s)
        else:
            self.emit(Recovery(action="re-exec", target=device.serial, severity="error",
                               detail=f"{err}; restarting the process to resume from the store"))
            self.reexec_requested = True
            raise ReexecRequested(str(err))

    def _all_devices_failing(self) -> bool:
        with self._lock:
            return all(self.faults.get(serial, 0) >= len(LEVELS) for serial in self.serials)

    def cool_down(self, device: Device, seconds: float, reason: str = "") -> None:
        end = time.monotonic() + seconds
        while True:
            left = end - time.monotonic()
            if left <= 0 or self.stop_now.is_set():
                return
            self.emit(Recovery(action="cool-down", target=device.serial, detail=reason, countdown_s=round(left, 1),
                               severity="info"))
            self._sleep(min(COOLDOWN_POLL_S, left))

    def wait_for_temperature(self, device: Device, max_wait_s: float = 600.0) -> RoundWait | None:
        """With --cooldown-temp, wait until the device is cooler than the threshold; what happened."""
        limit = self.cfg.cooldown_temp
        if limit is None:
            return None
        started = time.monotonic()
        first = temp = device.snapshot().get("max_temperature_c")
        while temp is not None and temp > limit and time.monotonic() - started < max_wait_s:
            if self.stop_now.is_set():
                break
            self.emit(Recovery(action="cool-down", target=device.serial, severity="info",
                               detail=f"{temp:.1f} C above {limit:.1f} C",
                               countdown_s=round(max_wait_s - (time.monotonic() - started), 1)))
            self._sleep(COOLDOWN_POLL_S)
            temp = device.snapshot().get("max_temperature_c")
        return {"threshold_c": limit, "start_c": first, "end_c": temp,
                "waited_s": round(time.monotonic() - started, 2),
                "reached": temp is None or temp <= limit}
