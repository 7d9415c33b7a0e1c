"""Device analytics: parse what Linux and Android expose (meminfo, cpuinfo, thermal, cpufreq, props).

The parsers take text so that one implementation serves the host (files read locally) and adb
devices (the same files read with `adb shell cat`). Everything returned is measured; a value that
cannot be read is None, never a guess.
"""

from __future__ import annotations

import re

from nnlite_tui.core.devices.facts import ArmCpu, Battery, CpuFacts, MemoryKb

MEMINFO_KEYS = {"MemTotal": "total_ram_kb", "MemFree": "free_ram_kb", "MemAvailable": "available_ram_kb",
                "Cached": "cached_kb"}


def parse_meminfo(text: str) -> MemoryKb:
    """The four NN-Lite memory figures (kB) from /proc/meminfo."""
    values: MemoryKb = {v: None for v in MEMINFO_KEYS.values()}
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        if key.strip() in MEMINFO_KEYS:
            number = rest.strip().split()
            if number and number[0].isdigit():
                values[MEMINFO_KEYS[key.strip()]] = int(number[0])
    return values


def parse_cpuinfo(text: str) -> CpuFacts:
    """Cores, model and architecture from /proc/cpuinfo, on x86 and ARM alike.

    x86 has one block per logical CPU with `processor`, `model name`; ARM (arm64) has one block per
    CPU with `processor`, `CPU implementer`, `CPU part`, and often a trailing block with `Hardware`.
    Cores are counted by `processor` lines, which both have, so a trailing block is never a core.
    """
    blocks: list[dict[str, str]] = []
    current: dict[str, str] = {}
    for line in text.splitlines() + [""]:
        if not line.strip():
            if current:
                blocks.append(current)
                current = {}
            continue
        key, sep, value = line.partition(":")
        if sep:
            current[key.strip().lower()] = value.strip()
    processors = [b for b in blocks if "processor" in b and b["processor"].isdigit()]
    extra = {k: v for b in blocks if b not in processors for k, v in b.items()}
    first = processors[0] if processors else {}
    model = first.get("model name") or extra.get("model name") or extra.get("hardware") or first.get("cpu model")
    arm: ArmCpu | None = None
    if "cpu implementer" in first or "cpu architecture" in first:
        parts = sorted({b.get("cpu part", "") for b in processors} - {""})
        arm = {
            "implementer": first.get("cpu implementer"),
            "architecture": first.get("cpu architecture"),
            "parts": parts,
            "features": first.get("features"),
            "hardware": extra.get("hardware"),
        }
    return {
        "cpu_cores": len(processors),
        "model_name": model,
        "vendor_id": first.get("vendor_id"),
        "flags_count": len(first.get("flags", "").split()) if first.get("flags") else None,
        "arm_architecture": arm,
    }


def parse_freqs(pairs: dict[int, str]) -> dict[str, int]:
    """{cpu index: scaling_cur_freq text} -> {"cpuN": kHz} for the readable ones."""
    out = {}
    for cpu, text in sorted(pairs.items()):
        text = text.strip()
        if text.isdigit():
            out[f"cpu{cpu}"] = int(text)
    return out


def parse_thermal(zones: dict[str, tuple[str, str]]) -> dict[str, float]:
    """{zone: (type, temp text)} -> {type or zone: degrees C}. Millidegrees are scaled."""
    out: dict[str, float] = {}
    for zone, (kind, temp) in sorted(zones.items()):
        temp = temp.strip()
        if not re.fullmatch(r"-?\d+", temp):
            continue
        value = int(temp)
        celsius = value / 1000.0 if abs(value) >= 200 else float(value)
        name = kind.strip() or zone
        if name in out:
            name = f"{name}:{zone}"
        out[name] = celsius
    return out


def parse_battery(text: str) -> Battery:
    """Level (%) and temperature (C) from `dumpsys battery` (temperature is in tenths of a degree)."""
    out: Battery = {"level": None, "temperature_c": None, "status": None, "plugged": None}
    for line in text.splitlines():
        key, sep, value = line.strip().partition(":")
        if not sep:
            continue
        key, value = key.strip().lower(), value.strip()
        if key == "level" and value.lstrip("-").isdigit():
            out["level"] = int(value)
        elif key == "temperature" and value.lstrip("-").isdigit():
            out["temperature_c"] = int(value) / 10.0
        elif key == "status" and value.isdigit():
            out["status"] = int(value)
        elif key in ("ac powered", "usb powered") and value == "true":
            out["plugged"] = key.split()[0]
    return out


def parse_getprop(text: str) -> dict[str, str]:
    """`getprop` output lines `[key]: [value]` -> dict."""
    props = {}
    for match in re.finditer(r"^\[([^\]]+)\]: \[(.*)\]\s*$", text, re.M):
        props[match.group(1)] = match.group(2)
    return props


def max_temperature(thermal: dict[str, float]) -> float | None:
    """The hottest plausible sensor reading (ignores sentinel values such as -273 or 0)."""
    plausible = [t for t in thermal.values() if 1.0 <= t <= 150.0]
    return max(plausible) if plausible else None
