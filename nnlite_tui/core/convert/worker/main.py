"""The conversion worker: runs in its own process, imports torch once, converts many models.

`python -m nnlite_tui.core.convert.worker.main FD THREADS`. The orchestrator (convert/converter.py)
talks to it over a socket pair: it sends job dicts and gets result dicts. The model's own prints and
the converters' logs go to a per-job log file (fd 1 and 2 are redirected), never into the pipe. The
orchestrator enforces the timeout and memory cap by killing this process; here we only classify the
errors that surface as exceptions.

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
import sys
import time
import traceback
from typing import Any

from nnlite_tui.core.convert.phases import PhaseClock
from nnlite_tui.core.convert.worker import attempt_record, offline, torchvision_compat
from nnlite_tui.core.convert.worker.errors import StageError, error_fields, explained, first_line
from nnlite_tui.core.convert.worker.job import convert_one
from nnlite_tui.core.convert.worker.job_log import redirect_fds
from nnlite_tui.core.convert.worker.model import Filtered
from nnlite_tui.core.progress import phase_line
from nnlite_tui.core.runtimes import DEFAULT_RUNTIME, get_runtime
from nnlite_tui.core.spec import ModelSpec


def handle_job(job: dict[str, Any]) -> dict[str, Any]:
    runtime = get_runtime(job.get("runtime") or DEFAULT_RUNTIME)
    t0 = time.perf_counter()
    if job.get("derive"):  # a precision derived from the fp32 artifact
        _append(job.get("log_path"), phase_line("derive", 0.0))
        return runtime.derive(job)
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
            result = explained(err, spec)
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


def worker_main(conn, threads: int = 1, runtimes: tuple[str, ...] = (DEFAULT_RUNTIME,)) -> None:
    """Serve jobs from the orchestrator: import once, then convert until told to stop."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import torch

    torch.set_num_threads(max(1, threads))
    # Before anything imports torchvision (a model, or a library a converter loads).
    torchvision_compat.prepare()
    offline.enforce()
    for name in runtimes:  # the converters' imports (litert_torch: 4-6 s), paid once per worker
        get_runtime(name).worker_start()
    recording = bool(os.environ.get(attempt_record.ENV_WRITABLE))  # set by the sandbox
    if recording:
        attempt_record.install()  # after the imports: what they do is not a model's
    # The CPU the start and imports cost, for the first job's worker_start phase.
    conn.send({"ready": True, "pid": os.getpid(), "cpu_s": time.process_time()})
    while True:
        try:
            job = conn.recv()
        except EOFError:
            return
        if job is None:
            return
        log_fd = None
        if job.pop("log_fd", False):
            from multiprocessing.reduction import recv_handle

            log_fd = recv_handle(conn)
            job["log_path"] = f"/proc/self/fd/{log_fd}"  # opened again by whoever writes the log
        attempt_record.take()  # what the worker did between jobs is not the model's
        try:
            result = handle_job(job)
        finally:
            if log_fd is not None:
                os.close(log_fd)
        if recording:
            result["sandbox_record"] = attempt_record.take()
        conn.send(result)


if __name__ == "__main__":
    from multiprocessing.connection import Connection

    worker_main(Connection(int(sys.argv[1])), int(sys.argv[2]) if len(sys.argv) > 2 else 1,
                tuple(sys.argv[3].split(",")) if len(sys.argv) > 3 else (DEFAULT_RUNTIME,))
