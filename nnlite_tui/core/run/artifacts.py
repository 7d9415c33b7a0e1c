"""What a long run leaves on disk: room before each conversion, and which artifacts it keeps.

A conversion writes an artifact (a .tflite, a .pte) of up to hundreds of MB into the cache and the
run directory. On a
nearly full disk the run waits before converting, with one event that names the filesystem and
what to free, and goes on by itself when there is room again: no model fails for want of disk,
no file is left half-written. Once a model is terminal its run-dir copy is kept or removed by
the run's `--keep-artifacts` policy (the conversion cache, bounded on its own, still has it).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from nnlite_tui.core.disk import DiskCheck, fmt_bytes, low_space
from nnlite_tui.core.events import Event, Recovery

KEEP_POLICIES = ("all", "failed", "none")
DEFAULT_KEEP = "failed"  # enough to reproduce every failure; successes are in the cache
ROOM_POLL_S = 5.0


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
    """Blocks conversions while a filesystem the run writes to is low on space."""

    def __init__(self, paths: Sequence[Path], emit: Callable[[Event], None], *, min_free_bytes: int | None = None,
                 cache_dir: Path | None = None, poll_s: float = ROOM_POLL_S):
        self.paths = list(paths)
        self.emit = emit
        self.min_free_bytes = min_free_bytes
        self.cache_dir = cache_dir
        self.poll_s = poll_s
        self._lock = threading.Lock()
        self._announced: DiskCheck | None = None

    def check(self) -> DiskCheck | None:
        """The first filesystem that is low, or None."""
        for path in self.paths:
            found = low_space(path, self.min_free_bytes, cache_dir=self.cache_dir)
            if found.low:
                return found
        return None

    def wait_for_room(self, stop: threading.Event) -> bool:
        """True when there is room to convert; False if `stop` was set while waiting."""
        low = self.check()
        if low is None:
            return True
        with self._lock:
            if self._announced is None:
                self._announced = low
                self.emit(Recovery(action="disk-low", target=str(low.mount), severity="error",
                                   detail=f"{low.message}. Conversions wait and go on by themselves."))
        while low is not None:
            if stop.wait(self.poll_s):
                return False
            low = self.check()
        with self._lock:
            if self._announced is not None:
                first, self._announced = self._announced, None
                self.emit(Recovery(action="disk-ok", target=str(first.mount), severity="info",
                                   detail=f"{fmt_bytes(self._free(first.path))} free again; conversions go on"))
        return True

    @staticmethod
    def _free(path: Path) -> int:
        return low_space(path, 0).free_bytes
