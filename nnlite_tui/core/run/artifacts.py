"""What a long run leaves on disk: room before each conversion, and which artifacts it keeps.

A conversion writes an artifact (a .tflite, a .pte) of up to hundreds of MB into the cache and the
run directory. On a
nearly full disk the run waits before converting, with one event that names the filesystem and
what to free, and goes on by itself when there is room again: no model fails for want of disk,
no file is left half-written. Once a model is terminal its run-dir copy is kept or removed by
the run's `--keep-artifacts` policy (the conversion cache, bounded on its own, still has it).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from nnlite_tui.core.convert.cache_scan import cached_bytes
from nnlite_tui.core.disk import DiskCheck, fmt_bytes, low_space, takes_writes
from nnlite_tui.core.events import Event, Recovery

KEEP_POLICIES = ("all", "failed", "none")
DEFAULT_KEEP = "failed"  # enough to reproduce every failure; successes are in the cache
ROOM_POLL_S = 5.0
DISK_WAIT_ENV = "NNLITE_DISK_WAIT_S"
DEFAULT_DISK_WAIT_S = 1800.0


def keeps_artifact(policy: str, status: str) -> bool:
    if policy not in KEEP_POLICIES:
        raise ValueError(f"--keep-artifacts must be one of {', '.join(KEEP_POLICIES)}, not {policy!r}")
    return policy == "all" or (policy == "failed" and status == "failed")


def prune_artifact(policy: str, status: str, path: Path) -> bool:
    """Remove the run's copy of a terminal unit's artifact unless the policy keeps it; True if removed."""
    if keeps_artifact(policy, status):
        return False
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    return True


class DiskGuard:
    """Blocks conversions while a filesystem the run writes to is low on space, or after a write failed
    for want of space (disk full, quota, read-only, I/O error) until a test write succeeds again.

    The wait has a deadline (`deadline_s`, $NNLITE_DISK_WAIT_S, 30 min by default): past it the run
    stops cleanly (`on_expired`), leaving its units queued for the same command to resume."""

    def __init__(self, paths: Sequence[Path], emit: Callable[[Event], None], *, min_free_bytes: int | None = None,
                 cache_dir: Path | None = None, poll_s: float = ROOM_POLL_S, deadline_s: float | None = None):
        self.paths = list(paths)
        self.emit = emit
        self.min_free_bytes = min_free_bytes
        self.cache_dir = cache_dir
        self.poll_s = poll_s
        self.deadline_s = disk_wait_deadline() if deadline_s is None else deadline_s
        self.on_expired: Callable[[], None] = lambda: None
        self._lock = threading.Lock()
        self._announced: str | None = None  # the mount or path the pending "disk-low"/"disk-full" event named
        self._refused: OSError | None = None  # a write the disk refused, not yet followed by a good test write

    def check(self) -> DiskCheck | None:
        """The first filesystem that is low, or None."""
        for path in self.paths:
            found = low_space(path, self.min_free_bytes, cache_dir=self.cache_dir, cache_bytes=cached_bytes)
            if found.low:
                return found
        return None

    def refused(self, exc: OSError, what: str) -> None:
        """A write of the run failed because of the disk: conversions wait until the disk takes writes again."""
        with self._lock:
            first = self._refused is None
            self._refused = exc
            if first:
                self._announced = str(exc.filename or self.paths[0])
                self.emit(Recovery(action="disk-full", target=self._announced, severity="error",
                                   detail=f"{what}: {exc.strerror or exc}. The run pauses and goes on by itself "
                                          f"once the disk takes writes again (for at most {self._deadline_text()}; "
                                          "else it stops, and the same command resumes it)"))

    def wait_for_room(self, stop: threading.Event) -> bool:
        """True when there is room to convert; False if `stop` was set while waiting, or the deadline passed."""
        problem = self._problem()
        if problem is None:
            return True
        with self._lock:
            if self._announced is None and isinstance(problem, DiskCheck):
                self._announced = str(problem.mount)
                hint = "" if self.min_free_bytes is not None else (
                    "; or lower the threshold with --min-free-gb (the default asks for max(2 GB, 5% of the disk))")
                self.emit(Recovery(action="disk-low", target=self._announced, severity="error",
                                   detail=f"{problem.message}{hint}. Conversions wait and go on by themselves "
                                          f"(for at most {self._deadline_text()})"))
        deadline = time.monotonic() + self.deadline_s
        while problem is not None:
            if time.monotonic() >= deadline:
                self.emit(Recovery(action="disk-wait-expired", target=self._announced or "disk", severity="error",
                                   detail=f"no room after {self._deadline_text()}: stopping; free space and rerun "
                                          "the same command to resume"))
                self.on_expired()
                return False
            if stop.wait(min(self.poll_s, max(0.05, deadline - time.monotonic()))):
                return False
            problem = self._problem()
        with self._lock:
            if self._announced is not None:
                where, self._announced = self._announced, None
                self.emit(Recovery(action="disk-ok", target=where, severity="info",
                                   detail=f"{fmt_bytes(self._free(self.paths[0]))} free again; the run goes on"))
        return True

    def _problem(self) -> DiskCheck | OSError | None:
        with self._lock:
            refused = self._refused
        if refused is not None:
            if not all(takes_writes(p) for p in self.paths):
                return refused
            with self._lock:
                self._refused = None
        return self.check()

    def _deadline_text(self) -> str:
        return f"{self.deadline_s / 60:g} min" if self.deadline_s >= 60 else f"{self.deadline_s:g} s"

    @staticmethod
    def _free(path: Path) -> int:
        return low_space(path, 0).free_bytes


class DiskWaitSetting(ValueError):
    """A bad $NNLITE_DISK_WAIT_S: a usage error (the CLI exits 2 naming it)."""

    exit_code = 2


def disk_wait_deadline() -> float:
    text = os.environ.get(DISK_WAIT_ENV, "")
    try:
        return float(text) if text else DEFAULT_DISK_WAIT_S
    except ValueError:
        raise DiskWaitSetting(f"{DISK_WAIT_ENV}={text!r} is not a number of seconds") from None
