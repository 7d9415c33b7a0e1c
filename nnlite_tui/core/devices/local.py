"""The host device: each runtime's interpreter on this machine's CPU, one benchmark process per model."""

from __future__ import annotations

import json
import os
import platform
import signal
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from nnlite_tui.core.devices import analytics
from nnlite_tui.core.bench.settings import BenchSettings
from nnlite_tui.core.devices.base import BenchBlock, DeviceError
from nnlite_tui.core.devices.facts import DeviceInfo, DeviceSnapshot
from nnlite_tui.core.devices.host_process import BenchProcess, wait_for_quiet_starts
from nnlite_tui.core.events import DeviceState, Reporter
from nnlite_tui.core.outcomes import Artifact
from nnlite_tui.core.runtimes.default import DEFAULT_RUNTIME


# 2 MB pages for the benchmark process's heap, where LiteRT/XNNPACK keep packed weights and
# activations (glibc >= 2.35 reads this tunable, older ones ignore it). On a virtual machine, which
# guest pages a memory-bound model lands on can move its median between otherwise identical
# benchmarks; bench/isolation_check.py measures the gap and noise floor with and without huge
# pages (--no-huge-pages), and bench/README.md gives its figures.
HUGE_PAGES_TUNABLE = "glibc.malloc.hugetlb=1"


def bench_env(huge_pages: bool = True) -> dict[str, str]:
    env = dict(os.environ)
    current = env.get("GLIBC_TUNABLES", "")
    if huge_pages and "glibc.malloc.hugetlb" not in current:
        env["GLIBC_TUNABLES"] = f"{current}:{HUGE_PAGES_TUNABLE}" if current else HUGE_PAGES_TUNABLE
    return env


def _read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def _os_release() -> str:
    for line in _read("/etc/os-release").splitlines():
        if line.startswith("PRETTY_NAME="):
            return line.split("=", 1)[1].strip().strip('"')
    return ""


def host_info() -> DeviceInfo:
    cpu = analytics.parse_cpuinfo(_read("/proc/cpuinfo"))
    uname = platform.uname()
    distro = _os_release()
    return {
        "serial": "host",
        "kind": "host",
        "model": cpu.get("model_name") or uname.machine,
        "manufacturer": cpu.get("vendor_id"),
        "hostname": uname.node,
        "os_version": f"{uname.system} {uname.release}" + (f" ({distro})" if distro else ""),
        "os": uname.system,
        "kernel": uname.release,
        "abi": uname.machine,
        "soc": None,
        "emulator": False,
        "cpu": cpu,
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
    }


def host_snapshot() -> DeviceSnapshot:
    freqs = {}
    zones = {}
    cpu_root = Path("/sys/devices/system/cpu")
    for d in sorted(cpu_root.glob("cpu[0-9]*")):
        text = _read(str(d / "cpufreq" / "scaling_cur_freq"))
        if text:
            freqs[int(d.name[3:])] = text
    for zone in sorted(Path("/sys/class/thermal").glob("thermal_zone*")):
        zones[zone.name] = (_read(str(zone / "type")), _read(str(zone / "temp")))
    thermal = analytics.parse_thermal(zones)
    return {
        "timestamp": time.time(),
        "memory": analytics.parse_meminfo(_read("/proc/meminfo")),
        "cpu_freq_khz": analytics.parse_freqs(freqs),
        "thermal_c": thermal,
        "max_temperature_c": analytics.max_temperature(thermal),
        "load_average": list(os.getloadavg()),
        "battery": None,
    }


class LocalDevice:
    """Benchmarks on the host. `cpus` pins the benchmark process (measurement isolation).

    With `prestart` (default; NNLITE_HOST_PRESTART=0 turns it off), the process for the next model is
    started and has imported the runtime before that model is due (see host_process.py);
    `ready_for_benchmark()` waits for it, so that the isolation entered after it covers only the
    model's load and timing. It imports one runtime, the last benchmarked one's (at first the run's
    first): a LiteRT benchmark never shares its process with ExecuTorch's torch, nor the reverse. A
    model of the other runtime replaces it with a process of its own (its start-up then falls inside
    the isolation, once per switch)."""

    kind = "host"

    def __init__(self, serial: str = "host", cpus: list[int] | None = None, timeout_s: float = 600.0,
                 huge_pages: bool = True, prestart: bool | None = None, runtimes: tuple[str, ...] = (DEFAULT_RUNTIME,),
                 powercap_root: str | None = None):
        self.serial = serial
        self.powercap_root = powercap_root  # where RAPL's counters are (host_energy.py); tests give their own
        self.runtimes = runtimes  # the run's runtimes
        self._next_runtime = runtimes[0] if runtimes else DEFAULT_RUNTIME  # what a process started ahead imports
        self.cpus = cpus
        self.huge_pages = huge_pages
        self.timeout_s = timeout_s
        self.prestart = os.environ.get("NNLITE_HOST_PRESTART", "1") != "0" if prestart is None else prestart
        self._info: DeviceInfo | None = None
        self._proc: BenchProcess | None = None  # the process timing a model now
        self._spare: BenchProcess | None = None  # the next one, started ahead
        self._lock = threading.Lock()
        self._closed = False  # closed (run over): no process is started ahead any more

    def prepare(self, reporter: Reporter) -> None:
        info = self.info()
        snap = self.snapshot()
        reporter.emit(DeviceState(serial=self.serial, state="idle", kind="host", detail=info["model"] or "",
                                  temperature_c=snap["max_temperature_c"],
                                  mem_available_kb=snap["memory"]["available_ram_kb"]))
        self._closed = False
        if self.prestart:
            self._spare_process()

    def info(self) -> DeviceInfo:
        if self._info is None:
            self._info = {**host_info(), "serial": self.serial}  # the name this run knows the host by
        return self._info

    def snapshot(self) -> DeviceSnapshot:
        return host_snapshot()

    def ready_for_benchmark(self, cancel: threading.Event | None = None) -> None:
        """Wait (conversions still running) until the next benchmark's process has started up."""
        if self.prestart:
            self._spare_process().wait_ready(time.monotonic() + self.timeout_s, cancel)

    def _spare_process(self) -> BenchProcess:
        env = bench_env(self.huge_pages)
        with self._lock:
            spare = self._spare
            runtimes = (self._next_runtime,)
            if spare is None or not spare.fits(self.cpus, env, runtimes):
                if spare is not None:
                    spare.kill()  # pinned to other cores, of another runtime, or died: not for the next model
                spare = self._spare = BenchProcess(self.cpus, env, runtimes,
                                                   (self.powercap_root,) if self.powercap_root else ())
            return spare

    def _take_process(self) -> BenchProcess:
        spare = self._spare_process()
        with self._lock:
            self._spare = None
            self._proc = spare
        return spare

    def benchmark(self, artifact: Artifact, settings: BenchSettings, run_id: str,
                  cancel: threading.Event | None = None,
                  progress: Callable[[str], None] | None = None) -> BenchBlock:
        self._next_runtime = artifact.runtime
        proc = self._take_process()
        with tempfile.TemporaryDirectory(prefix="nnlite-bench-") as own:
            tmp = str(proc.exchange or own)  # a sandboxed process sees only its exchange directory
            args_path = os.path.join(tmp, "args.json")
            result_path = os.path.join(tmp, "result.json")
            with open(args_path, "w") as f:
                json.dump({"model_path": proc.hand_over(artifact.path), "runtime": artifact.runtime,
                           "settings": settings.to_dict(), "input_ranges": list(artifact.input_ranges),
                           "run_id": run_id, "cpus": self.cpus, "result_path": result_path,
                           "powercap_root": self.powercap_root}, f)
            proc.on_phase = progress
            # The energy windows (settle, idle, load) come on top of the benchmark's own time.
            limit = self.timeout_s + (1.0 + 2 * settings.energy_seconds if settings.energy else 0.0)
            deadline = time.monotonic() + limit
            try:
                proc.wait_ready(deadline, cancel)
                wait_for_quiet_starts(deadline)  # another host device's next process may be importing
                proc.run_model(args_path)
                code = proc.wait_exit(deadline, cancel, f"host benchmark took longer than {limit:g} s")
            finally:
                with self._lock:
                    self._proc = None
            if self.prestart and not self._closed and not (cancel is not None and cancel.is_set()):
                self._spare_process()  # the next model's process imports while conversions run again
            output = proc.output()
            why = f"signal {signal.Signals(-code).name}" if code and code < 0 else f"exit code {code}"
            saved = os.path.exists(result_path)
            if not saved or (code != 0 and not settings.profile_ops):
                proc.release()
                tail = output.strip().splitlines()[-1:] if output.strip() else []
                raise DeviceError(f"benchmark process died ({why}){': ' + tail[0] if tail else ''}", kind="crash")
            try:
                with open(result_path) as f:
                    result = json.load(f)
            finally:
                proc.release()
            result["model_path"] = artifact.path  # not the copy a sandboxed process loaded
            if code != 0:  # died in the profiled pass, after saving the timed result
                from nnlite_tui.core.ops.block import SCHEMA_VERSION as OPS_SCHEMA_VERSION

                result["ops"] = {"schema_version": OPS_SCHEMA_VERSION, "kernel_mode": settings.profile_ops, "ops": [],
                                 "error": f"the profiled pass crashed the benchmark process ({why})"}
        result["log"] = output[-4000:]
        return result

    def pin_cpus(self, cpus: list[int] | None) -> None:
        self.cpus = cpus

    def kill_children(self) -> None:
        proc = self._proc
        if proc is not None:
            proc.kill()

    def recover(self, level: int, reporter: Reporter) -> bool:
        return True  # nothing to reconnect: the next benchmark starts a fresh process

    def close(self) -> None:
        self._closed = True
        self.kill_children()
        with self._lock:
            spare, self._spare = self._spare, None
        if spare is not None:
            spare.kill()
