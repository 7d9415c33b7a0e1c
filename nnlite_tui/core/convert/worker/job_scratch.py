"""A job's own scratch in the sandbox: emptied before each job, entered by the job's process.

The worker's sandbox has one writable scratch (HOME and TMPDIR inside it, the working directory)
and a small /dev/shm; jobs run one after another, each in a process forked for it. Before a job,
the worker (which never ran model code) removes everything the previous job left there, so that a
file one model planted (a module on a lazy import's path, a poisoned cache) is gone before the next
model's job starts; the job's process then works in a fresh directory of its own. The worker is
non-dumpable (a job's process cannot ptrace it), and a job's files are bounded in size.
"""

from __future__ import annotations

import ctypes
import os
import resource
import shutil
import signal
import tempfile
from pathlib import Path

from nnlite_tui.core.convert.intake import MAX_BYTES

PR_SET_DUMPABLE = 4
KEEP = ("home", "tmp")  # the policy's HOME and TMPDIR: emptied, not removed
SHM = Path("/dev/shm")


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)  # fd-based: never follows a link out of the tree
    else:
        try:
            path.unlink()
        except FileNotFoundError:
            pass  # gone meanwhile


def empty(scratch: str) -> None:
    """Everything in the scratch and /dev/shm removed; HOME and TMPDIR left as empty directories."""
    root = Path(scratch)
    for item in root.iterdir():
        if item.name in KEEP and item.is_dir() and not item.is_symlink():
            for inner in item.iterdir():
                _remove(inner)
        else:
            _remove(item)
    for name in KEEP:
        (root / name).mkdir(exist_ok=True)
    if SHM.is_dir() and os.access(SHM, os.W_OK):
        for item in SHM.iterdir():
            _remove(item)


def enter(scratch: str) -> str:
    """In the job's process: a fresh directory as HOME, TMPDIR and working directory."""
    own = tempfile.mkdtemp(prefix="job.", dir=Path(scratch) / "tmp")
    os.environ["HOME"] = os.environ["TMPDIR"] = own
    tempfile.tempdir = None  # computed again from TMPDIR
    os.chdir(own)
    return own


def guard_worker() -> None:
    """The worker made non-dumpable: a job's process (same user, no capabilities) can then neither
    ptrace it nor write its memory through /proc/<pid>/mem, and so cannot plant code in the process
    every later job is forked from."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)


def bound_job() -> None:
    """In the job's process: no file it writes (artifact, log, scratch) grows past what the runner
    would take (a write beyond fails with EFBIG rather than killing the job), and it is dumpable
    again, so that the runner can read its memory figures."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (MAX_BYTES, MAX_BYTES))
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)
