"""Turn `--device` values into Device objects: host, an adb serial, emulator:<AVD>, or all."""

from __future__ import annotations

from nnlite_tui.core.devices.local import LocalDevice


class DeviceSpecError(ValueError):
    pass


def resolve_devices(names: list[str], cfg) -> list:
    devices = []
    seen = set()
    for name in names or ["host"]:
        if name == "host":
            found = [LocalDevice()]
        else:
            try:
                from nnlite_tui.core.devices import adb
            except ImportError as exc:
                raise DeviceSpecError(f"--device {name}: adb support is not available ({exc})") from exc
            found = adb.resolve(name, cfg)
        for device in found:
            if device.serial not in seen:
                seen.add(device.serial)
                devices.append(device)
    if not devices:
        raise DeviceSpecError(f"no device matched --device {' '.join(names)}")
    return devices
