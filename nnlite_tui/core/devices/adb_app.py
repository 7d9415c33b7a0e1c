"""The benchmark app on an adb device (android-app/PROTOCOL.md): install or upgrade it (also when a
rebuilt APK kept its versionCode), run one benchmark (check the settings, push, wake the screen,
`am start`, poll for the report with a deadline, check the run id, pull, clean up), and tell an
app crash from a slow benchmark by its logcat lines. Reads protocol 3 reports, and protocol 2 and 1
reports from an older app (the result then lists the fields they lack). A unit of a runtime other than
LiteRT goes only to an app that announces that runtime (adb_runtimes.py), with the extras it needs.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import threading
import time
from dataclasses import replace
from pathlib import Path

from nnlite_tui.core.outcomes import Artifact
from nnlite_tui.core.bench.settings import BenchSettings
from nnlite_tui.core.devices import adb_energy, adb_extras, adb_runtimes, power_stats
from nnlite_tui.core.devices.adb_extras import PROTOCOL_VERSION
from nnlite_tui.core.devices.adb_link import Link
from nnlite_tui.core.devices.adb_report import (COMPONENT, MODELS_DIR, PACKAGE, REPO, REPORTS_DIR, LogWatch,
                                               Timeouts, cleanup, parse_report, wait_report)
from nnlite_tui.core.devices.apk import ApkError, ApkInfo, read_apk_info
from nnlite_tui.core.devices.base import BenchBlock, DeviceError
from nnlite_tui.core.devices.facts import AppStatus
from nnlite_tui.core.runtimes import APP_RUNTIMES, DEFAULT_RUNTIME, get_runtime

__all__ = ["COMPONENT", "MODELS_DIR", "PACKAGE", "REPORTS_DIR", "Timeouts", "ensure_app", "remove_leftovers",
           "run_benchmark"]

DEFAULT_APK = REPO / "android-app" / "app" / "build" / "outputs" / "apk" / "debug" / "app-debug.apk"
BUILD_HINT = ("build it with `cd android-app && ./gradlew assembleDebug` (needs the Android SDK, see "
              "android-app/README.md), or pass --apk PATH / set NNLITE_APK")


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


def ensure_app(link: Link, apk_option: str | None, timeouts: Timeouts) -> AppStatus:
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
    adb_runtimes.forget(link.serial)  # a new app: learn its protocol and runtimes again
    action = "installed" if have is None else "reinstalled" if reinstall else "upgraded"
    return {"action": action, "from": have, "version_code": now, "apk": str(apk)}


def remove_leftovers(link: Link, timeout: float) -> list[str]:
    """Models and reports a previous host process left behind (it died mid-benchmark): over days
    of runs they would fill the device. Only our own directories and file names; what was removed."""
    gone = []
    artifacts = tuple(get_runtime(name).suffix for name in APP_RUNTIMES)
    for folder, suffixes in ((MODELS_DIR, (*artifacts, ".apk")), (REPORTS_DIR, (".json", ".json.tmp"))):
        listing = link.shell(f"ls {folder} 2>/dev/null; true", timeout=timeout).split()
        gone += [f"{folder}/{name}" for name in listing if name.endswith(suffixes)]
    if gone:
        link.shell(["rm", "-f", *gone], timeout=timeout)
    return gone


# ----- one benchmark -----
def launch_args(model: str, report: str, launch_id: str, s: BenchSettings, protocol: int = PROTOCOL_VERSION,
                runtime_extras: dict[str, str] | None = None) -> list[str]:
    return ["am", "start", "-S", "-W", "-n", COMPONENT,
            *adb_extras.launch_extras(model, report, launch_id, s, protocol, runtime_extras)]


# A dark or locked screen leaves the app behind the keyguard, where the platform throttles it.
WAKE_SCREEN = "input keyevent KEYCODE_WAKEUP; wm dismiss-keyguard; true"


def run_benchmark(link: Link, artifact: Artifact, settings: BenchSettings, run_id: str, timeouts: Timeouts,
                  cancel: threading.Event | None = None) -> BenchBlock:
    adb_extras.check_settings(settings, link.serial)
    extras = adb_runtimes.runtime_extras(link, artifact, settings, run_id, timeouts, cancel)
    protocol = adb_runtimes.protocol(link.serial, PROTOCOL_VERSION)
    if protocol == 1:
        adb_extras.check_v1_can_run(settings, link.serial)
    if artifact.input_ranges:  # token ids the app must keep inside their tables (PROTOCOL.md section 4)
        extras = {**extras, **adb_extras.range_extras(artifact.input_ranges, protocol, link.serial)}
    result = _run_once(link, artifact.path, settings, run_id, timeouts, cancel, protocol, extras)
    why_no_ops = adb_extras.no_app_profile(artifact.runtime)
    if protocol >= 2 and adb_extras.refuses_v2_extras(result):
        # An older app: remember it, and run again with the extras it knows.
        adb_runtimes.set_protocol(link.serial, 1)
        adb_extras.check_v1_can_run(settings, link.serial)
        if artifact.input_ranges:
            adb_extras.range_extras(artifact.input_ranges, 1, link.serial)  # refuses: it cannot be told them
        result = _run_once(link, artifact.path, settings, run_id, timeouts, cancel, 1)
        why_no_ops = "the installed benchmark app speaks protocol 1, which has no per-op profile"
    elif settings.profile_ops and adb_extras.refuses_profile_extras(result):
        # An app built before the profile extras: the timings without the profile.
        result = _run_once(link, artifact.path, replace(settings, profile_ops=None), run_id, timeouts, cancel,
                           protocol, extras)
        why_no_ops = "the installed benchmark app does not take the profile_ops extra; install the current APK"
    if artifact.input_ranges and adb_extras.refuses_range_extra(result):
        raise DeviceError(f"{link.serial}: {adb_extras.NO_RANGE_EXTRA}", kind="install", transient=False)
    asked = settings
    if settings.energy and adb_energy.refuses_energy_extras(result):
        # An app from before section 9f: the timings without the energy windows, and a block that says why.
        asked = replace(settings, energy=False)
        result = _run_once(link, artifact.path, asked, run_id, timeouts, cancel, protocol, extras)
    adb_runtimes.learn(link.serial, result)
    result = adb_extras.check_ops(adb_extras.mark_protocol(result), settings, link.serial, why_no_ops)
    result = adb_energy.check(result, asked, link.serial, result.get("protocol_version"))
    if asked is not settings and result.get("valid"):
        result["energy"] = adb_energy.not_measured(
            adb_energy.APP_WITHOUT_ENERGY.format(protocol=result.get("protocol_version")), source="device")
    return result


def _run_once(link: Link, local_path: str, settings: BenchSettings, run_id: str, timeouts: Timeouts,
              cancel: threading.Event | None, protocol: int, runtime_extras: dict[str, str] | None = None) -> BenchBlock:
    digest = _sha256(local_path)
    launch_id = f"{run_id}-{os.urandom(5).hex()}"
    # A path without a suffix is taken as the default runtime's (all an app before protocol 3 runs).
    model = f"{MODELS_DIR}/{digest[:32]}{Path(local_path).suffix or get_runtime(DEFAULT_RUNTIME).suffix}"
    report = f"{REPORTS_DIR}/{launch_id}.json"
    t = timeouts.shell_s
    # One round trip for the folder, a stale report and the screen: each adb call costs tens of ms.
    link.shell(f"mkdir -p {MODELS_DIR}; chmod 755 {MODELS_DIR} 2>/dev/null; rm -f {report} {report}.tmp; "
               f"{WAKE_SCREEN}", timeout=t)
    try:
        link.push(local_path, model, mode=0o644)
        watch = LogWatch(link, t)
        # Per-rail energy (Power Stats HAL) for the energy windows, where adb can read it.
        rails = power_stats.RailPoller(link, t) if settings.energy and protocol >= 3 and \
            power_stats.available(link, t) else None
        started = time.monotonic()
        if rails is not None:
            rails.start()
        try:
            out = link.shell(launch_args(model, report, launch_id, settings, protocol, runtime_extras),
                             timeout=timeouts.launch_s)
            if "Error" in out:
                raise DeviceError(f"{link.serial}: am start failed: {' '.join(out.split())[-300:]}", kind="launch")
            data = wait_report(link, report, watch, timeouts, settings, started, cancel)
        finally:
            snapshots = rails.stop() if rails is not None else None
        result = parse_report(link, data, launch_id)
        energy = result.get("energy")
        if snapshots is not None and isinstance(energy, dict):
            energy["rails"] = power_stats.rail_energy(snapshots, energy)
        result["log"] = "\n".join(watch.new()[-50:])
    except DeviceError:
        cleanup(link, report, model, t, stop_app=True)
        raise
    result["device_report_path"] = report
    result["launch_id"] = launch_id
    result["cleanup_error"] = cleanup(link, report, model, t, stop_app=False)
    return result


def _sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.digest().hex()
