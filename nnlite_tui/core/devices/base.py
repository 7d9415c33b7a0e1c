"""The Device protocol: what the pipeline needs from anything that can benchmark a converted model."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Protocol

from nnlite_tui.core.bench.settings import BenchSettings
from nnlite_tui.core.devices.facts import DeviceInfo, DeviceSnapshot
from nnlite_tui.core.events import Reporter
from nnlite_tui.core.outcomes import Artifact


# The benchmark protocol's result block (android-app/PROTOCOL.md), as JSON: valid, stats, samples, the
# settings used, the log... The app's is untrusted and the host's comes back from another process, so
# a value is narrowed where it is read; the report's model (results/model.py Benchmark) validates it.
BenchBlock = dict[str, object]


class DeviceError(Exception):
    """A fault of the device or its link, not of the model: transient, worth a retry or recovery."""

    def __init__(self, message: str, *, kind: str = "device", transient: bool = True):
        self.kind = kind  # "offline" | "timeout" | "adb" | "crash" | "install" | "device"
        self.transient = transient
        super().__init__(message)


class DeviceSpecError(ValueError):
    """A --device value that names no usable device."""


class Device(Protocol):
    serial: str
    kind: str  # "host" | "phone" | "emulator" | "simulated"

    def prepare(self, reporter: Reporter) -> None:
        """Make the device ready (boot, install the app); raises DeviceError."""

    def info(self) -> DeviceInfo:
        """Static facts: model, manufacturer, os_version, sdk, abi, soc, emulator (bool), cpu."""

    def snapshot(self) -> DeviceSnapshot:
        """Live state: memory (kB), temperatures (C), CPU frequencies (kHz), load, battery."""

    def ready_for_benchmark(self, cancel: threading.Event | None = None) -> None:
        """Get ready for the next benchmark before other work is held back (the host starts its
        benchmark process here); a no-op where nothing on this host needs to start."""

    def benchmark(self, artifact: Artifact, settings: BenchSettings, run_id: str,
                  cancel: threading.Event | None = None,
                  progress: Callable[[str], None] | None = None) -> BenchBlock:
        """The protocol's result block (valid or not) for the artifact in its runtime; raises
        DeviceError for device faults (a runtime the device does not have is one, not transient).
        `progress` is handed each phase line (core/progress.py) as the benchmark gets there, where
        the device can tell (the host's benchmark process does)."""

    def recover(self, level: int, reporter: Reporter) -> bool:
        """Escalating recovery (1 reconnect, 2 restart what we own); True if it may work again."""

    def pin_cpus(self, cpus: list[int] | None) -> None:
        """The cores benchmarks run on (measurement isolation on the host); others ignore it."""

    def kill_children(self) -> None:
        """Stop any process this device object started for the benchmark in flight (stop-now)."""

    def close(self) -> None: ...
