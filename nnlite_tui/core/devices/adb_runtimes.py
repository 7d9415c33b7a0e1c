"""What the benchmark app installed on each device speaks and runs, learnt from its reports
(android-app/PROTOCOL.md sections 3a and 10).

A protocol 3 app announces `capabilities` in every report, `args` failures included: the runtimes its
build packages (with their library versions) and the extras it accepts. An app of protocol 2 or 1
announces nothing and runs LiteRT only. The host remembers, per serial, the protocol and capabilities
of the installed app (forgotten when it installs another one) and refuses a unit of a runtime the app
does not announce before anything is pushed, with a message that names the fix. A report of an older
app is kept as it came (it names no runtime: the unit's, LiteRT, is the only one that app had).
"""

from __future__ import annotations

import os
import threading
import time

from nnlite_tui.core.bench.settings import BenchSettings
from nnlite_tui.core.devices.adb_link import Link
from nnlite_tui.core.devices.adb_report import (COMPONENT, MODELS_DIR, REPORTS_DIR, LogWatch, Timeouts, cleanup,
                                               parse_report, wait_report)
from nnlite_tui.core.devices.base import BenchBlock, DeviceError
from nnlite_tui.core.outcomes import Artifact
from nnlite_tui.core.runtimes import get_runtime

INSTALL_FIX = "install the current APK (android-app/README.md)"
# serial -> what its installed app answered with
_protocol: dict[str, int] = {}
# The app's `runtimes` capability: runtime -> library version; None: a report without capabilities (protocol < 3)
_capabilities: dict[str, dict[str, object] | None] = {}
_app_version: dict[str, str | None] = {}


def forget(serial: str) -> None:
    """A new app was installed: learn its protocol and capabilities again."""
    for known in (_protocol, _capabilities, _app_version):
        known.pop(serial, None)


def protocol(serial: str, default: int) -> int:
    return _protocol.get(serial, default)


def set_protocol(serial: str, version: int) -> None:
    _protocol[serial] = version


def learn(serial: str, report: BenchBlock) -> None:
    """Remember what a report of the installed app says about the app itself."""
    version = report.get("protocol_version")
    if isinstance(version, int):
        _protocol[serial] = version
    caps = report.get("capabilities")
    announced = caps.get("runtimes") if isinstance(caps, dict) else None
    _capabilities[serial] = announced if isinstance(announced, dict) else None
    app_version = report.get("app_version")
    _app_version[serial] = app_version if isinstance(app_version, str) else None


def known(serial: str) -> bool:
    return serial in _capabilities


def runtimes(serial: str) -> dict[str, object]:
    return dict(_capabilities.get(serial) or {})


def refusal(serial: str, runtime: str) -> str | None:
    """Why the installed app cannot run `runtime` (None when it announces it)."""
    caps = _capabilities.get(serial)
    version = _app_version.get(serial) or "unknown version"
    if caps is None:
        return (f"{serial}: the installed benchmark app ({version}, protocol {_protocol.get(serial, '?')}) does not "
                f"announce the {runtime} runtime; {INSTALL_FIX}")
    has = caps
    if runtime in has:
        return None
    return (f"{serial}: the installed benchmark app ({version}) has runtimes {', '.join(sorted(has)) or 'none'} only, "
            f"not {runtime}; {INSTALL_FIX}")


def check(serial: str, runtime: str) -> None:
    why = refusal(serial, runtime)
    if why is not None:
        raise DeviceError(why, kind="install", transient=False)


def runtime_extras(link: Link, artifact: Artifact, settings: BenchSettings, run_id: str, timeouts: Timeouts,
                   cancel: threading.Event | None) -> dict[str, str]:
    """The extras the unit's runtime needs (none for LiteRT); a runtime the installed app does not announce
    is refused here, before anything is pushed (the app's capabilities are asked for once if unknown)."""
    try:
        extras = get_runtime(artifact.runtime).app_extras(artifact.path)
    except ValueError as exc:
        raise DeviceError(f"{link.serial}: {exc}", kind="artifact", transient=False) from exc
    if not extras:
        return extras
    if not known(link.serial):
        learn(link.serial, probe(link, run_id, timeouts, cancel))
    check(link.serial, artifact.runtime)
    if settings.require_full_delegation:
        raise DeviceError(f"{link.serial}: require_full_delegation with {artifact.runtime}: the app's runtime names "
                          "the program's delegates but not how many nodes they took", kind="settings", transient=False)
    return extras


def probe(link: Link, run_id: str, timeouts: Timeouts, cancel: threading.Event | None) -> BenchBlock:
    """A launch with only report_path and run_id: the app answers with an `args` report (missing
    model_path) that, from protocol 3 on, carries its capabilities."""
    launch_id = f"{run_id}-probe-{os.urandom(4).hex()}"
    report = f"{REPORTS_DIR}/{launch_id}.json"
    quick = BenchSettings(min_seconds=0.0, warmup_seconds=0.0, max_seconds=1.0)
    try:
        watch = LogWatch(link, timeouts.shell_s)
        started = time.monotonic()
        link.shell(["am", "start", "-S", "-W", "-n", COMPONENT, "--es", "report_path", report, "--es", "run_id",
                    launch_id], timeout=timeouts.launch_s)
        return parse_report(link, wait_report(link, report, watch, timeouts, quick, started, cancel), launch_id)
    finally:
        cleanup(link, report, f"{MODELS_DIR}/none", timeouts.shell_s, stop_app=False)
