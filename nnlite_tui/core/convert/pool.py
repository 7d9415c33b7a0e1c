"""The conversion worker pool's parts: one worker process (start, run a job under a timeout and a
memory cap, recycle, kill), the gate that pauses every worker while a host benchmark runs, and the
process-group helpers. convert.converter.Converter lends these workers out, one job at a time.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nnlite_tui.core.convert.process_tree import tree_sum
from nnlite_tui.core.convert.phases import merged
from nnlite_tui.core.convert.memory_cap import over_cap_message
from nnlite_tui.core.convert.orphans import WORKER_MODULE, owner_mark

if TYPE_CHECKING:
    from nnlite_tui.core.convert.options import ConvertOptions


def _tree_rss(pid: int) -> int:
    return tree_sum(pid, lambda p: p.memory_info().rss)


def killpg(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass  # it exited between poll() and killpg(): nothing left to kill


def failure(stage: str, error_type: str, message: str) -> dict[str, Any]:
    return {"ok": False, "stage": stage, "error_type": error_type, "error_message": message}


class PauseGate:
    """Whether the workers are stopped (SIGSTOP) right now, and for how long they have been in all.

    Timeouts subtract the paused time: a conversion held back by a host benchmark is not slow.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._total = 0.0
        self._since: float | None = None

    @property
    def paused(self) -> bool:
        with self._lock:
            return self._since is not None

    def set(self, paused: bool) -> None:
        with self._lock:
            if paused and self._since is None:
                self._since = time.monotonic()
            elif not paused and self._since is not None:
                self._total += time.monotonic() - self._since
                self._since = None

    def total(self) -> float:
        with self._lock:
            return self._total + (time.monotonic() - self._since if self._since is not None else 0.0)


def signal_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except ProcessLookupError:
        pass  # the worker is gone; nothing to stop or continue


class Worker:
    """One worker process and its pipe; used by one thread at a time."""

    def __init__(self, options: ConvertOptions, log_dir: Path | None, gate: PauseGate | None = None,
                 runtimes: tuple[str, ...] = ("litert",)):
        self.options = options
        self.runtimes = runtimes  # imported at start, so that no job pays for them
        self.log_dir = log_dir
        self.gate = gate or PauseGate()
        self.process = None
        self.conn = None
        self.jobs = 0
        self.start_cost: dict[str, float] | None = None  # the last start's, until a job result carries it
        self.cap_mb = options.cap_mb()  # fixed when the pool is made, so it does not drift mid-run
        self._kill_lock = threading.Lock()  # kill() may come from a shutdown while a stop is under way

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def command(self, fd: int) -> list[str]:
        """The worker's command line, talking over the socket `fd`."""
        return [sys.executable, "-m", WORKER_MODULE, str(fd), str(self.options.threads_per_worker),
                ",".join(self.runtimes)]

    def spawn(self, fd: int, log: Any) -> subprocess.Popen:
        # A plain subprocess (not multiprocessing's spawn, which re-runs the parent's __main__) in a
        # new session, so that killpg reaches everything the converter starts.
        return subprocess.Popen(self.command(fd), pass_fds=(fd,), stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                start_new_session=True,
                                env={**os.environ, **owner_mark(self.log_dir)} if self.log_dir else None)

    def start(self) -> None:
        began = time.perf_counter()
        parent_sock, child_sock = socket.socketpair()
        log = open(self.log_dir / "worker-startup.log", "ab") if self.log_dir else subprocess.DEVNULL
        try:
            self.process = self.spawn(child_sock.fileno(), log)
        finally:
            child_sock.close()
            if log is not subprocess.DEVNULL:
                log.close()
        if self.gate.paused:  # started (e.g. recycled) during a host benchmark: hold it back too
            signal_group(self.process.pid, signal.SIGSTOP)
        conn = self.conn = Connection(parent_sock.detach())
        proc = self.process
        self.jobs = 0
        try:
            if not conn.poll(self.options.start_timeout_s):
                self.kill()
                raise RuntimeError(f"conversion worker did not start within {self.options.start_timeout_s:.0f} s")
            ready = conn.recv()
            self.start_cost = {"s": time.perf_counter() - began, "cpu_s": float(ready.get("cpu_s") or 0.0)}
        except (EOFError, OSError) as exc:  # it died while starting, or a shutdown ended it
            code = proc.poll()
            self.kill()
            raise RuntimeError(f"conversion worker died while starting (exit code {code})") from exc
        self.started()

    def started(self) -> None:
        """Called once the worker said it is ready."""

    def worker_pid(self) -> int | None:
        """The worker's own pid (for pinning its threads); the process group is self.process.pid's."""
        return self.process.pid if self.process is not None else None

    def send(self, conn: Connection, job: dict[str, Any]) -> None:
        conn.send(job)

    def finish(self, result: dict[str, Any]) -> dict[str, Any]:
        """The job's result, checked while the worker still runs (before a recycle stops it)."""
        return result

    def kill(self) -> None:
        with self._kill_lock:
            proc, conn = self.process, self.conn
            self.process = self.conn = None
        if proc is None:
            return
        killpg(proc)
        proc.wait()
        if conn is not None:
            conn.close()

    def stop(self) -> None:
        proc, conn = self.process, self.conn
        if proc is not None and conn is not None and proc.poll() is None:
            try:
                conn.send(None)
            except (BrokenPipeError, OSError):
                pass  # the worker already went away; kill() below reaps it
            try:
                proc.wait(1)
            except subprocess.TimeoutExpired:
                pass  # it did not leave on request; kill() below ends it
        self.kill()

    def run(self, job: dict[str, Any], cancel: threading.Event | None = None) -> dict[str, Any]:
        if not self.alive:
            self.start()
        # Local references: a shutdown from another thread may clear self.conn/self.process meanwhile.
        conn, proc = self.conn, self.process
        if conn is None or proc is None:
            return failure("crash", "WorkerGone", "conversion worker was shut down")
        started = time.monotonic()
        paused_before = self.gate.total()
        cap_mb = self.cap_mb
        cap = cap_mb * 2**20
        peak = 0
        try:
            self.send(conn, job)
            self.jobs += 1
            while True:
                if conn.poll(0.1):
                    result = self.finish(conn.recv())
                    result["worker_peak_rss_mb"] = round(peak / 2**20, 1)
                    if self.start_cost is not None:  # the first job after a start carries its cost
                        result = merged(result, {"worker_start": self.start_cost})
                        self.start_cost = None
                    if self.jobs >= self.options.recycle_after:
                        self.stop()
                    return result
                if cancel is not None and cancel.is_set():
                    self.kill()
                    return failure("cancelled", "Cancelled", "conversion cancelled by the operator")
                code = proc.poll()
                if code is not None:
                    self.kill()
                    reason = f"signal {signal.Signals(-code).name}" if code and code < 0 else f"exit code {code}"
                    return failure("crash", "WorkerCrash", f"conversion worker died ({reason})")
                if time.monotonic() - started - (self.gate.total() - paused_before) > self.options.timeout_s:
                    self.kill()
                    return failure("timeout", "Timeout",
                                    f"conversion took longer than {self.options.timeout_s:g} s")
                rss = _tree_rss(proc.pid)
                peak = max(peak, rss)
                if rss > cap:
                    self.kill()
                    return failure("out-of-memory", "MemoryCap", over_cap_message(rss / 2**20, cap_mb))
        except (EOFError, OSError):
            # The pipe broke: the worker died mid-job, or a shutdown closed it under us. A dying worker's
            # exit status comes a moment after its pipe closes (in the sandbox, through bwrap): wait for
            # it briefly rather than kill it and report our own SIGKILL.
            try:
                code = proc.wait(1)
            except subprocess.TimeoutExpired:
                code = None
            self.kill()
            if code is None:
                killpg(proc)
                code = proc.wait()
            reason = f"signal {signal.Signals(-code).name}" if code and code < 0 else f"exit code {code}"
            return failure("crash", "WorkerCrash", f"conversion worker died ({reason})")
