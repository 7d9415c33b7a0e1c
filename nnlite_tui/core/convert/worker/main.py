"""The conversion worker: runs in its own process, imports torch once, converts many models.

`python -m nnlite_tui.core.convert.worker.main FD THREADS RUNTIMES [clean]`. The orchestrator
(convert/converter.py) talks to it over a socket pair in length-prefixed JSON (convert/wire.py): it
sends a job with the job's own result socket (and log) as descriptors; a child forked for the job
sends the result on that socket, and this process says when the child ended. A `check` job (the
artifact's graph read and the artifact run on the check inputs, pool.Worker.recheck) runs in a child
of its own that runs no model code. The model's own prints and the converters' logs go to a per-job log file (fd 1 and 2 are
redirected), never into a socket. The orchestrator enforces the timeout and memory cap by killing
this process; here we only classify the errors that surface as exceptions.

Failure stages: import, instantiate, export (torch.export / tracing), lower (the runtime's
lowering), serialize (writing the artifact), validate (the runtime cannot load or run the
artifact, or its output disagrees with PyTorch).

The worker converts offline (offline.py) and can import torchvision even when its compiled extension
does not load (torchvision_compat.py). In the sandbox (convert/sandbox) it also records what model
code attempts (attempt_record.py) with each result, and a job's log arrives as a file descriptor
sent right behind the job (the run's log directory is not in its view). Each job names its runtime
(core/runtimes); the runtime's heavy imports are paid once, at start for the runs' runtimes, else
at its first job.
"""

from __future__ import annotations

import os
import socket
import sys
import time
import traceback
from typing import cast

from nnlite_tui.core.convert import wire
from nnlite_tui.core.convert.messages import RUNNER_KEYS
from nnlite_tui.core.convert.phases import PhaseClock
from nnlite_tui.core.convert.record import ConversionJob, ConversionRecord
from nnlite_tui.core.convert.worker import attempt_record, job_scratch, leftovers, offline, torchvision_compat
from nnlite_tui.core.convert.worker.artifact_check import check_artifact
from nnlite_tui.core.convert.worker.errors import StageError, error_fields, explained, first_line
from nnlite_tui.core.convert.worker.job import convert_one
from nnlite_tui.core.convert.worker.job_log import redirect_fds
from nnlite_tui.core.convert.worker.model import Filtered
from nnlite_tui.core.progress import phase_line
from nnlite_tui.core.runtimes import DEFAULT_RUNTIME, get_runtime
from nnlite_tui.core.spec import ModelSpec


def handle_job(job: ConversionJob) -> ConversionRecord:
    runtime = get_runtime(job.get("runtime") or DEFAULT_RUNTIME)
    t0 = time.perf_counter()
    if job.get("derive"):  # a precision derived from the fp32 artifact
        _append(job.get("log_path"), phase_line("derive", 0.0))
        # the runtime takes the job as plain JSON, and gives the record's fields (checked in the runner)
        return cast(ConversionRecord, runtime.derive(dict(job)))
    spec = ModelSpec.from_dict(job["spec"])
    _set_threads(job.get("threads"))
    # Each phase says when it starts, into the job's log (fd 2 is the log while the job runs).
    clock = PhaseClock(on_start=lambda name: print(phase_line(name, time.perf_counter() - t0), file=sys.stderr,
                                                   flush=True))
    with redirect_fds(job.get("log_path")):
        try:
            result = convert_one(spec, job["out_path"], runtime, nhwc=job.get("nhwc", True),
                                 max_params=job.get("max_params"), clock=clock,
                                 weights=job.get("weights") or "dense",
                                 strict_weights=bool(job.get("strict_weights")))
        except Filtered as exc:
            result = {"ok": False, "stage": "filtered", "error_type": "Filtered", "error_message": str(exc)}
        except StageError as err:
            print(f"[nnlite] {err.stage} failed: {first_line(str(err.exc))}", file=sys.stderr)
            traceback.print_exception(err.exc)
            result = explained(err, spec, runtime.converter_frames)
        except MemoryError as exc:
            result = error_fields("out-of-memory", exc)
    result["seconds"] = time.perf_counter() - t0
    result["phases"] = clock.to_dict()
    return result


def _append(log_path: str | None, line: str) -> None:
    if log_path:
        with open(log_path, "a") as f:
            f.write(line + "\n")


def _set_threads(threads: int | None) -> None:
    """The job's torch intra-op threads (the pool gives the last busy worker the idle cores)."""
    if not threads:
        return
    import torch

    if torch.get_num_threads() != threads:
        torch.set_num_threads(int(threads))


def worker_main(sock: socket.socket, threads: int = 1, runtimes: tuple[str, ...] = (DEFAULT_RUNTIME,),
                clean: bool = False, own_pid_namespace: bool = False) -> None:
    """Serve jobs from the runner: import once, then fork one fresh process per job until told to stop.

    This process never runs model code: each job runs in a child forked from it (its imports shared,
    copy-on-write), which alone holds the job's result socket and never the control socket, and exits
    when the job ends; whatever the model patched dies with it. `clean` (in the sandbox): the scratch
    (HOME, TMPDIR, the working directory) and /dev/shm are emptied before each job, so that nothing
    one model left there reaches the next. `own_pid_namespace` (bubblewrap's): after each job every
    other process in the namespace is killed (leftovers.py), and named in the job-ended message."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import torch

    torch.set_num_threads(max(1, threads))
    # Before anything imports torchvision (a model, or a library a converter loads).
    torchvision_compat.prepare()
    offline.enforce()
    for name in runtimes:  # the converters' imports (litert_torch: 4-6 s), paid once per worker
        get_runtime(name).worker_start()
    scratch = os.getcwd() if clean else None
    if scratch is not None:  # a file a model leaves in the working directory must not be importable
        sys.path[:] = [p for p in sys.path if p not in ("", scratch)]
    recording = bool(os.environ.get(attempt_record.ENV_WRITABLE))  # set by the sandbox
    if recording:
        attempt_record.install()  # after the imports: what they do is not a model's
    job_scratch.guard_worker()
    # The CPU the start and imports cost, for the first job's worker_start phase.
    wire.send(sock, {"ready": True, "pid": os.getpid(), "cpu_s": time.process_time()})
    while True:
        try:
            job, fds = wire.receive_with_fds(sock)
        except (ConnectionError, wire.ProtocolError):
            return
        if job is None or job.get("stop"):
            wire.close_fds(fds)
            return
        if scratch is not None:
            job_scratch.empty(scratch)
        pid = os.fork()
        if pid == 0:
            _run_child(sock, job, fds, recording, scratch)  # never returns
        wire.close_fds(fds)  # the result socket and the log are the child's alone
        _, status = os.waitpid(pid, 0)
        left = leftovers.end_all() if own_pid_namespace else []
        wire.send(sock, {"done": True, "status": max(-128, min(255, os.waitstatus_to_exitcode(status))),
                         "left": left})


def _run_child(control: socket.socket, message: dict[str, object], fds: list[int], recording: bool,
               scratch: str | None) -> None:
    """One job in the forked child: its result on the job's own socket, then exit (never back to the loop)."""
    code = 70
    try:
        control.close()  # the model never sees the worker's channel to the runner
        job = cast(ConversionJob, message)  # the runner's own job (converter.py, derive.py, pool.py)
        job_scratch.bound_job()
        result_fd, log_fd = fds[0], (fds[1] if len(fds) > 1 and not job.get("check") else None)
        if scratch is not None:
            job_scratch.enter(scratch)
        if log_fd is not None:
            job["log_path"] = f"/proc/self/fd/{log_fd}"  # opened again by whoever writes the log
        attempt_record.take()  # what the worker did before the fork is not the model's
        if job.get("check") == "artifact":  # no model code in this process: the artifact's own figures
            checks = f"/proc/self/fd/{fds[2]}" if len(fds) > 2 else None
            result: dict[str, object] = dict(check_artifact(get_runtime(str(job.get("runtime"))),
                                                            f"/proc/self/fd/{fds[1]}", checks))
        else:
            result = dict(handle_job(job))
        if recording and not job.get("check"):
            result["sandbox_record"] = attempt_record.take()
        for key in RUNNER_KEYS:  # the artifact's path, size and hash are measured by the runner
            result.pop(key, None)
        with socket.socket(fileno=result_fd) as out:
            wire.send(out, result)
        code = 0
    except BaseException:  # noqa: BLE001  the child must never return into the worker's loop
        traceback.print_exc()
    finally:
        os._exit(code)


if __name__ == "__main__":
    worker_main(socket.socket(fileno=int(sys.argv[1])), int(sys.argv[2]) if len(sys.argv) > 2 else 1,
                tuple(sys.argv[3].split(",")) if len(sys.argv) > 3 else (DEFAULT_RUNTIME,),
                clean=len(sys.argv) > 4 and sys.argv[4] == "clean",
                own_pid_namespace=len(sys.argv) > 5 and sys.argv[5] == "own-pid-namespace")
