"""RemoteDevice: the Device protocol for a device attached to any node, and `--device` over a cluster.

Calls run on the device's node through its DeviceActor; the artifact travels there through the
object store. A node or actor that dies under a call is DeviceError(kind="node-lost",
transient=True), so the Runner retries within --max-attempts; once Ray says the node is dead,
recovery gives up on it and later calls fail at once (transient=False) with a report that says so.
Serials carry the node ("node2/emulator-5560"), so reports and the console keep devices apart.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable
from pathlib import Path

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from nnlite_tui.core.outcomes import Artifact
from nnlite_tui.core.bench.settings import BenchSettings
from nnlite_tui.core.cluster import transfer
from nnlite_tui.core.cluster.device_actor import DeviceActor, DeviceService, resource_name
from nnlite_tui.core.cluster.session import alive_nodes
from nnlite_tui.core.devices.adb_analytics import unread_snapshot
from nnlite_tui.core.devices.base import BenchBlock, Device, DeviceError, DeviceSpecError
from nnlite_tui.core.devices.facts import DeviceInfo, DeviceSnapshot, NodeDevices
from nnlite_tui.core.events import DeviceState, Event, Recovery, ReferenceTimed, Reporter

POLL_S = 0.2
CALL_TIMEOUT_S = 120.0
USABLE_STATES = ("device", "offline")


def _on_node(node_id: str) -> NodeAffinitySchedulingStrategy:
    return NodeAffinitySchedulingStrategy(node_id=node_id, soft=False)


def list_nodes(timeout_s: float = 60.0) -> list[NodeDevices]:
    """Every live node's description (DeviceService.describe), names made unique, by name."""
    nodes = [n for n in alive_nodes() if n.get("Resources")]
    # A class that ray.remote decorates is an ActorClass; mypy keeps the class's own type.
    services = [DeviceService.options(  # type: ignore[attr-defined]
                scheduling_strategy=_on_node(n["NodeID"])).remote() for n in nodes]
    try:
        described: list[NodeDevices] = ray.get([s.describe.remote() for s in services], timeout=timeout_s)
    finally:
        for s in services:
            ray.kill(s)
    names = [d["node"] for d in described]
    for d, n in zip(described, nodes):
        if names.count(d["node"]) > 1:  # two nodes on one host with no NNLITE_NODE_NAME
            d["node"] = f"{d['node']}-{d['node_id'][:6]}"
        d["resources"] = n.get("Resources", {})
    return sorted(described, key=lambda d: d["node"])


class RemoteDevice:
    def __init__(self, node: str, node_id: str, serial: str, kind: str, apk: str | None = None,
                 resources: dict[str, float] | None = None):
        self.node, self.node_id, self.node_serial = node, node_id, serial
        self.serial = f"{node}/{serial}"
        self.kind = kind
        self._apk = apk
        self._resources = resources or {}
        self._info: DeviceInfo | None = None
        self.gone = False
        self.last_overhead_s: float | None = None  # the last benchmark's wall time not spent on the device
        self._cancel_lock = threading.Lock()
        self.actor = self._make_actor()

    def __repr__(self) -> str:
        return f"RemoteDevice({self.serial!r})"

    def _make_actor(self):
        apk = Path(self._apk).read_bytes() if self._apk else None
        name = resource_name(self.node, self.node_serial)
        options: dict[str, object] = {"scheduling_strategy": _on_node(self.node_id), "max_restarts": 0}
        if name in self._resources:
            options["resources"] = {name: 1}
        return DeviceActor.options(**options).remote(self.node_serial, apk, Path(self._apk or "app.apk").name)

    # ----- calls -----
    def _call(self, ref, timeout: float | None = CALL_TIMEOUT_S, cancel: threading.Event | None = None):
        if self.gone:
            raise DeviceError(f"node {self.node} is gone from the cluster", kind="node-lost", transient=False)
        try:
            waited = 0.0
            while not ray.wait([ref], timeout=POLL_S)[0]:
                waited += POLL_S
                if cancel is not None and cancel.is_set():
                    self.actor.cancel.remote()
                    cancel = None  # asked once; the device's own cancel path answers
                if timeout is not None and waited > timeout:
                    raise DeviceError(f"{self.serial}: no answer from node {self.node} in {timeout:g} s",
                                      kind="node-lost", transient=True)
            return ray.get(ref)
        except ray.exceptions.RayTaskError as exc:
            if isinstance(exc.cause, DeviceError):
                raise exc.cause from None
            raise
        except ray.exceptions.RayError as exc:
            raise DeviceError(f"{self.serial}: node {self.node} or its device actor was lost "
                              f"({type(exc).__name__})", kind="node-lost", transient=True) from exc

    def _replay(self, events: list[Event], reporter: Reporter) -> None:
        for event in events:
            if isinstance(event, (DeviceState, ReferenceTimed)) and event.serial == self.node_serial:
                event = dataclasses.replace(event, serial=self.serial)
            elif isinstance(event, Recovery) and event.target == self.node_serial:
                event = dataclasses.replace(event, target=self.serial)
            reporter.emit(event)

    # ----- Device protocol -----
    def prepare(self, reporter: Reporter) -> None:
        self._replay(self._call(self.actor.prepare.remote(), timeout=None), reporter)

    def info(self) -> DeviceInfo:
        try:
            info: DeviceInfo = self._call(self.actor.info.remote())
        except DeviceError as err:  # info() never raises: the report names the device and says why
            return {**(self._info or {"kind": self.kind}), "serial": self.serial, "node": self.node,
                    "error": str(err)}
        self._info = {**info, "serial": self.serial, "node": self.node, "node_serial": info.get("serial")}
        return self._info

    def snapshot(self) -> DeviceSnapshot:
        try:
            return self._call(self.actor.snapshot.remote())
        except DeviceError as err:
            return unread_snapshot(str(err))

    def benchmark(self, artifact: Artifact, settings: BenchSettings, run_id: str,
                  cancel: threading.Event | None = None,
                  progress: Callable[[str], None] | None = None) -> BenchBlock:
        """`progress` is not used: the device's phases stay on its node (its result still carries them)."""
        if self.gone:
            self._call(None)  # raises: the node is gone
        started = time.monotonic()
        chunks = transfer.put_file(artifact.path)
        limit = 3 * settings.max_seconds + 5 * CALL_TIMEOUT_S  # a backstop: the device has its own timeouts
        try:
            block, device_s = self._call(self.actor.benchmark.remote(chunks, artifact.runtime, artifact.suffix, settings,
                                                                     run_id, artifact.input_ranges),
                                         timeout=limit, cancel=cancel)
        finally:
            del chunks  # the driver owns the pieces: dropping the refs frees them
        self.last_overhead_s = time.monotonic() - started - device_s
        return block

    def recover(self, level: int, reporter: Reporter) -> bool:
        if not self._node_alive():
            self.gone = True
            return False
        try:
            ok, events = self._call(self.actor.recover.remote(level), timeout=None)
        except DeviceError as err:
            if err.kind != "node-lost":
                raise
            self.actor = self._make_actor()  # the actor died but its node lives: start it again
            self._replay(self._call(self.actor.prepare.remote(), timeout=None), reporter)
            return True
        self._replay(events, reporter)
        return ok

    def _node_alive(self) -> bool:
        return any(n["NodeID"] == self.node_id for n in alive_nodes())

    def pin_cpus(self, cpus: list[int] | None) -> None:
        """The driver's cores mean nothing on another node."""

    def ready_for_benchmark(self, cancel: threading.Event | None = None) -> None:
        """The node's own device starts what it needs inside its benchmark call."""

    def kill_children(self) -> None:
        try:
            self.actor.kill_children.remote()
        except ray.exceptions.RayError:
            pass  # its node is gone, and everything it ran with it

    def close(self) -> None:
        try:
            ray.get(self.actor.close.remote(), timeout=10)
        except (ray.exceptions.RayError, TimeoutError):
            pass  # gone with its node: nothing of it is left to close
        try:
            ray.kill(self.actor)
        except ray.exceptions.RayError:
            pass


def resolve_cluster_devices(names: list[str], apk: str | None) -> list[Device]:
    """`--device` over the cluster: all, host (this machine), NODE/host, NODE/SERIAL or a unique SERIAL."""
    from nnlite_tui.core.devices.local import LocalDevice

    nodes = list_nodes()
    rows = [(n, d) for n in nodes for d in n["devices"]]
    found: list[Device] = []
    for name in names or ["all"]:
        if name == "host":
            found.append(LocalDevice())
            continue
        if name == "all":
            picked = [(n, d) for n, d in rows if d["serial"] != "host" and d["state"] in USABLE_STATES]
            if not picked:
                found.append(LocalDevice())
                continue
        else:
            picked = [(n, d) for n, d in rows if name in (f"{n['node']}/{d['serial']}", d["serial"])]
            if len(picked) != 1:
                seen = ", ".join(f"{n['node']}/{d['serial']}" for n, d in rows) or "none"
                what = "is on several nodes; name one as NODE/SERIAL" if picked else "names no device"
                raise DeviceSpecError(f"--device {name} {what} (cluster devices: {seen})")
        found += [RemoteDevice(n["node"], n["node_id"], d["serial"], d.get("kind") or "phone", apk=apk,
                               resources=n.get("resources")) for n, d in picked]
    unique: dict[str, Device] = {}
    for device in found:
        unique.setdefault(device.serial, device)
    return list(unique.values())
