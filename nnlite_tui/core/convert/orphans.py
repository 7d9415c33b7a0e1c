"""Conversion workers left behind by a runner that was killed (kill -9, a crash, the OOM killer).

A worker runs in its own session (so that a timeout can kill its whole process group), so it
outlives a killed runner; one that the runner had paused for a host benchmark (SIGSTOP) would stay
stopped forever, holding its memory. Each worker carries its run's log directory in its
environment; a runner that starts on the same directory kills the orphans marked with it, and only
those: processes this program started for this run, whose parent is gone.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

OWNER_ENV = "NNLITE_WORKER_OWNER"
WORKER_MODULE = "nnlite_tui.core.convert.worker.main"


def owner_mark(log_dir: Path) -> dict[str, str]:
    return {OWNER_ENV: str(Path(log_dir).resolve())}


def reap_orphans(log_dir: Path) -> list[int]:
    """Kill this run's orphaned conversion workers (SIGKILL also ends a stopped one); their pids."""
    import psutil

    mark = str(Path(log_dir).resolve())
    killed = []
    for proc in psutil.process_iter(["pid", "ppid", "cmdline"]):
        try:
            if proc.info["ppid"] != 1 or WORKER_MODULE not in (proc.info["cmdline"] or []):
                continue
            if proc.environ().get(OWNER_ENV) != mark:
                continue
            os.killpg(proc.pid, signal.SIGKILL)  # the worker leads its own process group
            killed.append(proc.pid)
        except (psutil.NoSuchProcess, psutil.AccessDenied, ProcessLookupError, PermissionError):
            continue  # gone meanwhile, or not ours to read
    return killed
