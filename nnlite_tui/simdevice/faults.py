"""Fault injection: a spec parsed from `--faults` plus a runtime API for tests.

Spec: comma-separated `key=value` items (durations take `s` or `ms`, default seconds):

  drop_after=T        at T after start, drop every adb connection once (like a USB glitch);
                      the device comes back after drop_for (default 1s).
  drop_for=T          how long a drop lasts before the device reconnects/re-registers.
  offline_after=T     at T, go `offline` for offline_for (default 5s): connections drop and the
                      device withholds its CNXN, so the adb server lists it as offline.
  offline_for=T
  reboot_after=T      at T, reboot: connections drop, the app dies, boot phases run again.
  hang_shell=PREFIX   any shell command whose argv starts with PREFIX (e.g. `am start`) never
                      finishes; the client sees a timeout. Repeatable with `|`: a|b.
  install_fail=CODE   every install answers `Failure [CODE]` (e.g. INSTALL_FAILED_INSUFFICIENT_STORAGE).
  app_crash=N         the next N benchmark launches crash: no report, a FATAL EXCEPTION in logcat.
  truncated_report=N  the next N reports are written cut in half, directly at the report path.
  throttle_after=T    once a benchmark launch has benchmarked for T (counted from the app's first
                      conditions read, just before it loads the model; per launch, not from the
                      simulator's start), the device throttles until the launch ends: thermal
                      status SEVERE, headroom above 1.0, thermal zones 30 C hotter, clocks halved.
  input_scale=F       the app quantizes every quantized input with its scale times F (and still
                      reports the model's scale): a filler that applies the parameters wrongly.
  input_zero_point=N  the same with the zero point plus N.

Times count from the moment the simulator starts serving. Example:
  drop_after=5s,hang_shell=am start,install_fail=INSTALL_FAILED_INSUFFICIENT_STORAGE,app_crash=1
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

TIMED = ("drop_after", "offline_after", "reboot_after")
DURATIONS = ("drop_for", "offline_for") + TIMED


def parse_duration(text: str) -> float:
    text = text.strip()
    if text.endswith("ms"):
        return float(text[:-2]) / 1000
    if text.endswith("s"):
        return float(text[:-1])
    return float(text)


@dataclass
class FaultSpec:
    drop_after: float | None = None
    drop_for: float = 1.0
    offline_after: float | None = None
    offline_for: float = 5.0
    reboot_after: float | None = None
    hang_shell: list[str] = field(default_factory=list)
    install_fail: str | None = None
    app_crash: int = 0
    truncated_report: int = 0
    throttle_after: float | None = None
    input_scale: float = 1.0
    input_zero_point: int = 0

    @classmethod
    def parse(cls, spec: str | None) -> "FaultSpec":
        out = cls()
        if not spec:
            return out
        for item in spec.split(","):
            if not item.strip():
                continue
            key, sep, value = item.partition("=")
            key, value = key.strip(), value.strip()
            if not sep:
                raise ValueError(f"fault {item!r}: expected key=value")
            if key in DURATIONS or key == "throttle_after":
                setattr(out, key, parse_duration(value))
            elif key == "hang_shell":
                out.hang_shell.extend(p.strip() for p in value.split("|") if p.strip())
            elif key == "install_fail":
                if not value.startswith("INSTALL_"):
                    raise ValueError(f"install_fail={value!r}: expected an INSTALL_... code")
                out.install_fail = value
            elif key in ("app_crash", "truncated_report", "input_zero_point"):
                setattr(out, key, int(value))
            elif key == "input_scale":
                out.input_scale = float(value)
            else:
                raise ValueError(f"unknown fault {key!r} (known: {', '.join(DURATIONS)}, hang_shell, "
                                 "install_fail, app_crash, truncated_report, throttle_after, input_scale, "
                                 "input_zero_point)")
        return out


class Faults:
    """Live fault state of one device. Mutate it from the device's loop (SimDevice wraps that)."""

    def __init__(self, spec: FaultSpec | None = None):
        self.spec = spec or FaultSpec()
        self.hang_prefixes: list[list[str]] = [p.split() for p in self.spec.hang_shell]
        self.install_fail: str | None = self.spec.install_fail
        self.app_crashes = self.spec.app_crash
        self.truncated_reports = self.spec.truncated_report
        self.throttle_after: float | None = self.spec.throttle_after
        self.input_scale, self.input_zero_point = self.spec.input_scale, self.spec.input_zero_point
        self.hung = 0  # how many commands are hanging right now (tests wait on it)

    def hang_shell(self, prefix: str) -> None:
        self.hang_prefixes.append(prefix.split())

    def clear(self) -> None:
        self.hang_prefixes.clear()
        self.install_fail = None
        self.app_crashes = 0
        self.truncated_reports = 0
        self.throttle_after = None
        self.input_scale, self.input_zero_point = 1.0, 0

    def input_fault(self) -> dict | None:
        """How the app misapplies input quantization now, for its worker; None when it does not."""
        if self.input_scale == 1.0 and self.input_zero_point == 0:
            return None
        return {"scale": self.input_scale, "zero_point": self.input_zero_point}

    async def maybe_hang(self, argv: list[str]) -> None:
        if any(argv[:len(p)] == p for p in self.hang_prefixes if p):
            self.hung += 1
            try:
                await asyncio.Event().wait()  # until the client gives up and the stream is cancelled
            finally:
                self.hung -= 1

    def take_app_crash(self) -> bool:
        if self.app_crashes > 0:
            self.app_crashes -= 1
            return True
        return False

    def take_truncated_report(self) -> bool:
        if self.truncated_reports > 0:
            self.truncated_reports -= 1
            return True
        return False
