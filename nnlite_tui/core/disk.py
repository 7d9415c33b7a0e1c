"""Free disk space: how much there is where a path lives, and whether it is too little to go on.

A conversion writes an artifact of tens to hundreds of MB into the cache and links it into the run
directory; on a nearly full disk it fails half-way. `low_space(path)` answers before that happens,
with a message that says which filesystem is low and what can be freed. `fsync_path` makes a
file's data, or a directory's entries, durable: the cache and the run store both need it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

GB = 10**9
MIN_FREE_FLOOR = 2 * GB  # the default threshold is max(this, MIN_FREE_SHARE of the filesystem)
MIN_FREE_SHARE = 0.05
PROBE_BYTES = 1 << 20  # room for at least a report and a journal line


def existing_parent(path: Path | str) -> Path:
    """`path`, or its nearest existing ancestor (a run or cache dir may not exist yet)."""
    p = Path(path).expanduser().absolute()
    while not p.exists() and p != p.parent:
        p = p.parent
    return p


def free_bytes(path: Path | str) -> int:
    """Bytes an unprivileged process may still write on the filesystem holding `path`."""
    return shutil.disk_usage(existing_parent(path)).free


def default_min_free(total_bytes: int) -> int:
    return max(MIN_FREE_FLOOR, int(MIN_FREE_SHARE * total_bytes))


def fmt_bytes(n: float) -> str:
    for unit, size in (("GB", GB), ("MB", 10**6), ("KB", 10**3)):
        if abs(n) >= size:
            return f"{n / size:.1f} {unit}"
    return f"{int(n)} B"


def mount_point(path: Path | str) -> Path:
    p = existing_parent(path)
    while not os.path.ismount(p):
        p = p.parent
    return p


@dataclass(frozen=True)
class DiskCheck:
    path: Path  # what was asked about
    mount: Path  # the filesystem it lives on
    free_bytes: int
    total_bytes: int
    min_free_bytes: int
    low: bool
    message: str  # empty when not low


def low_space(path: Path | str, min_free_bytes: int | None = None, cache_dir: Path | str | None = None,
              cache_bytes: Callable[[Path], int] | None = None) -> DiskCheck:
    """Whether the filesystem holding `path` has less than `min_free_bytes` free (default
    max(2 GB, 5 % of the filesystem)). When it has, the message names the filesystem, the figures,
    and what to free: the conversion cache when it lives on the same filesystem (`cache_bytes` says
    how much it holds: the cache is the conversion stage's, above this module), else old runs."""
    where = existing_parent(path)
    usage = shutil.disk_usage(where)
    need = default_min_free(usage.total) if min_free_bytes is None else min_free_bytes
    mount = mount_point(where)
    if usage.free >= need:
        return DiskCheck(Path(path), mount, usage.free, usage.total, need, False, "")
    short = need - usage.free
    hints = []
    if cache_dir is not None and cache_bytes is not None and _same_filesystem(where, cache_dir):
        used = cache_bytes(Path(cache_dir))
        if used:
            hints.append(f"the conversion cache {cache_dir} holds {fmt_bytes(used)}: "
                         f"`nnlite cache prune --max-gb N` shrinks it")
    hints.append("delete run directories you no longer need (their artifacts are the large part)")
    message = (f"low disk space on {mount} (holding {path}): {fmt_bytes(usage.free)} free of "
               f"{fmt_bytes(usage.total)}, under the {fmt_bytes(need)} needed to go on; free at least "
               f"{fmt_bytes(short)}: " + "; or ".join(hints))
    return DiskCheck(Path(path), mount, usage.free, usage.total, need, True, message)


def _same_filesystem(a: Path | str, b: Path | str) -> bool:
    return os.stat(existing_parent(a)).st_dev == os.stat(existing_parent(b)).st_dev


def fsync_path(path: Path) -> None:
    """fsync a file (its data) or a directory (the names in it) by path."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def takes_writes(path: Path) -> bool:
    """Whether a small file can be written, synced and removed where `path` lives."""
    where = existing_parent(path)
    try:
        fd, tmp = tempfile.mkstemp(dir=where, prefix=".nnlite-room.")
    except OSError:
        return False
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(b"\0" * PROBE_BYTES)
            f.flush()
            os.fsync(f.fileno())
        return True
    except OSError:
        return False
    finally:
        Path(tmp).unlink(missing_ok=True)
