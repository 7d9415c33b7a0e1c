"""What a device says about itself, as types: its static facts (`info()`, the report's `device`
block), its live state (`snapshot()`, a report's `state_before`/`state_after`), and the rows that
`nnlite devices` and the cluster list.

TypedDicts rather than dataclasses: these are JSON, written into reports and sent between nodes,
and read back by key; the keys are the ones the reports have always had. A device's facts and state
have every key optional (total=False): a device that could not be read gives the keys it has, and
`error`.
"""

from __future__ import annotations

from typing import TypedDict

# /proc/meminfo's four NN-Lite figures (kB): total_ram_kb, free_ram_kb, available_ram_kb, cached_kb.
MemoryKb = dict[str, int | None]


class ArmCpu(TypedDict):
    """What an ARM /proc/cpuinfo says of its cores."""

    implementer: str | None
    architecture: str | None
    parts: list[str]
    features: str | None
    hardware: str | None


class CpuFacts(TypedDict, total=False):
    """/proc/cpuinfo's summary (analytics.parse_cpuinfo); an adb device adds each core's top frequency."""

    cpu_cores: int
    model_name: str | None
    vendor_id: str | None
    flags_count: int | None
    arm_architecture: ArmCpu | None
    max_freq_khz: dict[str, int]


class Battery(TypedDict):
    """`dumpsys battery`: level (%), temperature (C), status code, what it is plugged into."""

    level: int | None
    temperature_c: float | None
    status: int | None
    plugged: str | None


# What ensure_app did with the benchmark app; "from" (the versionCode it replaced) is a keyword in Python.
AppStatus = TypedDict("AppStatus", {"action": str, "from": int | None, "version_code": int | None,
                                    "apk": str | None}, total=False)


class DeviceInfo(TypedDict, total=False):
    """A device's static facts: the report's `device` block. The host, an adb device and a device on
    another node each give the keys they know."""

    serial: str
    kind: str  # "host" | "phone" | "emulator" | "simulated"
    model: str | None
    manufacturer: str | None
    os: str
    os_version: str | None
    kernel: str | None
    abi: str | None
    soc: str | None
    emulator: bool | None
    cpu: CpuFacts | None
    cpu_count: int | None
    error: str  # the device could not be read; the other values are None
    # The host's
    hostname: str
    python: str
    # An adb device's
    brand: str | None
    device: str | None
    product: str | None
    release: str | None
    sdk: int | None
    build_id: str | None
    fingerprint: str | None
    abis: list[str]
    soc_manufacturer: str | None
    soc_model: str | None
    board_platform: str | None
    hardware: str | None
    emulator_signals: list[str]
    total_ram_kb: int | None
    thermal_zones: list[str]
    cpus: list[int]
    app: AppStatus | None
    # A device on another node (cluster/remote_device.py)
    node: str
    node_serial: str | None


class DeviceSnapshot(TypedDict, total=False):
    """A device's live state: memory (kB), CPU frequencies (kHz), temperatures (C), load, battery."""

    timestamp: float
    memory: MemoryKb
    cpu_freq_khz: dict[str, int]
    thermal_c: dict[str, float]
    max_temperature_c: float | None
    load_average: list[float] | None
    battery: Battery | None
    error: str  # the device could not be read: every value is None


class Transport(TypedDict):
    """One device the adb server lists, in its state (device, offline, unauthorized, ...)."""

    serial: str
    state: str


class _DeviceRowKeys(TypedDict):
    serial: str
    kind: str
    state: str
    model: str | None
    android: str | None
    abi: str | None


class DeviceRow(_DeviceRowKeys, total=False):
    """One row of `nnlite devices`: serial, kind, state, model, Android version, ABI, and for an adb
    device whether it is an emulator (None until it can be read)."""

    emulator: bool | None


class EmulatorRow(TypedDict):
    """An emulator the adb server lists: its AVD, and our PID when nnlite started it."""

    serial: str
    state: str
    avd: str | None
    avd_started: str | None
    pid: int | None


class NodeDevices(TypedDict, total=False):
    """What one cluster node has (cluster/device_actor.py DeviceService.describe)."""

    node: str
    node_id: str
    devices: list[DeviceRow]
    notes: list[str]
    resources: dict[str, float]  # added by the driver: the node's Ray resources
