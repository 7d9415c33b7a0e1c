"""A job's log file: the model's prints and the converters' C++ logs go there, never into the pipe."""

from __future__ import annotations

import contextlib
import os
import sys


@contextlib.contextmanager
def redirect_fds(log_path: str | None):
    """Send fd 1/2 (the model's prints, the converter's C++ logs) to the job's log file."""
    if not log_path:
        yield
        return
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        os.close(fd)
        os.close(saved[0])
        os.close(saved[1])
