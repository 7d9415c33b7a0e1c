"""A log that a process which runs model code writes into without holding the log file.

A host file opened for appending and handed to such a process is writable through /proc/self/fd/N
opened again (O_RDWR | O_TRUNC, without O_APPEND): the model could rewrite the whole file, a log
another worker shares among them. So the process gets the write end of a pipe, and a thread here
reads it and appends what comes to the file, up to a bound; nothing of the file is in the process.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import BinaryIO

from nnlite_tui.core.convert.intake import MAX_BYTES

CUT = b"\n[nnlite] the log was cut here: more than its size bound was written\n"


class LogPipe:
    """os.pipe() whose read end is drained into `path` (appended, at most `limit` bytes) by a thread.

    `write_fd` is for the child; close() closes this process's copy once the child has its own."""

    def __init__(self, path: Path, limit: int = MAX_BYTES):
        self.path, self.limit = path, limit
        # Opened here, not in the thread: a log that cannot be opened is the caller's error, raised
        # where it can be handled, and a folder removed later does not lose what is still written.
        path.parent.mkdir(parents=True, exist_ok=True)
        log = open(path, "ab")  # noqa: SIM115 - the drain thread closes it
        read_fd, self.write_fd = os.pipe()
        self._thread = threading.Thread(target=self._drain, args=(read_fd, log), daemon=True, name="log-pipe")
        self._thread.start()

    def _drain(self, read_fd: int, log: BinaryIO) -> None:
        written = 0
        with os.fdopen(read_fd, "rb", buffering=0) as pipe, log:
            while chunk := pipe.read(1 << 16):
                if written < self.limit:
                    kept = chunk[: self.limit - written]
                    log.write(kept + (CUT if len(kept) < len(chunk) else b""))
                    log.flush()
                written += len(chunk)  # past the bound it is read and dropped: the writer never blocks

    def close(self) -> None:
        """This process's write end closed: the drain ends when the child's copies close."""
        if self.write_fd >= 0:
            os.close(self.write_fd)
            self.write_fd = -1

    def wait(self, timeout: float) -> None:
        """Until the writers have all closed (and everything they wrote is in the file), or timeout."""
        self._thread.join(timeout)
