"""The conversion worker pool's parts: one worker process (start, run a job under a timeout and a
memory cap, recycle, kill), the gate that pauses every worker while a host benchmark runs, and the
process-group helpers. convert.converter.Converter lends these workers out, one job at a time.
"""

from __future__ import annotations

import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from nnlite_tui.core.convert import check_inputs, compute_recheck, intake, messages, outputs_recheck, wire
from nnlite_tui.core.convert.log_pipe import LogPipe
from nnlite_tui.core.convert.process_tree import tree_sum
from nnlite_tui.core.convert.phases import merged
from nnlite_tui.core.convert.memory_cap import over_cap_message
from nnlite_tui.core.convert.orphans import WORKER_MODULE, owner_mark
from nnlite_tui.core.convert.record import ConversionJob, ConversionRecord
from nnlite_tui.core.runtimes.default import DEFAULT_RUNTIME

if TYPE_CHECKING:
    from nnlite_tui.core.convert.options import ConvertOptions

Ended = TypeVar("Ended")  # what a job's end makes of its answer: a result, or the artifact check's figures


def _pss(proc: Any) -> int:
    """Proportional set size: a page shared by n processes counts 1/n in each. A job's process is forked
    from the worker and shares its imports (hundreds of MB): RSS would count them twice."""
    try:
        with open(f"/proc/{proc.pid}/smaps_rollup", "rb") as f:
            for line in f:
                if line.startswith(b"Pss:"):
                    return int(line.split()[1]) * 1024
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        pass  # gone, or a kernel without smaps_rollup: RSS below
    return proc.memory_info().rss


def _tree_memory(pid: int) -> int:
    return int(tree_sum(pid, _pss))


def killpg(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass  # it exited between poll() and killpg(): nothing left to kill


def failure(stage: str, error_type: str, message: str) -> ConversionRecord:
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
    """One worker process and its control socket; used by one thread at a time.

    Everything the worker sends is parsed as data (wire.py) and checked (messages.py): it runs model
    code. Each job gets a socket pair of its own, one end passed to the worker with the job; the
    job's result comes back on it and nowhere else, and the control socket carries only the worker's
    ready and job-ended messages."""

    def __init__(self, options: ConvertOptions, log_dir: Path | None, gate: PauseGate | None = None,
                 runtimes: tuple[str, ...] = (DEFAULT_RUNTIME,)):
        self.options = options
        self.runtimes = runtimes  # imported at start, so that no job pays for them
        self.log_dir = log_dir
        self.gate = gate or PauseGate()
        self.process: subprocess.Popen | None = None
        self.conn: socket.socket | None = None
        self.jobs = 0
        self.start_cost: dict[str, float] | None = None  # the last start's, until a job result carries it
        self.cap_mb = options.cap_mb()  # fixed when the pool is made, so it does not drift mid-run
        self._job: ConversionJob | None = None  # the job in flight, as sent
        self.left_behind: tuple[str, ...] = ()  # what the last job left running (the worker killed it)
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
        # The worker's stdout and stderr are a pipe drained into the shared startup log (log_pipe.py),
        # never the log file itself.
        pipe = LogPipe(self.log_dir / "worker-startup.log") if self.log_dir else None
        try:
            self.process = self.spawn(child_sock.fileno(), pipe.write_fd if pipe else subprocess.DEVNULL)
        finally:
            child_sock.close()
            if pipe is not None:
                pipe.close()
        if self.gate.paused:  # started (e.g. recycled) during a host benchmark: hold it back too
            signal_group(self.process.pid, signal.SIGSTOP)
        self.conn = parent_sock
        proc = self.process
        self.jobs = 0
        try:
            message = wire.receive(parent_sock, self.options.start_timeout_s)
            if message is None:
                raise EOFError
            ready = messages.ready(message)
        except TimeoutError:
            self.kill()
            raise RuntimeError(f"conversion worker did not start within {self.options.start_timeout_s:.0f} s") from None
        except wire.ProtocolError as exc:
            self.kill()
            raise RuntimeError(f"conversion worker broke the protocol while starting ({exc})") from None
        except (EOFError, OSError) as exc:  # it died while starting, or a shutdown ended it
            code = proc.poll()
            self.kill()
            raise RuntimeError(f"conversion worker died while starting (exit code {code})") from exc
        self.start_cost = {"s": time.perf_counter() - began, "cpu_s": ready.cpu_s}
        self.started()

    def started(self) -> None:
        """Called once the worker said it is ready."""

    def worker_pid(self) -> int | None:
        """The worker's own pid (for pinning its threads); the process group is self.process.pid's."""
        return self.process.pid if self.process is not None else None

    def job_fds(self) -> tuple[int, ...]:
        """Descriptors to pass with the next job after its result socket (the sandbox's job log)."""
        return ()

    def over_disk(self) -> ConversionRecord | None:
        """A failure if the job in flight wrote more than it may on the host's disk (polled)."""
        return None

    def finish(self, result: ConversionRecord) -> ConversionRecord:
        """The job's checked result, judged while the worker still runs (before a recycle stops it): a
        success gets the artifact's size and sha256 as this process measures them, and the artifact is
        checked again by a clean process (recheck)."""
        out_path = self._job.get("out_path") if self._job else None
        if not out_path:
            return result
        checks = Path(out_path + check_inputs.SUFFIX)
        try:
            if not result.get("ok"):
                return result
            try:
                taken = intake.hash_in_place(Path(out_path))
            except intake.Refused as exc:
                return intake.refused_result(str(exc))
            result = {**result, "artifact_path": out_path, "artifact_bytes": taken.bytes,
                      "artifact_sha256": taken.sha256}
            return self.recheck(result, Path(out_path), (checks.parent, Path(checks.name)))
        finally:
            checks.unlink(missing_ok=True)

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
                wire.send(conn, {"stop": True})
            except OSError:
                pass  # the worker already went away; kill() below reaps it
            try:
                proc.wait(1)
            except subprocess.TimeoutExpired:
                pass  # it did not leave on request; kill() below ends it
        self.kill()

    def run(self, job: ConversionJob, cancel: threading.Event | None = None) -> ConversionRecord:
        if not self.alive:
            self.start()
        # Local references: a shutdown from another thread may clear self.conn/self.process meanwhile.
        conn, proc = self.conn, self.process
        if conn is None or proc is None:
            return failure("crash", "WorkerGone", "conversion worker was shut down")
        mine, theirs = socket.socketpair()
        self._job = job
        self.left_behind = ()
        self.jobs += 1
        try:
            return self._run(conn, proc, mine, theirs, job, cancel, self.job_fds(), self._ended)
        finally:
            self._job = None
            mine.close()
            theirs.close()

    def _run(self, conn: socket.socket, proc: subprocess.Popen, mine: socket.socket, theirs: socket.socket,
             job: ConversionJob, cancel: threading.Event | None, fds: tuple[int, ...],
             ended: Callable[[Mapping[str, object] | None, int, int], Ended]) -> ConversionRecord | Ended:
        """Send `job` with its result socket and `fds`, watch it (timeout, memory, cancel, the worker's
        death) until the worker says its process ended; then ended(raw result or None, status, peak)."""
        started = time.monotonic()
        paused_before = self.gate.total()
        cap_mb = self.cap_mb
        cap = cap_mb * 2**20
        peak = 0
        answer, control = wire.FrameReader(), wire.FrameReader(limit=8192)
        raw: Mapping[str, object] | None = None
        try:
            wire.send(conn, job, (theirs.fileno(), *fds))
            theirs.close()  # the worker's child holds the only other end
            mine.setblocking(False)
            conn.setblocking(False)
            while True:
                # The result socket is watched until its message is whole or it closed: a closed one
                # stays readable, and the job's process may go on long after closing it.
                watched = [mine, conn] if raw is None and not answer.eof else [conn]
                readable = select.select(watched, [], [], 0.1)[0]
                if mine in readable:
                    raw = answer.feed(mine)
                if conn in readable:
                    done = control.feed(conn)
                    if done is not None:
                        ended_job = messages.done(done)
                        status, self.left_behind = ended_job.status, tuple(ended_job.left)
                        if raw is None and not answer.eof:
                            raw = answer.feed(mine)  # all of it is buffered once the child has ended
                        return ended(raw, status, peak)
                    if control.eof:
                        raise EOFError
                if cancel is not None and cancel.is_set():
                    self.kill()
                    return failure("cancelled", "Cancelled", "conversion cancelled by the operator")
                code = proc.poll()
                if code is not None:
                    self.kill()
                    return failure("crash", "WorkerCrash", f"conversion worker died ({_reason(code)})")
                if time.monotonic() - started - (self.gate.total() - paused_before) > self.options.timeout_s:
                    self.kill()
                    return failure("timeout", "Timeout",
                                   f"conversion took longer than {self.options.timeout_s:g} s")
                used = _tree_memory(proc.pid)
                peak = max(peak, used)
                if used > cap:
                    self.kill()
                    return failure("out-of-memory", "MemoryCap", over_cap_message(used / 2**20, cap_mb))
                over = self.over_disk()
                if over is not None:
                    self.kill()
                    return over
        except wire.ProtocolError as exc:
            # The job's process sent what is not a result: the model's doing. The worker is replaced
            # (its control socket may be out of step), and the job fails alone.
            self.kill()
            return messages.violation(str(exc))
        except (EOFError, OSError):
            # The control socket broke: the worker died mid-job, or a shutdown closed it under us. A
            # dying worker's exit status comes a moment after its socket closes (in the sandbox, through
            # bwrap): wait for it briefly rather than kill it and report our own SIGKILL.
            try:
                code = proc.wait(1)
            except subprocess.TimeoutExpired:
                code = None
            self.kill()
            if code is None:
                killpg(proc)
                code = proc.wait()
            return failure("crash", "WorkerCrash", f"conversion worker died ({_reason(code)})")
        finally:
            if self.conn is conn:
                conn.setblocking(True)

    def _ended(self, raw: Mapping[str, object] | None, status: int, peak: int) -> ConversionRecord:
        """The job's process has ended with `status`: its result checked, or its death as a crash."""
        if raw is None:  # the job's process died: the worker is replaced as if it had (its staging goes too)
            self.kill()
            return failure("crash", "WorkerCrash", f"conversion worker died ({_reason(status)})")
        if status != 0:
            # A result counts only from a process that ended cleanly: one stopped or killed after it
            # sent (by another process, say) may have sent what another process wrote in its name.
            return failure("crash", "JobCrash", f"the job's process ended with {_reason(status)} after sending "
                                                "a result; the result is not taken")
        try:
            result = self.finish(messages.result(raw, derive=bool(self._job and self._job.get("derive"))))
        except wire.ProtocolError as exc:
            result = messages.violation(str(exc))
        result["worker_peak_rss_mb"] = round(peak / 2**20, 1)
        if self.start_cost is not None:  # the first job after a start carries its cost
            result = merged(result, {"worker_start": self.start_cost})
            self.start_cost = None
        if self.jobs >= self.options.recycle_after:
            self.stop()
        return result

    def recheck(self, result: ConversionRecord, artifact: Path, checks: tuple[Path, Path]) -> ConversionRecord:
        """`_recheck`; an artifact that fails it is removed, so that no cache entry or run keeps it."""
        judged = self._recheck(result, artifact, checks)
        if result.get("ok") and not judged.get("ok"):
            artifact.unlink(missing_ok=True)
        return judged

    def _recheck(self, result: ConversionRecord, artifact: Path, checks: tuple[Path, Path]) -> ConversionRecord:
        """The artifact judged again by a process that never ran model code (forked from the worker for
        it): its graph's work for the compute check, and its outputs on the check inputs the job's
        process handed over (`checks`: the folder and name of that file, check_inputs.py). The model's
        process may have forged both. A failure of that process (a crafted artifact that crashes the
        reader or the runtime) fails this unit."""
        check = result.get("compute_check")
        conn, proc = self.conn, self.process
        if not result.get("ok") or not isinstance(check, dict):  # a failure, or a derived precision's result
            return result
        if conn is None or proc is None or not self.alive:
            return failure("crash", "WorkerGone", "the conversion worker went away before the artifact was checked")
        try:
            given = intake.open_plain(checks[0], Path(checks[1]), check_inputs.MAX_BYTES)
        except intake.Refused as exc:
            return {**failure("validate", "CheckInputsRefused", "the check inputs the job's process wrote were "
                                                                f"not taken: they are {exc}"),
                    "cause": "check-inputs-refused"}
        try:
            fd = os.open(artifact, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError as exc:
            os.close(given)
            return failure("crash", "WorkerGone", f"the artifact could not be opened again ({exc.strerror})")
        mine, theirs = socket.socketpair()
        try:
            read = self._run(conn, proc, mine, theirs, {"check": "artifact", "runtime": result.get("runtime")}, None,
                             (fd, given), self._artifact_read)
        finally:
            os.close(fd)
            os.close(given)
            mine.close()
            theirs.close()
        if not isinstance(read, messages.ArtifactCheck):  # the check failed: timed out, died, or broke the protocol
            return {**failure("validate", "ArtifactCheckFailed", "checking the artifact outside the model's "
                                                                 f"process failed: {read.get('error_message')}"),
                    "cause": "artifact-check-failed"}
        return outputs_recheck.rejudged(compute_recheck.rejudged(result, check, read), read.outputs)

    def _artifact_read(self, raw: Mapping[str, object] | None, status: int,
                       peak: int) -> ConversionRecord | messages.ArtifactCheck:
        if raw is None or status != 0:
            self.kill()
            return failure("crash", "ArtifactCheckCrash", f"the artifact check died ({_reason(status)})")
        try:
            return messages.artifact_check(raw)
        except wire.ProtocolError as exc:
            return messages.violation(str(exc))


def _reason(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"exit code {code}"
