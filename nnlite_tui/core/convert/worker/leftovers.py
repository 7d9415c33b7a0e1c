"""What a job left running in the worker's sandbox, ended by the worker before the next job starts.

In bubblewrap's pid namespace the worker is pid 2, bubblewrap's init pid 1, and every other process
is one a job started (the worker serves one job at a time and starts nothing else). A process that
outlives its job could take the next job's result socket or stop it and send a result in its name;
one that forks and exits in a loop is never in any snapshot of the process table. kill(-1, SIGKILL)
is not a snapshot: the kernel signals every process of the namespace but init and the caller under
the lock fork takes, so none escapes it, however fast it forks. The worker then says which processes
it saw, and the runner blames them on the job that just ended (the only one that ran).
"""

from __future__ import annotations

import os
import signal

MAX_NAMED = 20


def _described(pid: str) -> str | None:
    """A live process's command line (None for a zombie or one that is gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            if f.read().rsplit(b")", 1)[-1].split()[0] == b"Z":
                return None
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmd = f.read(400).replace(b"\0", b" ").decode("utf-8", "replace").strip()
    except (OSError, IndexError):
        return None
    return cmd[:120] or f"pid {pid}"


def end_all() -> list[str]:
    """Kill every process of this pid namespace but init and this one; the command lines of those
    that were alive (at most MAX_NAMED). Only for a worker that is pid 2 of a namespace of its own."""
    me = os.getpid()
    if me != 2:  # not bubblewrap's namespace: kill(-1) would reach the user's own processes
        return []
    seen = [cmd for entry in os.listdir("/proc") if entry.isdigit() and int(entry) not in (1, me)
            if (cmd := _described(entry)) is not None]
    try:
        os.kill(-1, signal.SIGKILL)
    except ProcessLookupError:
        pass  # nothing left: the usual case
    return seen[:MAX_NAMED]
