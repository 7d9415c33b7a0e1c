"""SimDevice: one simulated Android device that the real adb server connects to.

Run it inside an event loop (`await sim.serve()`, what `nnlite sim-device` does) or in a
background thread (`sim.start()` ... `sim.stop()`, what tests do). Thread-mode methods are safe
to call from any thread: they hop onto the device's loop.

It listens on a loopback port and, when `register` is on, announces itself to the adb server with
`host:emulator:<port>` so it is listed as `emulator-<port-1>`; otherwise `adb connect host:port`.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass, field

from nnlite_tui.simdevice.app import BenchApp
from nnlite_tui.simdevice.battery import BatterySpec
from nnlite_tui.simdevice.boot import Boot, BootTimings
from nnlite_tui.simdevice.console import start_console
from nnlite_tui.simdevice.faults import Faults, FaultSpec
from nnlite_tui.simdevice.fs import DeviceFS
from nnlite_tui.simdevice.hardware import Hardware
from nnlite_tui.simdevice.screen import Screen
from nnlite_tui.simdevice.pm import PackageManager
from nnlite_tui.simdevice.profiles import DEFAULT_PROFILE, get_profile
from nnlite_tui.simdevice.protocol import DEVICE_MAX_PAYLOAD
from nnlite_tui.simdevice.threadmode import ThreadMode
from nnlite_tui.simdevice.transport import Connection

log = logging.getLogger(__name__)


@dataclass
class SimConfig:
    port: int = 0  # 0: a free loopback port
    host: str = "127.0.0.1"
    adb_server_port: int | None = None  # default: $ANDROID_ADB_SERVER_PORT or 5037
    register: bool = True  # announce as an emulator; False: reach it with `adb connect`
    profile: str = DEFAULT_PROFILE
    serial_name: str | None = None  # ro.serialno
    props: dict[str, str] = field(default_factory=dict)  # overrides of the profile's props
    features: tuple[str, ...] | None = None  # banner features; None: the profile's
    max_payload: int = DEVICE_MAX_PAYLOAD
    boot: BootTimings = field(default_factory=BootTimings)
    faults: FaultSpec = field(default_factory=FaultSpec)
    app_start_delay: float = 0.3
    console: bool = True  # the emulator console on port-1, when that port is free
    avd_name: str = "nnlite_sim"
    root: str | None = None  # sandbox directory; None: a temp dir removed at stop
    # The release of the app it plays: 3 the current one (runtimes litert and executorch, capabilities in
    # every report); 2 or 1 an older release (LiteRT only, no capabilities; 1 without protocol 2's extras).
    app_protocol: int = 3
    # The per-op profile (PROTOCOL.md 9e): "host" fills the ops block from the host's profiler; "none"
    # takes the profile extras and writes no block (as the Android app does); "unknown" refuses the
    # extras (an app build from before them).
    app_ops: str = "host"
    screen_off: bool = False  # start with the screen off and the keyguard locked (as a phone left alone)
    with_app: bool = False  # the benchmark app (of app_protocol's release) comes pre-installed
    # The battery whose counters the app's energy windows read (battery.py): load currents, update
    # rates, sign convention, noise, charging, counters that never change.
    battery: BatterySpec = field(default_factory=BatterySpec)


class SimDevice(ThreadMode):
    def __init__(self, config: SimConfig | None = None, **kwargs):
        self.config = config or SimConfig(**kwargs)
        cfg = self.config
        self.profile = get_profile(cfg.profile)
        self.props: dict[str, str] = {**self.profile.props, **cfg.props}
        if cfg.serial_name:
            self.props["ro.serialno"] = self.props["ro.boot.serialno"] = cfg.serial_name
        self.features = list(self.profile.features if cfg.features is None else cfg.features)
        self._own_root = cfg.root is None
        self.fs = DeviceFS(cfg.root or tempfile.mkdtemp(prefix="nnlite-sim-"))
        self.faults = Faults(cfg.faults)
        self.app = BenchApp(self)
        self.hardware = Hardware(self.profile, busy=lambda: self.app.running, busy_for=self.app.running_for,
                                 throttle_after=lambda: self.faults.throttle_after, battery=cfg.battery)
        self.screen = Screen(on=not cfg.screen_off, locked=cfg.screen_off)
        self.hardware.install(self.fs)
        self.pm = PackageManager(self)
        self.settings: dict[tuple[str, str], str] = {}
        self.connections: set[Connection] = set()
        self.services_seen: list[str] = []
        self.logcat_lines: list[tuple[str, str]] = []
        self.port: int | None = None
        self.console_port: int | None = None  # port-1 when the emulator console could listen there
        self.boot = Boot(cfg.boot)
        self.suspended_until = 0.0
        self._tasks: set[asyncio.Task] = set()
        self._boot_task: asyncio.Task | None = None
        self._last_register = 0.0
        self.loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()  # set once listening (or failed: then _error is set)
        self._error: BaseException | None = None
        if cfg.with_app:
            from nnlite_tui.simdevice.apk import bench_app_apk

            self.pm.preinstall(bench_app_apk(cfg.app_protocol))

    @property
    def avd_name(self) -> str:
        return self.config.avd_name

    def request_stop(self, reason: str = "stop requested") -> None:
        """Stop serving (on the loop): what the emulator console's `kill` and SIGTERM do."""
        self.stop_reason = self.stop_reason or reason
        log.info("%s: stopping (%s)", self.serial, reason)
        if self._stop is not None:
            self._stop.set()

    @property
    def packages(self):
        return self.pm.packages

    @property
    def serial(self) -> str:
        return f"emulator-{self.port - 1}" if self.config.register else f"{self.config.host}:{self.port}"

    @property
    def adb_server_port(self) -> int:
        return self.config.adb_server_port or int(os.environ.get("ANDROID_ADB_SERVER_PORT", "5037"))

    def log(self, tag: str, level: str, message: str) -> None:
        stamp = time.strftime("%m-%d %H:%M:%S", time.localtime()) + f".{int(time.time() * 1000) % 1000:03d}"
        for line in message.splitlines() or [""]:
            self.logcat_lines.append((tag, f"{stamp}  4321  4321 {level} {tag}: {line}"))
        del self.logcat_lines[:-5000]

    def log_service(self, service: str) -> None:
        self.services_seen.append(service)
        del self.services_seen[:-1000]

    # ---- running in a loop ----
    async def serve(self) -> None:
        self.loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        server = await asyncio.start_server(self._on_connect, self.config.host, self.config.port)
        self.port = server.sockets[0].getsockname()[1]
        console = await start_console(self, self.port - 1) if self.config.console and self.config.register else None
        self.console_port = self.port - 1 if console is not None else None
        self._ready.set()
        self._boot_task = self._spawn(self.boot.run(self._on_phase))
        self._spawn(self._watchdog())
        spec = self.config.faults
        for delay, action in ((spec.drop_after, lambda: self.drop_now(spec.drop_for)),
                              (spec.offline_after, lambda: self.offline_now(spec.offline_for)),
                              (spec.reboot_after, self.reboot_now)):
            if delay is not None:
                self.loop.call_later(delay, action)
        try:
            await self._stop.wait()
        finally:
            server.close()
            if console is not None:
                console.close()
            self.app.stop_all()
            self._close_connections()
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
            await asyncio.sleep(0.05)  # let transports finish closing
            if self._own_root:
                shutil.rmtree(self.fs.root, ignore_errors=True)

    def _spawn(self, coro) -> asyncio.Task:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _on_connect(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.boot.phase == "absent" or time.monotonic() < self.suspended_until:
            writer.close()
            return
        conn = Connection(self, reader, writer)
        self.connections.add(conn)
        await conn.run()

    def _on_phase(self, phase: str) -> None:
        props = self.props
        if phase == "absent":
            for key in ("sys.boot_completed", "dev.bootcomplete", "service.bootanim.exit"):
                props.pop(key, None)
            props["init.svc.bootanim"] = "running"
        elif phase == "offline":
            self._spawn(self.register())
        elif phase == "booted":
            props.update({"sys.boot_completed": "1", "dev.bootcomplete": "1", "service.bootanim.exit": "1",
                          "init.svc.bootanim": "stopped"})
        log.info("%s: %s", self.serial, phase)

    async def register(self) -> bool:
        """Announce ourselves to the adb server (`host:emulator:<port>`; the server sends no reply)."""
        if not self.config.register:
            return False
        self._last_register = time.monotonic()
        request = f"host:emulator:{self.port}".encode()
        try:
            _reader, writer = await asyncio.open_connection("127.0.0.1", self.adb_server_port)
        except OSError as exc:
            log.debug("adb server on %s not reachable: %s", self.adb_server_port, exc)
            return False
        writer.write(b"%04x" % len(request) + request)
        await writer.drain()
        writer.close()
        return True

    async def _watchdog(self) -> None:
        """Re-register when the server lost us (it restarted, or a fault dropped the link)."""
        while True:
            await asyncio.sleep(0.5)
            now = time.monotonic()
            if (self.config.register and self.boot.at_least("offline") and not self.connections
                    and now >= self.suspended_until and now - self._last_register > 2.0):
                await self.register()

    def _close_connections(self) -> None:
        for conn in list(self.connections):
            conn.close()

    # ---- faults, on the loop ----
    def drop_now(self, duration: float = 1.0) -> None:
        self.suspended_until = time.monotonic() + duration
        self._close_connections()
        self.loop.call_later(duration, lambda: self._spawn(self.register()))

    def offline_now(self, duration: float = 5.0) -> None:
        self.boot.held_offline_until = time.monotonic() + duration
        self.boot.update_gate()
        self._close_connections()
        self._spawn(self.register())
        self.loop.call_later(duration + 0.01, self.boot.update_gate)

    def reboot_now(self) -> None:
        self.log("ActivityManager", "I", "rebooting")
        self.app.stop_all()
        if self._boot_task is not None:
            self._boot_task.cancel()
        self.boot.set_phase("absent")
        self._on_phase("absent")
        self._close_connections()
        self.hardware.booted_at = time.monotonic()
        timings = self.boot.timings
        if timings.absent < 0.5:  # a reboot is never instant: the server must see us go away
            self.boot.timings = BootTimings(0.5, timings.offline, timings.booting, timings.pm_delay)
        self._boot_task = self._spawn(self.boot.run(self._on_phase))

    def schedule_reboot(self, delay: float) -> None:
        self.loop.call_later(delay, self.reboot_now)

    def host_path(self, device_path: str):
        return self.fs.resolve(device_path)
