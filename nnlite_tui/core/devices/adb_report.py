"""Reading the benchmark app's report off an adb device (android-app/PROTOCOL.md): poll for it with a
deadline, tell an app crash from a slow benchmark by its logcat lines, check the run id and the
schema, and clean up the device's files. Where things are on the device, and the deadlines.
"""

from __future__ import annotations

import json
import os
import shlex
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from nnlite_tui.core.bench.settings import BenchSettings
from nnlite_tui.core.devices import adb_energy, adb_extras
from nnlite_tui.core.devices.adb_extras import SUPPORTED_PROTOCOLS
from nnlite_tui.core.devices.adb_link import Link
from nnlite_tui.core.devices.base import BenchBlock, DeviceError

PACKAGE = "org.nnlite.bench"
COMPONENT = "org.nnlite.bench/.BenchActivity"
MODELS_DIR = "/data/local/tmp/nnlite"
REPORTS_DIR = "/sdcard/Android/data/org.nnlite.bench/files/reports"
REPO = Path(__file__).resolve().parents[3]
SCHEMA = REPO / "android-app" / "protocol" / "report.schema.json"
LOG_TAGS = ("NNLiteBench", "AndroidRuntime", "libc", "DEBUG")


@dataclass
class Timeouts:
    shell_s: float = 30.0  # any one adb shell call
    launch_s: float = 30.0  # `am start -W` returns once the activity is displayed
    install_s: float = 180.0
    report_base_s: float = 60.0  # load + first inference + warm-up (and each profiled pass), on top of max_seconds
    report_s: float | None = None  # fixed report deadline (tests); None: base + 1.25 * max_seconds
    poll_s: float = 0.25
    logcat_every_s: float = 1.5

    @classmethod
    def from_env(cls) -> "Timeouts":
        """Defaults, overridden by $NNLITE_ADB_TIMEOUTS, e.g. `launch_s=60,report_base_s=120` (slow devices)."""
        out = cls()
        for item in filter(None, (os.environ.get("NNLITE_ADB_TIMEOUTS") or "").split(",")):
            key, _, value = item.partition("=")
            key = key.strip()
            if key not in cls.__dataclass_fields__:
                raise ValueError(f"NNLITE_ADB_TIMEOUTS: unknown key {key!r} (known: "
                                 f"{', '.join(cls.__dataclass_fields__)})")
            setattr(out, key, float(value))
        return out

    def report_deadline(self, settings: BenchSettings) -> float:
        if self.report_s is not None:
            return self.report_s
        # A per-op profile (section 9e) is a separate pass after the timed runs, per kernel mode; the
        # energy windows (section 9f) follow them too.
        return ((1 + len(adb_extras.profile_modes(settings))) * self.report_base_s + 1.25 * settings.max_seconds
                + adb_energy.window_seconds(settings))


# Once the report can exist: a look every 0.1 s for 2 s (a short benchmark's report is seen soon
# after it lands), then every poll_s (a long one is not asked about ten times a second throughout).
FAST_POLL_S, FAST_POLL_WINDOW_S = 0.1, 2.0


class LogWatch:
    """The app's logcat lines since a marker (no `logcat -c`: the device's log is not ours to clear)."""

    def __init__(self, link: Link, timeout: float):
        self.link, self.timeout = link, timeout
        self.seen = len(self._lines())

    def _lines(self) -> list[str]:
        text = self.link.shell(["logcat", "-d", "-s", *LOG_TAGS], timeout=self.timeout)
        return [line for line in text.splitlines() if line.strip() and not line.startswith("-----")]

    def new(self) -> list[str]:
        lines = self._lines()
        return lines[self.seen:] if len(lines) >= self.seen else lines  # the ring buffer may have rotated


def crash_line(lines: list[str]) -> str | None:
    for i, line in enumerate(lines):
        if ("Fatal signal" in line and PACKAGE in line) or ("FATAL EXCEPTION" in line and any(
                f"Process: {PACKAGE}" in later for later in lines[i:i + 3])):
            return next((lx.split(": ", 1)[-1] for lx in lines[i + 1:i + 4] if "Exception" in lx or "Error" in lx),
                        line.split(": ", 1)[-1])
        if "NNLiteBench" in line and ("REPORT_WRITE_FAILED" in line or "no report written" in line):
            return line.split(": ", 1)[-1]
    return None


def cleanup(link: Link, report: str, model: str, timeout: float, stop_app: bool) -> str | None:
    """Remove our files from the device (and stop an app we gave up on); the error, if that failed.

    A failed clean-up must not replace the fault that got us here, nor fail a good result.
    """
    try:
        if stop_app:
            link.shell(["am", "force-stop", PACKAGE], timeout=timeout)
        link.shell(f"rm -f {shlex.quote(report)} {shlex.quote(report + '.tmp')} {shlex.quote(model)}",
                   timeout=timeout)
    except DeviceError as err:
        return str(err)
    return None


def wait_report(link: Link, report: str, watch: LogWatch, timeouts: Timeouts, settings: BenchSettings,
                 started: float, cancel: threading.Event | None) -> bytes:
    limit = timeouts.report_deadline(settings)
    deadline = started + limit
    next_log = started + timeouts.logcat_every_s
    # No report can exist before the app has warmed up and timed for as long as the settings ask.
    earliest = started + min(settings.warmup_seconds, settings.max_seconds) + min(settings.min_seconds,
                                                                                  settings.max_seconds) \
        + adb_energy.window_seconds(settings)
    while True:
        if time.monotonic() >= earliest and link.exists(report):
            return link.read_bytes(report)
        now = time.monotonic()
        if cancel is not None and cancel.is_set():
            raise DeviceError("benchmark cancelled", kind="cancelled", transient=False)
        if now >= next_log or now >= deadline:
            next_log = now + timeouts.logcat_every_s
            crash = crash_line(watch.new())
            if crash is not None and not link.exists(report):
                raise DeviceError(f"{link.serial}: the app died without a report: {crash}", kind="crash")
        if now >= deadline:
            raise DeviceError(f"{link.serial}: no report after {limit:g} s (load + warm-up + max_seconds)",
                              kind="timeout")
        if now < earliest:
            pause = min(earliest, next_log, deadline) - now
        else:
            pause = min(FAST_POLL_S if now < earliest + FAST_POLL_WINDOW_S else timeouts.poll_s, timeouts.poll_s)
        if cancel is not None:
            cancel.wait(pause)
        else:
            time.sleep(pause)


def parse_report(link: Link, data: bytes, launch_id: str) -> BenchBlock:
    try:
        result = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DeviceError(f"{link.serial}: unreadable report ({len(data)} bytes): {exc}", kind="report") from exc
    if not isinstance(result, dict):
        raise DeviceError(f"{link.serial}: report is not a JSON object", kind="report")
    if result.get("protocol_version") not in SUPPORTED_PROTOCOLS:
        raise DeviceError(f"{link.serial}: report protocol_version {result.get('protocol_version')!r}, "
                          f"expected one of {SUPPORTED_PROTOCOLS}", kind="report", transient=False)
    if result.get("run_id") != launch_id:
        raise DeviceError(f"{link.serial}: report run_id {result.get('run_id')!r} is not ours ({launch_id})",
                          kind="report")
    problems = schema_errors(result)
    if problems:
        raise DeviceError(f"{link.serial}: report does not match the protocol schema: {problems[0]}",
                          kind="report")
    return result


_validator = None


def schema_errors(report: BenchBlock) -> list[str]:
    """Violations of android-app/protocol/report.schema.json (none checked if it is not shipped)."""
    global _validator
    if _validator is None:
        if not SCHEMA.is_file():
            return []
        import jsonschema

        _validator = jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text()))
    return [f"{'/'.join(map(str, e.path)) or '.'}: {e.message}" for e in _validator.iter_errors(report)][:5]
