"""The pool's conversion worker, started in the sandbox, and what it checks around each job.

It differs from pool.Worker in how it starts (the command line wrapped by launch.py, forked by the
spawner thread, a fresh scratch directory per start in the system temp directory, its HOME, TMPDIR
and working directory, as the worker's temp files were before) and in what a job may touch: the
job's artifact is written in a staging directory of the worker's own under the cache's tmp/ (on
the cache's filesystem: a full disk fails the conversion as a full disk, not the worker's start)
and copied out by descriptor to where the job asked (convert/intake.py: a plain file only, hashed
here); its log arrives as a file descriptor (the run's log directory is not in the
view); a derived precision's fp32 input is copied into the staging directory (never a link to the
cache's file).
After each job the parent judges what the model attempted (verdict.py), kills what it left running,
and replaces the worker after `leaves-processes` or `process-cap`. A job from a source the worker
cannot see restarts it with that source added.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nnlite_tui.core.convert import check_inputs, intake
from nnlite_tui.core.convert.log_pipe import LogPipe
from nnlite_tui.core.convert.orphans import owner_mark
from nnlite_tui.core.convert.pool import PauseGate, Worker, failure, killpg
from nnlite_tui.core.convert.record import ConversionJob, ConversionRecord
from nnlite_tui.core.convert.sandbox import spawner, staging_cap, verdict, view
from nnlite_tui.core.convert.sandbox.launch import SandboxSetup, launch_for
from nnlite_tui.core.convert.sandbox.policy import Launch
from nnlite_tui.core.convert.sandbox.process_cap import tree_tasks
from nnlite_tui.core.convert.sandbox.sources import source_roots
from nnlite_tui.core.spec import ModelSpec
from nnlite_tui.core.runtimes.default import DEFAULT_RUNTIME

if TYPE_CHECKING:
    from nnlite_tui.core.convert.options import ConvertOptions

SCRATCH_PREFIX = "nnlite-sandbox."  # <pid>.<random> in the system temp directory


class SandboxedWorker(Worker):
    def __init__(self, options: ConvertOptions, log_dir: Path | None, setup: SandboxSetup, scratch_parent: Path,
                 gate: PauseGate | None = None, runtimes: tuple[str, ...] = (DEFAULT_RUNTIME,)):
        super().__init__(options, log_dir, gate, runtimes)
        self.setup = setup
        self.visible = setup.sources
        self.scratch_parent = scratch_parent
        self.scratch: Path | None = None
        self.staging: Path | None = None
        self.launch: Launch | None = None
        self._host_pid: int | None = None
        self._log_fd: int | None = None
        self.cap_killed: int | None = None
        self.cap_hit = self.memory_hit = False
        self._replace = False
        self.start_state = self.baseline = view.SandboxState({}, ())
        self.check_s: float | None = None
        self._artifact: tuple[str, str] | None = None  # (staged path, the job's out_path) of the job in flight
        self._staging_cap, self._disk_polled = staging_cap.cap_bytes(), 0.0

    @property
    def mechanism(self) -> str:
        return self.setup.availability.mechanism

    def spawn(self, fd: int, log: Any) -> subprocess.Popen:
        self.scratch_parent.mkdir(parents=True, exist_ok=True)
        sweep_scratch()
        # Locals until the process runs: a shutdown (kill() from another thread) may come meanwhile.
        scratch = Path(tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}."))
        # Named like the cache's staging directories (<what>.<pid>.<random>): one a killed runner
        # left behind is removed by the cache's clean-up of tmp/.
        staging = Path(tempfile.mkdtemp(prefix=f"sandbox.{os.getpid()}.", dir=self.scratch_parent))
        for sub in ("out", "in"):
            (staging / sub).mkdir()
        launch = launch_for(self.setup.availability, self.command(fd),
                            self.setup.policy(scratch, self.visible, (staging,), memory_mb=self.cap_mb))
        env = {**launch.env, **(owner_mark(self.log_dir) if self.log_dir else {})}
        try:
            proc = spawner.popen(launch.argv, pass_fds=(fd, *launch.pass_fds), stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                 start_new_session=True, env=env, cwd=scratch)
        except BaseException:
            launch.release()
            for d in (scratch, staging):
                shutil.rmtree(d, ignore_errors=True)
            raise
        self.launch, self.scratch, self.staging = launch, scratch, staging
        self._host_pid, self.cap_killed, self.cap_hit, self._replace = None, None, False, False
        self.memory_hit = False
        if launch.cap.kind == "watchdog":
            threading.Thread(target=self._watch_tasks, args=(proc, launch.cap.limit or 0), daemon=True,
                             name="sandbox-watchdog").start()
        return proc

    def started(self) -> None:
        self.start_state = self._state()  # processes the worker itself started are not the model's
        self.baseline = self.start_state

    def _state(self) -> view.SandboxState:
        return view.sandbox_state(self.process.pid, self.mechanism) if self.process else view.SandboxState({}, ())

    def _watch_tasks(self, proc: subprocess.Popen, limit: int) -> None:
        """The cap where the kernel sets none: count the tree's tasks each 0.1 s, kill it over the cap."""
        while proc.poll() is None:
            n = tree_tasks(proc.pid)
            if n > limit:
                self.cap_killed = n
                killpg(proc)
                return
            time.sleep(0.1)

    def worker_pid(self) -> int | None:
        """The worker's own pid on the host: bwrap's child in the sandbox's pid namespace, else the process."""
        if self.process is None or self.mechanism != "bwrap":
            return super().worker_pid()
        if self._host_pid is None:
            self._host_pid = view.worker_host_pid(self.process.pid)
        return self._host_pid

    def command(self, fd: int) -> list[str]:
        # The scratch emptied before each job (worker/job_scratch.py); in bubblewrap's pid namespace,
        # whatever a job left running killed after it (worker/leftovers.py).
        return [*super().command(fd), "clean", *(["own-pid-namespace"] if self.mechanism == "bwrap" else [])]

    def over_disk(self, now: bool = False) -> ConversionRecord | None:
        """The job's failure if its staging directory holds more than its bound (measured at most every
        POLL_S, or `now`)."""
        clock = time.monotonic()
        if self.staging is None or (not now and clock - self._disk_polled < staging_cap.POLL_S):
            return None
        self._disk_polled = clock
        used = staging_cap.used_bytes(self.staging)
        return staging_cap.over_cap(used, self._staging_cap) if used > self._staging_cap else None

    def job_fds(self) -> tuple[int, ...]:
        return () if self._log_fd is None else (self._log_fd,)

    def finish(self, result: ConversionRecord) -> ConversionRecord:
        # The artifact leaves the staging directory first: the pool may recycle the worker (and its
        # staging with it) as soon as finish() returns.
        result = self.over_disk(now=True) or result  # the poll during the job may have missed the last writes
        result = self._deliver(result)
        if self.process is None or self.process.poll() is not None:
            return result
        began = time.perf_counter()
        after = self._state()
        seen = view.end_leftovers(after.started_since(self.start_state))
        # The worker names what it killed after the job, and the runner may still see one of those dying:
        # a process is counted once, by its command line.
        left = seen + tuple((0, c) for c in self.left_behind if c not in {cmd for _, cmd in seen})
        result = verdict.judge(result, self.baseline, after, left, self.launch.cap if self.launch else None,
                               contained=self.mechanism == "bwrap")
        self._replace = result.get("cause") in verdict.RECYCLE
        self.baseline = after  # its leftovers are gone; its counters are where the next job starts
        self.check_s = time.perf_counter() - began  # what judging the job cost (bench/sandbox_overhead.py)
        if self._artifact is not None:  # its leftovers are dead: a clean process checks the artifact
            assert self.staging is not None
            checks = Path(self._artifact[0] + check_inputs.SUFFIX).relative_to(self.staging)
            result = self.recheck(result, Path(self._artifact[1]), (self.staging, checks))
        return result

    def run(self, job: ConversionJob, cancel: threading.Event | None = None) -> ConversionRecord:
        needed = source_roots([ModelSpec.from_dict(job["spec"])]) if job.get("spec") else self.visible
        if not self.visible.covers(needed):
            self.stop()  # its view lacks this model's source
            self.visible = self.visible.union(needed)
        if not self.alive:
            self.start()
        assert self.staging is not None
        inner = job.copy()
        spec, out_path, fp32_path = job.get("spec"), job.get("out_path"), job.get("fp32_path")
        source = spec.get("file") if spec else None
        if spec and source and not os.path.isabs(source):
            # The worker runs in its scratch directory, not in this process's.
            inner["spec"] = {**spec, "file": os.path.abspath(source)}
        if out_path:
            inner["out_path"] = str(self.staging / "out" / Path(out_path).name)
        copied = 0
        if fp32_path:
            inner["fp32_path"] = str(self._copy_in(Path(fp32_path)))
            copied = os.path.getsize(inner["fp32_path"])
        self._staging_cap, self._disk_polled = staging_cap.cap_bytes(copied), 0.0
        # The job's log goes as the write end of a pipe with the job (job_fds), drained into the log
        # file here (log_pipe.py): a descriptor of the file itself could be opened again without O_APPEND.
        log_path = job.get("log_path")
        pipe = LogPipe(Path(log_path)) if log_path else None
        if pipe is not None:
            self._log_fd = pipe.write_fd
            inner["log_path"] = None
        self._artifact = (inner["out_path"], out_path) if out_path else None
        try:
            result = super().run(inner, cancel)
        finally:
            self._artifact = None
            self._log_fd = None
            if pipe is not None:
                pipe.close()
                pipe.wait(1.0)  # the job has ended (its leftovers too, under bwrap): its last lines are in
        result = self._over_cap(result)
        if self._replace:
            self.kill()
        elif self.staging is not None:
            _reset(self.staging)
        return result

    def _deliver(self, result: ConversionRecord) -> ConversionRecord:
        """A finished job's artifact copied out of the staging directory (by descriptor, hashed here) to
        where the job asked for it; a staged path that is not a plain file fails the job."""
        if self._artifact is None or not result.get("ok"):
            return result
        staged, wanted = self._artifact
        assert self.staging is not None
        try:
            taken = intake.take(self.staging, Path(staged).relative_to(self.staging), Path(wanted))
        except intake.Refused as exc:
            return intake.refused_result(str(exc))
        except OSError as exc:  # a full disk, or a shutdown removed the staging directory under the job
            return failure("crash", "WorkerGone", f"the artifact could not be copied out ({exc.strerror})")
        return {**result, "artifact_path": wanted, "artifact_bytes": taken.bytes, "artifact_sha256": taken.sha256}

    def _over_cap(self, result: ConversionRecord) -> ConversionRecord:
        """A worker that died on the process cap: the watchdog killed it, or it could not start a thread
        because the cgroup refused the fork (seen when the worker was reaped, kill())."""
        if result.get("stage") == "crash" and self.memory_hit:  # the kernel's memory cap (memory_cgroup.py)
            return verdict.over_memory(result, self.cap_mb)
        if result.get("stage") != "crash" or not (self.cap_killed or self.cap_hit):
            return result
        failed = verdict.over_cap(result, self.setup.availability.max_tasks, seen=self.cap_killed)
        return {**failed, "stage": "sandbox", "error_type": "SandboxViolation"}

    def _copy_in(self, source: Path) -> Path:
        """A cached file the job reads (a derivation's fp32 artifact), as a copy of its own: never a link
        to the cache's inode, which model code could write through."""
        assert self.staging is not None
        target = self.staging / "in" / source.name
        target.unlink(missing_ok=True)
        shutil.copyfile(source, target)
        return target

    def kill(self) -> None:
        super().kill()
        launch, scratch, staging = self.launch, self.scratch, self.staging
        self.launch, self.scratch, self.staging = None, None, None
        if launch is not None:
            self.cap_hit = launch.cap.kind == "cgroup" and launch.cap.newly_hit()  # before the cgroup goes
            self.memory_hit = launch.cap.memory_killed()
            launch.release()
        for d in (scratch, staging):
            if d is not None:
                shutil.rmtree(d, ignore_errors=True)


def sweep_scratch() -> None:
    """Remove the scratch directories that runners killed meanwhile left in the system temp directory."""
    import psutil

    for item in Path(tempfile.gettempdir()).glob(f"{SCRATCH_PREFIX}*"):
        pid = item.name[len(SCRATCH_PREFIX):].split(".")[0]
        if pid.isdigit() and not psutil.pid_exists(int(pid)):
            shutil.rmtree(item, ignore_errors=True)


def _reset(staging: Path) -> None:
    """The staging directory as a fresh one (out/ and in/, empty). Model code may have put anything in
    it, out/ replaced by a link to a host directory among them: nothing in it is followed."""
    for item in staging.iterdir():
        if item.is_dir() and not item.is_symlink():
            shutil.rmtree(item, ignore_errors=True)  # fd-based: removes links, never what they point to
        else:
            item.unlink(missing_ok=True)
    for d in ("out", "in"):
        (staging / d).mkdir()
