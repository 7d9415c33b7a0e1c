"""Device analytics over adb: static facts from getprop and /proc, live state in one shell round trip.

Parsing is core.analytics' (the same parsers serve the host); this module only knows which files
and properties an Android device exposes and how to read many of them with one `adb shell`.
"""

from __future__ import annotations

import re
import time
from nnlite_tui.core.devices import analytics
from nnlite_tui.core.devices.adb_link import Link
from nnlite_tui.core.devices.base import DeviceError
from nnlite_tui.core.devices.facts import DeviceInfo, DeviceSnapshot

MARK = "@@nnlite@@"
EMULATOR_HARDWARE = ("goldfish", "ranchu")


def emulator_signals(props: dict[str, str]) -> list[str]:
    """The properties that say "emulator" (real signals, never a guess from the model name)."""
    found = []
    for key in ("ro.kernel.qemu", "ro.boot.qemu"):
        if props.get(key) == "1":
            found.append(f"{key}=1")
    if props.get("ro.hardware") in EMULATOR_HARDWARE:
        found.append(f"ro.hardware={props['ro.hardware']}")
    if "emulator" in props.get("ro.build.characteristics", "").split(","):
        found.append(f"ro.build.characteristics={props['ro.build.characteristics']}")
    return found


def _sections(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    name = None
    for line in text.splitlines(keepends=True):
        if line.startswith(MARK):
            name = line[len(MARK):].strip()
            out[name] = ""
        elif name is not None:
            out[name] += line
    return out


def read_files(link: Link, paths: dict[str, str], extra: dict[str, str] | None = None,
               timeout: float | None = None) -> dict[str, str]:
    """{name: device path} (and {name: shell command}) -> {name: text}, one shell call; unreadable: ''."""
    parts = [f"echo {MARK}{name}; cat {path} 2>/dev/null" for name, path in paths.items()]
    parts += [f"echo {MARK}{name}; {cmd} 2>/dev/null" for name, cmd in (extra or {}).items()]
    return _sections(link.shell("; ".join(parts) + "; true", timeout=timeout))


def device_facts(link: Link, kind: str) -> DeviceInfo:
    """The report's `device` block: identity, OS, ABI, SoC, emulator signals, CPU."""
    props = analytics.parse_getprop(link.shell("getprop"))
    if not props:
        raise DeviceError(f"{link.serial}: getprop returned nothing", kind="adb")
    listing = link.shell("ls /sys/class/thermal /sys/devices/system/cpu 2>/dev/null; true")
    zones = sorted(set(re.findall(r"\bthermal_zone\d+\b", listing)), key=lambda z: int(z[12:]))
    cpus = sorted({int(c) for c in re.findall(r"\bcpu(\d+)\b", listing)})
    files = {"cpuinfo": "/proc/cpuinfo", "meminfo": "/proc/meminfo", "version": "/proc/version"}
    files.update({f"max{c}": f"/sys/devices/system/cpu/cpu{c}/cpufreq/cpuinfo_max_freq" for c in cpus})
    texts = read_files(link, files)
    cpu = analytics.parse_cpuinfo(texts.get("cpuinfo", ""))
    cpu["max_freq_khz"] = analytics.parse_freqs({c: texts.get(f"max{c}", "") for c in cpus})
    release = props.get("ro.build.version.release", "")
    sdk = props.get("ro.build.version.sdk", "")
    build_id = props.get("ro.build.id", "")
    soc_mfr, soc_model = props.get("ro.soc.manufacturer", ""), props.get("ro.soc.model", "")
    signals = emulator_signals(props)
    return {
        "serial": link.serial,
        "kind": kind,
        "model": props.get("ro.product.model") or None,
        "manufacturer": props.get("ro.product.manufacturer") or None,
        "brand": props.get("ro.product.brand") or None,
        "device": props.get("ro.product.device") or None,
        "product": props.get("ro.product.name") or None,
        "os": "Android",
        "os_version": f"Android {release} (SDK {sdk}, build {build_id})",
        "release": release or None,
        "sdk": int(sdk) if sdk.isdigit() else None,
        "build_id": build_id or None,
        "fingerprint": props.get("ro.build.fingerprint") or None,
        "kernel": texts.get("version", "").strip() or None,
        "abi": props.get("ro.product.cpu.abi") or None,
        "abis": [a for a in props.get("ro.product.cpu.abilist", "").split(",") if a],
        "soc": " ".join(x for x in (soc_mfr, soc_model) if x) or props.get("ro.board.platform")
        or props.get("ro.hardware") or None,
        "soc_manufacturer": soc_mfr or None,
        "soc_model": soc_model or None,
        "board_platform": props.get("ro.board.platform") or None,
        "hardware": props.get("ro.hardware") or None,
        "emulator": bool(signals),
        "emulator_signals": signals,
        "cpu": cpu,
        "cpu_count": cpu.get("cpu_cores") or len(cpus) or None,
        "total_ram_kb": analytics.parse_meminfo(texts.get("meminfo", ""))["total_ram_kb"],
        "thermal_zones": zones,
        "cpus": cpus,
    }


def device_snapshot(link: Link, zones: list[str], cpus: list[int]) -> DeviceSnapshot:
    """Memory, CPU frequencies, thermal zones, load and battery, read in one shell call."""
    files = {"meminfo": "/proc/meminfo", "loadavg": "/proc/loadavg"}
    files.update({f"freq{c}": f"/sys/devices/system/cpu/cpu{c}/cpufreq/scaling_cur_freq" for c in cpus})
    for z in zones:
        files[f"{z}.type"] = f"/sys/class/thermal/{z}/type"
        files[f"{z}.temp"] = f"/sys/class/thermal/{z}/temp"
    texts = read_files(link, files, {"battery": "dumpsys battery"})
    thermal = analytics.parse_thermal({z: (texts.get(f"{z}.type", ""), texts.get(f"{z}.temp", "")) for z in zones})
    load = texts.get("loadavg", "").split()[:3]
    battery = analytics.parse_battery(texts.get("battery", ""))
    return {
        "timestamp": time.time(),
        "memory": analytics.parse_meminfo(texts.get("meminfo", "")),
        "cpu_freq_khz": analytics.parse_freqs({c: texts.get(f"freq{c}", "") for c in cpus}),
        "thermal_c": thermal,
        "max_temperature_c": analytics.max_temperature(thermal),
        "load_average": [float(x) for x in load] if len(load) == 3 else None,
        "battery": battery if any(v is not None for v in battery.values()) else None,
    }


def unread_snapshot(error: str) -> DeviceSnapshot:
    """The shape of device_snapshot() when the device could not be read: every value None."""
    return {"timestamp": time.time(), "memory": analytics.parse_meminfo(""), "cpu_freq_khz": {}, "thermal_c": {},
            "max_temperature_c": None, "load_average": None, "battery": None, "error": error}
