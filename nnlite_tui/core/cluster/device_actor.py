"""Actors on a device's node: one service per node that lists its devices, one actor per device.

The service lists the node's adb devices (through the node's own adb server: its
ANDROID_ADB_SERVER_PORT) and its host. A DeviceActor holds the real Device (AdbDevice or
LocalDevice) and runs its calls on that node, one at a time (a lock; cancel and kill_children
pass beside it). When the node was started with the custom resource `device:<node>:<serial>`,
the actor holds it, so a second run (or anything else Ray schedules) that wants the device waits
until this run lets it go.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
import time
from pathlib import Path
import ray

from nnlite_tui.core.outcomes import Artifact
from nnlite_tui.core.bench.settings import BenchSettings
from nnlite_tui.core.cluster import session, transfer
from nnlite_tui.core.devices.base import BenchBlock, Device, DeviceError
from nnlite_tui.core.devices.facts import DeviceInfo, DeviceRow, DeviceSnapshot, NodeDevices
from nnlite_tui.core.events import Event, RecordingReporter


def resource_name(node: str, serial: str) -> str:
    return f"device:{node}:{serial}"


@ray.remote(num_cpus=0)
class DeviceService:
    """What one node has: its name, its adb devices and its host."""

    def describe(self) -> NodeDevices:
        from nnlite_tui.core.devices.local import host_info

        host = host_info()
        rows: list[DeviceRow] = [{"serial": "host", "kind": "host", "state": "device", "model": host.get("model"),
                 "android": None, "abi": host.get("abi")}]
        notes = []
        try:
            from nnlite_tui.core.devices import adb

            rows += [adb.describe(d["serial"], d["state"]) for d in adb.attached()]
        except DeviceError as err:
            notes.append(f"adb: {err}")
        except ImportError as err:
            notes.append(f"adb: {err}")
        return {"node": session.node_name(), "node_id": ray.get_runtime_context().get_node_id(),
                "devices": rows, "notes": notes}


# Ray's stubs lack the actor options.
@ray.remote(num_cpus=0, max_concurrency=4)  # type: ignore[call-overload]
class DeviceActor:
    def __init__(self, serial: str, apk: bytes | None = None, apk_name: str = "app.apk"):
        self.scratch = Path(tempfile.mkdtemp(prefix="nnlite-device-"))
        self._lock = threading.Lock()
        self._cancel = threading.Event()
        self.device: Device
        if serial == "host":
            from nnlite_tui.core.devices.local import LocalDevice

            self.device = LocalDevice()
        else:
            from nnlite_tui.core.devices.adb import AdbDevice

            apk_path = None
            if apk is not None:
                apk_path = self.scratch / apk_name
                apk_path.write_bytes(apk)
            self.device = AdbDevice(serial, apk=str(apk_path) if apk_path else None)

    def kind(self) -> str:
        return self.device.kind

    def prepare(self) -> list[Event]:
        """The events prepare() emitted, for the driver to re-emit; raises DeviceError."""
        reporter = RecordingReporter()
        with self._lock:
            self.device.prepare(reporter)
        return reporter.events

    def info(self) -> DeviceInfo:
        with self._lock:
            return self.device.info()

    def snapshot(self) -> DeviceSnapshot:
        with self._lock:
            return self.device.snapshot()

    def benchmark(self, chunks: list, runtime: str, suffix: str, settings: BenchSettings,
                  run_id: str, input_ranges: tuple = ()) -> tuple[BenchBlock, float]:
        """The result block, and the seconds the device itself took (the cluster's cost is the rest)."""
        with self._lock:
            self._cancel.clear()
            path = self.scratch / f"model{suffix}"
            transfer.write_file(chunks, path)
            started = time.monotonic()
            try:
                return (self.device.benchmark(Artifact(str(path), runtime, tuple(input_ranges)), settings, run_id,
                                              self._cancel),
                        time.monotonic() - started)
            finally:
                path.unlink(missing_ok=True)

    def cancel(self) -> None:
        self._cancel.set()

    def recover(self, level: int) -> tuple[bool, list[Event]]:
        reporter = RecordingReporter()
        with self._lock:
            ok = self.device.recover(level, reporter)
        return ok, reporter.events

    def kill_children(self) -> None:
        self._cancel.set()
        self.device.kill_children()

    def close(self) -> None:
        self.device.close()
        shutil.rmtree(self.scratch, ignore_errors=True)
