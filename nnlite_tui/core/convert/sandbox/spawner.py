"""Start sandboxes from one long-lived thread.

bwrap's --die-with-parent is PR_SET_PDEATHSIG, and the kernel sends that signal when the *thread*
that forked bwrap ends, not the process: a worker started from a short-lived thread (the pool's
prestart threads, a Ray actor's method threads) would be killed as soon as that thread returned. So
every sandbox is forked by this one thread, which lives as long as the process; the sandboxes then
die with the runner, even when it is killed with SIGKILL.
"""

from __future__ import annotations

import queue
import subprocess
import threading
from concurrent.futures import Future
from typing import Any

_jobs: queue.Queue[tuple[Future, list[str], dict[str, Any]]] = queue.Queue()
_thread: threading.Thread | None = None
_lock = threading.Lock()


def _serve() -> None:
    while True:
        done, argv, kwargs = _jobs.get()
        if done.set_running_or_notify_cancel():
            try:
                done.set_result(subprocess.Popen(argv, **kwargs))
            except BaseException as exc:  # handed to the caller, who raises it in its own thread
                done.set_exception(exc)


def popen(argv: list[str], **kwargs: Any) -> subprocess.Popen:
    """subprocess.Popen(argv, **kwargs), forked by the spawner thread."""
    global _thread
    with _lock:
        if _thread is None:
            _thread = threading.Thread(target=_serve, name="sandbox-spawner", daemon=True)
            _thread.start()
    done: Future = Future()
    _jobs.put((done, argv, kwargs))
    return done.result()
