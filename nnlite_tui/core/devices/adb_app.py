"""The benchmark app on an adb device (android-app/PROTOCOL.md): install or upgrade it (also when a
rebuilt APK kept its versionCode), run one benchmark (check the settings, push, wake the screen,
`am start`, poll for the report with a deadline, check the run id, pull, clean up), and tell an
app crash from a slow benchmark by its logcat lines. Reads protocol 2 reports, and protocol 1
reports from an older app (the result then lists the fields they lack).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from nnlite_tui.core.bench import BenchSettings
from nnlite_tui.core.devices import adb_extras
from nnlite_tui.core.devices.adb_extras import PROTOCOL_VERSION, SUPPORTED_PROTOCOLS
from nnlite_tui.core.devices.adb_link import Link
from nnlite_tui.core.devices.apk import ApkError, ApkInfo, read_apk_info
from nnlite_tui.core.devices.base import DeviceError

PACKAGE = "org.nnlite.bench"
COMPONENT = "org.nnlite.bench/.BenchActivity"
MODELS_DIR = "/data/local/tmp/nnlite"
REPORTS_DIR = "/sdcard/Android/data/org.nnlite.bench/files/reports"
# The protocol the app on each device answered with (serial -> version), learnt from its reports.
_app_protocol: dict[str, int] = {}
REPO = Path(__file__).resolve().parents[3]
DEFAULT_APK = REPO / "android-app" / "app" / "build" / "outputs" / "apk" / "debug" / "app-debug.apk"
SCHEMA = REPO / "android-app" / "protocol" / "report.schema.json"
LOG_TAGS = ("NNLiteBench", "AndroidRuntime", "libc", "DEBUG")
BUILD_HINT = ("build it with `cd android-app && ./gradlew assembleDebug` (needs the Android SDK, see "
              "android-app/README.md), or pass --apk PATH / set NNLITE_APK")


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
        # A per-op profile (section 9e) is a separate pass after the timed runs, per kernel mode.
        return (1 + len(adb_extras.profile_modes(settings))) * self.report_base_s + 1.25 * settings.max_seconds


# ----- the APK -----
def find_apk(option: str | None) -> Path | None:
    """--apk, else $NNLITE_APK, else the android-app debug build output; None if there is none."""
    for source, value in (("--apk", option), ("NNLITE_APK", os.environ.get("NNLITE_APK"))):
        if value:
            path = Path(value).expanduser()
            if not path.is_file():
                raise DeviceError(f"{source} {value}: no such APK file", kind="install", transient=False)
            return path
    return DEFAULT_APK if DEFAULT_APK.is_file() else None


def apk_manifest(path: Path) -> ApkInfo:
    try:
        manifest = read_apk_info(str(path))
    except ApkError as exc:
        raise DeviceError(f"{path}: not a usable APK ({exc})", kind="install", transient=False) from exc
    if manifest.package != PACKAGE:
        raise DeviceError(f"{path} is {manifest.package}, not the benchmark app {PACKAGE}", kind="install",
                          transient=False)
    return manifest


def installed_version(link: Link, timeout: float) -> int | None:
    out = link.shell(["dumpsys", "package", PACKAGE], timeout=timeout)
    if f"Package [{PACKAGE}]" not in out:
        return None
    match = re.search(r"versionCode=(\d+)", out)
    return int(match.group(1)) if match else 0


def installed_sha256(link: Link, timeout: float) -> str | None:
    """sha256 of the installed base APK (`pm path` + toybox sha256sum); None if it cannot be read."""
    path = next((line[len("package:"):].strip() for line in link.shell(["pm", "path", PACKAGE], timeout=timeout)
                 .splitlines() if line.startswith("package:") and line.strip().endswith("base.apk")), None)
    if path is None:
        return None
    out = link.shell(f"sha256sum {shlex.quote(path)} 2>/dev/null; true", timeout=timeout).split()
    digest = out[0].lower() if out else ""
    return digest if re.fullmatch(r"[0-9a-f]{64}", digest) else None


def ensure_app(link: Link, apk_option: str | None, timeouts: Timeouts) -> dict[str, Any]:
    """Install the app, or upgrade it when its versionCode differs from the APK's, or reinstall it when
    the versionCode is the same but the installed APK is not this one (a rebuild); what was done."""
    have = installed_version(link, timeouts.shell_s)
    apk = find_apk(apk_option)
    if apk is None:
        if have is None:
            raise DeviceError(f"{link.serial}: the benchmark app {PACKAGE} is not installed and no APK was "
                              f"found at {DEFAULT_APK}: {BUILD_HINT}", kind="install", transient=False)
        return {"action": "kept", "version_code": have, "apk": None}
    want = apk_manifest(apk)
    reinstall = False
    if have == want.version_code:
        # Same versionCode, but a rebuilt APK must still replace the old one; an unreadable digest
        # (no sha256sum on the device) counts as different: reinstalling costs seconds, a stale app a run.
        if installed_sha256(link, timeouts.shell_s) == _sha256(str(apk)):
            return {"action": "up-to-date", "version_code": have, "apk": str(apk)}
        reinstall = True
    remote = f"{MODELS_DIR}/nnlite-bench.apk"
    link.shell(f"mkdir -p {MODELS_DIR}", timeout=timeouts.shell_s)
    link.push(str(apk), remote)
    try:
        out = link.shell(["pm", "install", "-r", "-t", "-d", remote], timeout=timeouts.install_s)
    finally:
        link.shell(["rm", "-f", remote], timeout=timeouts.shell_s)
    if "Success" not in out:
        code = re.search(r"Failure \[([A-Z_]+)", out)
        raise DeviceError(f"{link.serial}: installing {apk.name} failed: {out.strip()[-400:]}", kind="install",
                          transient=code is None)  # a Failure [CODE] repeats; a cut link may not
    now = installed_version(link, timeouts.shell_s)
    if now != want.version_code:
        raise DeviceError(f"{link.serial}: after install {PACKAGE} has versionCode {now}, expected "
                          f"{want.version_code}", kind="install")
    _app_protocol.pop(link.serial, None)  # a new app: learn its protocol again
    action = "installed" if have is None else "reinstalled" if reinstall else "upgraded"
    return {"action": action, "from": have, "version_code": now, "apk": str(apk)}


def remove_leftovers(link: Link, timeout: float) -> list[str]:
    """Models and reports a previous host process left behind (it died mid-benchmark): over days
    of runs they would fill the device. Only our own directories and file names; what was removed."""
    gone = []
    for folder, suffixes in ((MODELS_DIR, (".tflite", ".apk")), (REPORTS_DIR, (".json", ".json.tmp"))):
        listing = link.shell(f"ls {folder} 2>/dev/null; true", timeout=timeout).split()
        gone += [f"{folder}/{name}" for name in listing if name.endswith(suffixes)]
    if gone:
        link.shell(["rm", "-f", *gone], timeout=timeout)
    return gone


# ----- one benchmark -----
def launch_args(model: str, report: str, launch_id: str, s: BenchSettings, protocol: int = PROTOCOL_VERSION) -> list[str]:
    return ["am", "start", "-S", "-W", "-n", COMPONENT, *adb_extras.launch_extras(model, report, launch_id, s, protocol)]


# A dark or locked screen leaves the app behind the keyguard, where the platform throttles it.
WAKE_SCREEN = "input keyevent KEYCODE_WAKEUP; wm dismiss-keyguard; true"
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


def run_benchmark(link: Link, tflite: str, settings: BenchSettings, run_id: str, timeouts: Timeouts,
                  cancel: threading.Event | None = None) -> dict[str, Any]:
    adb_extras.check_settings(settings, link.serial)
    protocol = _app_protocol.get(link.serial, PROTOCOL_VERSION)
    if protocol == 1:
        adb_extras.check_v1_can_run(settings, link.serial)
    result = _run_once(link, tflite, settings, run_id, timeouts, cancel, protocol)
    why_no_ops = adb_extras.NO_APP_PROFILER
    if protocol >= 2 and adb_extras.refuses_v2_extras(result):
        # An older app: remember it, and run again with the extras it knows.
        _app_protocol[link.serial] = 1
        adb_extras.check_v1_can_run(settings, link.serial)
        result = _run_once(link, tflite, settings, run_id, timeouts, cancel, 1)
        why_no_ops = "the installed benchmark app speaks protocol 1, which has no per-op profile"
    elif settings.profile_ops and adb_extras.refuses_profile_extras(result):
        # An app built before the profile extras: the timings without the profile.
        result = _run_once(link, tflite, replace(settings, profile_ops=None), run_id, timeouts, cancel, protocol)
        why_no_ops = "the installed benchmark app does not take the profile_ops extra; install the current APK"
    else:
        _app_protocol[link.serial] = result.get("protocol_version", protocol)
    return adb_extras.check_ops(adb_extras.mark_protocol(result), settings, link.serial, why_no_ops)


def _run_once(link: Link, tflite: str, settings: BenchSettings, run_id: str, timeouts: Timeouts,
              cancel: threading.Event | None, protocol: int) -> dict[str, Any]:
    digest = _sha256(tflite)
    launch_id = f"{run_id}-{os.urandom(5).hex()}"
    model = f"{MODELS_DIR}/{digest[:32]}.tflite"
    report = f"{REPORTS_DIR}/{launch_id}.json"
    t = timeouts.shell_s
    # One round trip for the folder, a stale report and the screen: each adb call costs tens of ms.
    link.shell(f"mkdir -p {MODELS_DIR}; chmod 755 {MODELS_DIR} 2>/dev/null; rm -f {report} {report}.tmp; "
               f"{WAKE_SCREEN}", timeout=t)
    try:
        link.push(tflite, model, mode=0o644)
        watch = LogWatch(link, t)
        started = time.monotonic()
        out = link.shell(launch_args(model, report, launch_id, settings, protocol), timeout=timeouts.launch_s)
        if "Error" in out:
            raise DeviceError(f"{link.serial}: am start failed: {' '.join(out.split())[-300:]}", kind="launch")
        data = _wait_report(link, report, watch, timeouts, settings, started, cancel)
        result = _parse_report(link, data, launch_id)
        result["log"] = "\n".join(watch.new()[-50:])
    except DeviceError:
        _cleanup(link, report, model, t, stop_app=True)
        raise
    result["device_report_path"] = report
    result["launch_id"] = launch_id
    result["cleanup_error"] = _cleanup(link, report, model, t, stop_app=False)
    return result


def _cleanup(link: Link, report: str, model: str, timeout: float, stop_app: bool) -> str | None:
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


def _wait_report(link: Link, report: str, watch: LogWatch, timeouts: Timeouts, settings: BenchSettings,
                 started: float, cancel: threading.Event | None) -> bytes:
    limit = timeouts.report_deadline(settings)
    deadline = started + limit
    next_log = started + timeouts.logcat_every_s
    # No report can exist before the app has warmed up and timed for as long as the settings ask.
    earliest = started + min(settings.warmup_seconds, settings.max_seconds) + min(settings.min_seconds,
                                                                                  settings.max_seconds)
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


def _parse_report(link: Link, data: bytes, launch_id: str) -> dict[str, Any]:
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


def schema_errors(report: dict[str, Any]) -> list[str]:
    """Violations of android-app/protocol/report.schema.json (none checked if it is not shipped)."""
    global _validator
    if _validator is None:
        if not SCHEMA.is_file():
            return []
        import jsonschema

        _validator = jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text()))
    return [f"{'/'.join(map(str, e.path)) or '.'}: {e.message}" for e in _validator.iter_errors(report)][:5]


def _sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.digest().hex()
