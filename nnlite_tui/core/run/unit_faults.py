"""One unit's step must never stop the run because of a file it could not write.

Two kinds of refused writes, told apart by errno:
- the environment's (ENOSPC, EDQUOT, EROFS, EIO): not the unit's fault. The run pauses (DiskGuard),
  the unit goes back to its queue without an attempt counted, and the run goes on when the disk takes
  writes again (or stops cleanly at the deadline, the unit still queued for the next run).
- any other OSError (ENAMETOOLONG, ELOOP, EISDIR, ...): that unit fails alone, with the cause.

Every other exception is a bug and keeps going to the run's guard (an internal error stops the run).
"""

from __future__ import annotations

from collections.abc import Callable

from nnlite_tui.core.outcomes import StageError
from nnlite_tui.core.run.artifacts import DiskGuard
from nnlite_tui.errors import describe_os_error, disk_cause, environment_cause

# What a rerun does with a unit that failed for want of disk or device: it is retried without --retry-failed.
ENVIRONMENT_MARKS = ("No space left on device", "Disk quota exceeded", "Read-only file system",
                     "Input/output error", "DiskFull", "no space left")


def run_unit(name: str, step: Callable[[], object], *, disk: DiskGuard, requeue: Callable[[], None],
             fail: Callable[[str], None]) -> None:
    """Run one unit's step; a refused write pauses the run (then `requeue`) or fails the unit (`fail`)."""
    try:
        step()
    except Exception as exc:  # noqa: BLE001 - re-raised unless it is a refused write
        env = environment_cause(exc)
        if env is not None:
            disk.refused(env, f"writing the files of {name}")
            requeue()
            return
        own = disk_cause(exc) or (exc if isinstance(exc, OSError) else None)
        if own is None:
            raise
        fail(f"{name}: its files cannot be written: {describe_os_error(own)}")


def is_environmental(error: StageError | None) -> bool:
    """A failure whose cause was the disk or a device that went away, not the model."""
    if error is None:
        return False
    if error.stage in ("device:offline", "device:adb"):  # bench/step.py: the device or adb went away
        return True
    text = f"{error.type} {error.message}"
    return any(mark in text for mark in ENVIRONMENT_MARKS)
