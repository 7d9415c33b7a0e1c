"""One host benchmark process, started before its model is known (host_bench --serve).

The process imports the runtime while conversions still run and then waits; LocalDevice hands it
one model and it exits after that model, so every model is still measured in a fresh process and a
crash of the interpreter still takes down only that process. A reader thread collects its output
(the READY line, then LiteRT's log), so waiting on it needs no polling and a chatty process never
blocks on a full pipe.
"""

from __future__ import annotations

import collections
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from nnlite_tui.core.convert.memory_cap import default_mem_cap_mb
from nnlite_tui.core.convert.sandbox import spawner
from nnlite_tui.core.convert.sandbox.policy import Launch
from nnlite_tui.core.devices import host_sandbox
from nnlite_tui.core.devices.base import DeviceError
from nnlite_tui.core.devices.host_bench import READY
from nnlite_tui.core.progress import MARK
from nnlite_tui.core.runtimes.default import DEFAULT_RUNTIME

LOG_LINES = 200
WAIT_STEP_S = 0.05  # how often a wait looks at its cancel event

# Benchmark processes still importing: one must not be timed while another one starts up beside it
# (two host devices in one run), so the timed side waits until this set is empty.
_starting: set[BenchProcess] = set()
_starting_changed = threading.Condition()


def wait_for_quiet_starts(deadline: float) -> None:
    with _starting_changed:
        _starting_changed.wait_for(lambda: not _starting, timeout=max(0.0, deadline - time.monotonic()))


class BenchProcess:
    def __init__(self, cpus: list[int] | None, env: dict[str, str], runtimes: tuple[str, ...] = (DEFAULT_RUNTIME,),
                 read_only: tuple[str, ...] = ()):
        self.cpus = list(cpus) if cpus else None
        self.env = env
        self.runtimes = tuple(runtimes)
        argv = [sys.executable, "-m", "nnlite_tui.core.devices.host_bench", "--serve",
                "--runtimes", ",".join(self.runtimes)]
        if self.cpus:
            argv += ["--cpus", ",".join(str(c) for c in self.cpus)]
        self.started = time.monotonic()
        self.ready_at: float | None = None
        self.ready = threading.Event()  # set when READY was printed or the process ended before it
        self.ended = threading.Event()  # set at the end of its output: the process has exited or is exiting
        self._lines: collections.deque[str] = collections.deque(maxlen=LOG_LINES)
        # Told each phase line (core/progress.py) as it comes, while the model is timed; such lines
        # are progress, not part of the benchmark's log.
        self.on_phase: Callable[[str], None] | None = None
        with _starting_changed:
            _starting.add(self)
        # In a sandbox of its own (host_sandbox.py): the artifact it loads is hostile data. exchange is
        # where the parent hands it args.json and a copy of the artifact, and reads result.json back.
        self.exchange: Path | None = None
        self.launch: Launch | None = None
        if host_sandbox.wanted():
            self.exchange = host_sandbox.exchange_dir()
            self.launch = host_sandbox.launch(argv, env, self.exchange, read_only, default_mem_cap_mb())
            # Forked by the spawner thread: bwrap's --die-with-parent follows the thread that forks it.
            self.proc = spawner.popen(self.launch.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, start_new_session=True, env=self.launch.env,
                                      pass_fds=self.launch.pass_fds)
        else:
            self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.STDOUT, start_new_session=True, env=env)
        threading.Thread(target=self._read, name=f"host-bench-{self.proc.pid}", daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        try:
            for raw in self.proc.stdout:
                line = raw.decode(errors="replace")
                if not self.ready.is_set() and line.strip() == READY:
                    self.ready_at = time.monotonic()
                    self._started_up()
                    continue
                if line.startswith(MARK):
                    on_phase = self.on_phase
                    if on_phase is not None:
                        on_phase(line.rstrip())
                    continue
                self._lines.append(line)
        finally:
            self.proc.stdout.close()
            self.ended.set()
            self._started_up()

    def _started_up(self) -> None:
        self.ready.set()
        with _starting_changed:
            _starting.discard(self)
            _starting_changed.notify_all()

    def fits(self, cpus: list[int] | None, env: dict[str, str], runtimes: tuple[str, ...] = (DEFAULT_RUNTIME,)) -> bool:
        """Started with these cores, this environment (huge pages are set before a process starts) and
        these runtimes imported."""
        return (self.cpus == (list(cpus) if cpus else None) and self.env == env and self.runtimes == tuple(runtimes)
                and not self.ended.is_set())

    def wait_ready(self, deadline: float, cancel: threading.Event | None) -> None:
        self._wait(self.ready, deadline, cancel, "the host benchmark process did not start in time")

    def benchmark_pid(self) -> int | None:
        """The pid (on the host) of the process that loads and times the model: bwrap's child in the
        sandbox's pid namespace, else the process itself."""
        if self.launch is None:
            return self.proc.pid
        from nnlite_tui.core.convert.sandbox.view import worker_host_pid

        return worker_host_pid(self.proc.pid)

    def hand_over(self, artifact_path: str) -> str:
        """The path the process loads the artifact from: a copy in its exchange directory when it runs
        sandboxed (the run's artifacts and the cache stay out of its view), else the artifact itself."""
        if self.exchange is None:
            return artifact_path
        copy = self.exchange / ("model" + Path(artifact_path).suffix)
        shutil.copyfile(artifact_path, copy)
        return str(copy)

    def release(self) -> None:
        """Its exchange directory and cgroups, once it has ended and its result was read."""
        launch, exchange = self.launch, self.exchange
        self.launch = self.exchange = None
        if launch is not None:
            launch.release()
        if exchange is not None:
            shutil.rmtree(exchange, ignore_errors=True)

    def run_model(self, args_path: str) -> None:
        """Hand over the one model; a process that died meanwhile shows it at exit, like a crash."""
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(args_path.encode() + b"\n")
            self.proc.stdin.close()
        except (BrokenPipeError, ValueError):
            pass  # it is gone: wait_exit returns its exit code and the parent reports the crash

    def wait_exit(self, deadline: float, cancel: threading.Event | None, timeout_message: str) -> int:
        self._wait(self.ended, deadline, cancel, timeout_message)
        code = self.proc.wait()
        # bwrap exits with 128 + n for a process that died on signal n: said as the signal, as without it.
        return -(code - 128) if self.launch is not None and 128 < code < 128 + 65 else code

    def _wait(self, event: threading.Event, deadline: float, cancel: threading.Event | None, message: str) -> None:
        while not event.wait(WAIT_STEP_S if cancel is not None else max(0.0, deadline - time.monotonic())):
            if cancel is not None and cancel.is_set():
                self.kill()
                raise DeviceError("benchmark cancelled", kind="cancelled", transient=False)
            if time.monotonic() > deadline:
                self.kill()
                raise DeviceError(message, kind="timeout")

    def output(self) -> str:
        return "".join(self._lines)

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass  # already gone
        self.proc.wait()
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            try:
                self.proc.stdin.close()
            except BrokenPipeError:
                pass  # its end is closed already
        self.ended.wait(5)
        self.release()
