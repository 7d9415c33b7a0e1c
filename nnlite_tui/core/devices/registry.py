"""Device resolution, in one place: `--device` values -> Device objects.

host, an adb serial, emulator:<AVD>, or all (every attached adb device; the host when none is).
The adb, emulator and host devices sit below this module and never import it; adb support is
imported only when a value needs it, so a host-only run never loads adbutils.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable

from nnlite_tui.core.devices.base import Device, DeviceError, DeviceSpecError
from nnlite_tui.core.devices.facts import Transport
from nnlite_tui.core.devices.local import LocalDevice
from nnlite_tui.core.runtimes.default import DEFAULT_RUNTIME

__all__ = ["DeviceSpecError", "resolve_devices"]

NAMED_DEVICE_WAIT_S = float(os.environ.get("NNLITE_DEVICE_WAIT_S", "30"))
# `--device all` started together with a device (a phone plugged in, `nnlite sim-device`) would miss
# it by a second and fall back to the host: ask again for this long before deciding there is none.
ANY_DEVICE_WAIT_S = float(os.environ.get("NNLITE_ANY_DEVICE_WAIT_S", "10"))


def resolve_devices(names: list[str], cfg) -> list[Device]:
    devices: list[Device] = []
    seen = set()
    runtimes = tuple(getattr(cfg, "runtimes", None) or (DEFAULT_RUNTIME,))
    for name in names or ["host"]:
        found = [LocalDevice(runtimes=runtimes)] if name == "host" else _resolve_adb(name, cfg.apk, runtimes)
        for device in found:
            if device.serial not in seen:
                seen.add(device.serial)
                devices.append(device)
    if not devices:
        raise DeviceSpecError(f"no device matched --device {' '.join(names)}")
    return devices


def _resolve_adb(name: str, apk: str | None, runtimes: tuple[str, ...] = (DEFAULT_RUNTIME,)) -> list[Device]:
    from nnlite_tui.core.devices import adb_link
    from nnlite_tui.core.devices.adb import AdbDevice, attached
    from nnlite_tui.core.devices.adb_app import Timeouts

    try:
        Timeouts.from_env()
    except ValueError as exc:
        raise DeviceSpecError(str(exc)) from exc
    if name.startswith("emulator:"):
        from nnlite_tui.core.devices.emulator import EmulatorDevice

        avd = name.split(":", 1)[1]
        if not avd:
            raise DeviceSpecError("--device emulator:<AVD> needs an AVD name, e.g. emulator:Pixel_API_34")
        return [EmulatorDevice.for_avd(avd, apk=apk)]
    try:
        listed = attached()
    except DeviceError as err:
        raise DeviceSpecError(f"--device {name}: {err}") from err
    if name == "all":
        usable = _wait_for_any(listed, attached)
        if not usable:
            print("--device all: no adb device attached; benchmarking on the host", file=sys.stderr)
            return [LocalDevice(runtimes=runtimes)]
        return [AdbDevice(d["serial"], apk=apk) for d in usable]
    listed = _wait_for_serial(name, listed, attached)
    for d in listed:
        if d["serial"] == name:
            return [AdbDevice(name, apk=apk)]
    seen = ", ".join(f"{d['serial']} ({d['state']})" for d in listed) or "none"
    raise DeviceSpecError(f"--device {name}: no such adb device (attached: {seen}; adb server on port "
                          f"{adb_link.server_port()}). Use a serial from `nnlite devices`, emulator:<AVD>, "
                          "host or all.")


def _wait_for_serial(name: str, listed: list[Transport], attached: Callable[[], list[Transport]]) -> list[Transport]:
    """A named device that is not listed may be rebooting (a resume or re-exec can start mid-reboot):
    ask again for up to NAMED_DEVICE_WAIT_S before calling the name wrong."""
    deadline = time.monotonic() + NAMED_DEVICE_WAIT_S
    if not any(d["serial"] == name for d in listed):
        print(f"--device {name}: not listed by the adb server; waiting up to {NAMED_DEVICE_WAIT_S:.0f} s",
              file=sys.stderr)
    while not any(d["serial"] == name for d in listed) and time.monotonic() < deadline:
        time.sleep(1.0)
        try:
            listed = attached()
        except DeviceError:
            continue  # the server restarting: ask again until the deadline
    return listed


def _wait_for_any(listed: list[Transport], attached: Callable[[], list[Transport]]) -> list[Transport]:
    """The usable devices (listed as device or offline), asking again up to ANY_DEVICE_WAIT_S."""
    deadline = time.monotonic() + ANY_DEVICE_WAIT_S
    usable = [d for d in listed if d["state"] in ("device", "offline")]
    while not usable and time.monotonic() < deadline:
        time.sleep(0.5)
        try:
            usable = [d for d in attached() if d["state"] in ("device", "offline")]
        except DeviceError:
            continue  # the server restarting: ask again until the deadline
    return usable
