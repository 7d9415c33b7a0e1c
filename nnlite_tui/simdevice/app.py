"""The benchmark app (org.nnlite.bench), simulated.

`am start -n org.nnlite.bench/.BenchActivity --es model_path ... --es report_path ... --es run_id ...`
starts, after a realistic delay, a worker subprocess (nnlite_tui.simdevice.bench_worker) that runs
the real benchmark (core.bench.benchmark_result: LiteRT's interpreter, or ExecuTorch's runtime for a
.pte sent with `--es runtime executorch`, on the host CPU) on the pushed model and writes the report
atomically (`<report>.tmp`, then rename). A subprocess keeps the
transport serving during the run and survives an interpreter crash; force-stop kills its group.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import sys
import time
from typing import TYPE_CHECKING

from nnlite_tui.simdevice.bench_args import JavaLong

if TYPE_CHECKING:
    from nnlite_tui.simdevice.device import SimDevice

log = logging.getLogger(__name__)

PACKAGE = "org.nnlite.bench"
ACTIVITY = "org.nnlite.bench.BenchActivity"
COMPONENT = "org.nnlite.bench/.BenchActivity"
VERSION_NAMES = {1: "0.1.0", 2: "0.2.0", 3: "0.3.0"}  # the app release that speaks each protocol
VERSION_CODES = {1: 1, 2: 2, 3: 3}  # and its versionCode (android-app/app/build.gradle.kts)
REPORTS_DIR = "/sdcard/Android/data/org.nnlite.bench/files/reports"
MODELS_DIR = "/data/local/tmp/nnlite"
TAG = "NNLiteBench"
STATUS_NAMES = ("none", "light", "moderate", "severe", "critical", "emergency", "shutdown")
# Where an untrusted app may write: its own external files dir and its private data dir.
WRITABLE = ("/storage/emulated/0/Android/data/org.nnlite.bench/", "/data/data/org.nnlite.bench/",
            "/data/user/0/org.nnlite.bench/")


def device_block(props: dict[str, str]) -> dict[str, object]:
    """The report's `device` object, from Build fields (here: the sim's getprop values)."""
    sdk = props.get("ro.build.version.sdk", "0")
    sdk_int = int(sdk) if sdk.isdigit() else 0
    return {"manufacturer": props.get("ro.product.manufacturer", ""), "model": props.get("ro.product.model", ""),
            "brand": props.get("ro.product.brand", ""), "device": props.get("ro.product.device", ""),
            "product": props.get("ro.product.name", ""), "board": props.get("ro.product.board", ""),
            "hardware": props.get("ro.hardware", ""),
            # Build.SOC_MANUFACTURER / SOC_MODEL exist from API 31
            "soc_manufacturer": props.get("ro.soc.manufacturer") if sdk_int >= 31 else None,
            "soc_model": props.get("ro.soc.model") if sdk_int >= 31 else None,
            "abis": [a for a in props.get("ro.product.cpu.abilist", "").split(",") if a],
            "sdk_int": sdk_int, "release": props.get("ro.build.version.release", ""),
            "build_id": props.get("ro.build.id", ""), "fingerprint": props.get("ro.build.fingerprint", "")}


class BenchApp:
    def __init__(self, device: "SimDevice"):
        self.device = device
        self.proc: asyncio.subprocess.Process | None = None
        self.spare: asyncio.subprocess.Process | None = None  # the next launch's process, imports done
        self.task: asyncio.Task | None = None
        self.launches = 0
        self.completed = 0
        self.started_at: float | None = None  # when the running launch began benchmarking (first probe read)

    @property
    def running(self) -> bool:
        return self.task is not None and not self.task.done()

    def running_for(self) -> float | None:
        """Seconds the current launch has been benchmarking (None when idle): what throttle_after counts."""
        return time.monotonic() - self.started_at if self.running and self.started_at is not None else None

    def conditions(self) -> dict[str, object]:
        """One conditions snapshot as the app's probe reads it (PowerManager, battery, screen), from
        the simulated hardware; thermal status exists from API 29, headroom from API 30."""
        hw, screen = self.device.hardware, self.device.screen
        sdk = int(self.device.props.get("ro.build.version.sdk", "0") or 0)
        status = hw.thermal_status() if sdk >= 29 else None
        return {"at_ms": int(time.time() * 1000), "thermal_status": status,
                "thermal_status_name": STATUS_NAMES[status] if status is not None else None,
                "thermal_headroom": hw.thermal_headroom() if sdk >= 30 else None,
                "battery_temperature_c": hw.battery_temperature_c(), "screen_interactive": screen.interactive,
                # The app shows over the keyguard, so it is in front whenever the screen is on.
                "foreground": screen.on, "power_save": False}

    def launch(self, package: str, activity: str, extras: dict[str, object]) -> None:
        self.launches += 1
        if package != PACKAGE or activity != ACTIVITY:
            self.device.log("ActivityTaskManager", "I", f"Displayed {package}/{activity}: +312ms")
            return
        if self.running:  # singleTop: a second start while benchmarking is ignored, as the app does
            self.device.log(TAG, "W", "benchmark already running; ignoring the new intent")
            return
        self.task = asyncio.get_running_loop().create_task(self._run(extras))
        self.task.add_done_callback(self._log_failure)

    def _log_failure(self, task: asyncio.Task) -> None:
        if not task.cancelled() and task.exception() is not None:
            log.error("simulated app failed", exc_info=task.exception())

    def force_stop(self, package: str) -> None:
        if package != PACKAGE:
            return
        self._kill()
        if self.task is not None and not self.task.done():
            self.task.cancel()
            self.task = None  # stopped now: a launch right after -S must not see it running
            self.device.log("ActivityManager", "I", f"Force stopping {PACKAGE} appid=10123 user=0: from pid 4321")

    def _kill(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass  # it exited between the check and the kill

    async def _run(self, extras: dict[str, object]) -> None:
        dev = self.device
        started_at_ms = int(time.time() * 1000)  # when the app received the intent
        self.started_at = None
        await asyncio.sleep(dev.config.app_start_delay)
        if dev.faults.take_app_crash():
            dev.log("AndroidRuntime", "E", f"FATAL EXCEPTION: main\nProcess: {PACKAGE}, PID: 4321\n"
                    "java.lang.RuntimeException: simulated crash (fault app_crash)")
            return
        model, report = extras.get("model_path"), extras.get("report_path")
        report_ok = isinstance(report, str) and bool(report.strip())
        job = {"extras": {k: ["long", int(v)] if isinstance(v, JavaLong) else v for k, v in extras.items()},
               "model_host": str(dev.fs.resolve(model)) if isinstance(model, str) and model else "",
               "report_host": str(dev.fs.resolve(report)) if report_ok else None,
               "report_writable": report_ok and dev.fs.normalize(report).startswith(WRITABLE),
               "started_at_ms": started_at_ms, "device": device_block(dev.props), "app_version": VERSION_NAMES[dev.config.app_protocol],
               "protocol": dev.config.app_protocol, "app_ops": dev.config.app_ops,
               "truncate": dev.faults.take_truncated_report(), "input_fault": dev.faults.input_fault(), "sdk_int": device_block(dev.props)["sdk_int"],
               "battery": dev.config.battery.to_dict()}
        self.proc = proc = await self._take_worker()
        try:
            proc.stdin.write(json.dumps(job).encode() + b"\n")
            await proc.stdin.drain()
            stderr = asyncio.ensure_future(proc.stderr.read())
            while line := await proc.stdout.readline():  # log lines as they happen, as logcat would
                level, _, message = line.decode("utf-8", "replace").rstrip("\n").partition(" ")
                if level == "?":  # the worker asks what the app's probe would read now
                    if self.started_at is None:  # the first read comes just before the model is loaded
                        self.started_at = time.monotonic()
                    try:
                        proc.stdin.write(json.dumps(self.conditions()).encode() + b"\n")
                        await proc.stdin.drain()
                    except (BrokenPipeError, ConnectionResetError):
                        pass  # the worker died meanwhile: its exit status tells the story below
                    continue
                dev.log(TAG, level, message)
            proc.stdin.close()
            err = await stderr
            await proc.wait()
        except asyncio.CancelledError:
            self._kill()
            raise
        if self.spare is None:  # started after the timed runs, so its imports never share the CPU with them
            self.spare = await _spawn_worker()
        if proc.returncode == 0:
            self.completed += 1
        else:
            tail = err.decode("utf-8", "replace").strip().splitlines()[-3:]
            code = proc.returncode
            dev.log("libc" if code < 0 else "AndroidRuntime", "F" if code < 0 else "E",
                    f"Fatal signal {-code} in {PACKAGE}" if code < 0 else
                    f"FATAL EXCEPTION: main\nProcess: {PACKAGE}\n" + "\n".join(tail))

    async def _take_worker(self) -> asyncio.subprocess.Process:
        """The process for this launch: the spare one, already past its imports (as Android forks an
        app from the zygote, which has loaded the framework), else a new one."""
        proc, self.spare = self.spare, None
        if proc is None or proc.returncode is not None:
            proc = await _spawn_worker()
        return proc

    def stop_all(self) -> None:
        self.force_stop(PACKAGE)
        spare, self.spare = self.spare, None
        if spare is not None and spare.returncode is None:
            spare.kill()  # its own session: nothing else to kill; stdin EOF would end it too


async def _spawn_worker() -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "nnlite_tui.simdevice.bench_worker", stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, start_new_session=True)
