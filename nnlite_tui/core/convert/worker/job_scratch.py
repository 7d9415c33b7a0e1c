"""A job's own scratch in the sandbox: emptied before each job, entered by the job's process.

The worker's sandbox has one writable scratch (HOME and TMPDIR inside it, the working directory)
and a small /dev/shm; jobs run one after another, each in a process forked for it. Before a job,
the worker (which never ran model code) removes everything the previous job left there, so that a
file one model planted (a module on a lazy import's path, a poisoned cache) is gone before the next
model's job starts; the job's process then works in a fresh directory of its own.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

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
