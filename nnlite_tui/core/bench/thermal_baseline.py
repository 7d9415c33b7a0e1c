"""A phone's rounds start only when it is back at the session's thermal baseline.

A phone that is warmer for one round (or one session) than for another is slower for it, the same
problem as a busier host. The baseline is what the device showed when the session first looked: its
hottest thermal zone, its battery temperature and its thermal status (`dumpsys thermalservice`,
Android 10+). Before each round the device is polled until all three are back within TOLERANCE_C
(the status: not above the baseline's), or MAX_WAIT_S has passed (then the round starts anyway and
its record says the baseline was not reached). What each round started at, and how long it waited,
goes into the round's record. The host has no battery and no thermal status: nothing to wait for.
"""

from __future__ import annotations

import os
import re
import threading
import time
from dataclasses import dataclass
from typing import Any, TypedDict

from nnlite_tui.core.devices.base import DeviceError

TOLERANCE_C = 1.0
MAX_WAIT_S = 300.0  # $NNLITE_THERMAL_WAIT_S; 0 turns the wait (and its readings) off
POLL_S = 5.0
_STATUS = re.compile(r"Thermal Status:\s*(\d+)")


class ThermalFigures(TypedDict):
    """A phone's thermal state at one moment (each None when unread)."""

    max_c: float | None  # its hottest thermal zone
    battery_c: float | None
    thermal_status: int | None  # Android's thermal status (dumpsys thermalservice)


class ThermalWait(TypedDict):
    """A round's wait for the baseline: the figures it started at, and how long it waited."""

    baseline: ThermalFigures
    at_call: ThermalFigures
    start: ThermalFigures
    reached: bool
    waited_s: float


def max_wait_s() -> float:
    return float(os.environ.get("NNLITE_THERMAL_WAIT_S") or MAX_WAIT_S)


def read(device: Any) -> ThermalFigures:
    """The device's hottest zone, battery temperature and thermal status (each None when unread)."""
    snap = device.snapshot() or {}
    status = None
    link = getattr(device, "link", None)
    if link is not None:
        try:
            found = _STATUS.search(link.shell("dumpsys thermalservice 2>/dev/null; true") or "")
            status = int(found.group(1)) if found else None
        except DeviceError as exc:  # unknown, and recorded: the zones and the battery still count
            status = None
            snap = {**snap, "thermal_status_error": str(exc)[:200]}
    return {"max_c": snap.get("max_temperature_c"), "battery_c": (snap.get("battery") or {}).get("temperature_c"),
            "thermal_status": status}


@dataclass
class Baseline:
    figures: ThermalFigures | None  # None: nothing to wait for (the host)

    @classmethod
    def of(cls, device: Any) -> Baseline:
        if max_wait_s() <= 0 or (device.info() or {}).get("kind") == "host":
            return cls(None)
        return cls(read(device))

    def reached(self, now: ThermalFigures) -> bool:
        if self.figures is None:
            return True
        base = self.figures
        for b_c, n_c in ((base["max_c"], now["max_c"]), (base["battery_c"], now["battery_c"])):
            if b_c is not None and n_c is not None and n_c > b_c + TOLERANCE_C:
                return False
        b, n = base["thermal_status"], now["thermal_status"]
        return not (b is not None and n is not None and n > b)

    def wait(self, device: Any, stop: threading.Event | None = None, limit_s: float | None = None,
             poll_s: float = POLL_S) -> ThermalWait | None:
        """Wait until the device is back at the baseline (bounded); the round's start figures and wait."""
        if self.figures is None:
            return None
        limit_s = max_wait_s() if limit_s is None else limit_s
        started = time.monotonic()
        first = now = read(device)
        while not self.reached(now) and time.monotonic() - started < limit_s:
            if stop is not None and stop.wait(poll_s):
                break
            if stop is None:
                time.sleep(poll_s)
            now = read(device)
        return {"baseline": self.figures, "at_call": first, "start": now, "reached": self.reached(now),
                "waited_s": round(time.monotonic() - started, 2)}
