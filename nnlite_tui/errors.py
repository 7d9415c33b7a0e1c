"""What a user sees when a command fails: one line naming the file or argument and the problem, and an
exit code per class of failure (exit_codes.py). The traceback only with --debug (or NNLITE_DEBUG=1).

Errors that know their class carry an `exit_code` attribute (StoreError, RunLocked, AdbPortError...);
the others are classified here by type. Kept free of heavy imports: it runs at start-up and on failure.
"""

from __future__ import annotations

import errno
import os
import sys
import threading
import traceback
from dataclasses import dataclass

from nnlite_tui.exit_codes import ExitCode

DEBUG_ENV = "NNLITE_DEBUG"
# The errors of the disk or the file system rather than of nnlite: a rerun after fixing it resumes.
DISK_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EIO, errno.EACCES, errno.EPERM,
                         errno.ENAMETOOLONG, errno.ELOOP, errno.EMFILE, errno.ENFILE})

# The environment's refusals (a rerun after fixing the disk resumes), as opposed to a file's own problem.
ENVIRONMENT_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EIO})


@dataclass(frozen=True)
class Failure:
    code: ExitCode
    message: str  # one line, no traceback


def debug_enabled() -> bool:
    return os.environ.get(DEBUG_ENV, "") not in ("", "0")


def one_line(text: str) -> str:
    """Control characters (newlines, escape sequences) shown escaped, so that the message stays one line."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text.strip())


def is_disk_error(exc: BaseException) -> bool:
    """An OSError of the disk or file system, itself or as the cause of the error at hand."""
    return disk_cause(exc) is not None


def environment_cause(exc: BaseException) -> OSError | None:
    """The disk error behind `exc` when it is the environment's (full, read-only, I/O), else None."""
    cause = disk_cause(exc)
    return cause if cause is not None and cause.errno in ENVIRONMENT_ERRNOS else None


def describe_os_error(exc: OSError) -> str:
    """`path: what went wrong`, with a hint for the cases a user can fix."""
    where = exc.filename if exc.filename is not None else ""
    what = exc.strerror or str(exc)
    hint = {errno.ENOSPC: "free some space and rerun the same command to resume",
            errno.EDQUOT: "free some space and rerun the same command to resume",
            errno.EROFS: "choose a writable place (--out)",
            errno.EACCES: "check the permissions, or choose another place",
            errno.EIO: "the disk reported an I/O error; check it, then rerun to resume"}.get(exc.errno or 0)
    text = f"{os.fsdecode(where)}: {what}" if where != "" else what
    return f"{text}; {hint}" if hint else text


def classify(exc: BaseException) -> Failure:
    """The exit code and the one-line message for an error no command handled itself."""
    code = getattr(exc, "exit_code", None)
    if isinstance(code, int):
        disk = disk_cause(exc) if code == ExitCode.DISK else None
        hint = describe_os_error(disk).partition("; ")[2] if disk is not None else ""
        return Failure(ExitCode(code), one_line(f"{exc}; {hint}" if hint else str(exc)))
    if _is_report_error(exc):
        return Failure(ExitCode.STATE, one_line(f"{exc}; `nnlite run` on this directory sets it aside and "
                                                   "measures that unit again"))
    disk = disk_cause(exc) or (exc if isinstance(exc, OSError) else None)  # any file the system refused
    if disk is not None:
        return Failure(ExitCode.DISK, one_line(describe_os_error(disk)))
    text = str(exc) or "(no message)"
    return Failure(ExitCode.INTERNAL, one_line(f"internal error: {type(exc).__name__}: {text} "
                                               f"(a bug; rerun with --debug for the traceback)"))


def report(exc: BaseException, *, debug: bool | None = None) -> int:
    """Print the one line (and the traceback with --debug) to stderr; -> the exit code."""
    failure = classify(exc)
    if debug if debug is not None else debug_enabled():
        traceback.print_exception(exc, file=sys.stderr)
    print(f"error: {failure.message}", file=sys.stderr, flush=True)
    return int(failure.code)


def install_thread_hook() -> None:
    """An error that escapes a background thread is one line too (the run itself reports its effect)."""
    def hook(args: threading.ExceptHookArgs) -> None:
        if args.exc_type is SystemExit or args.exc_value is None:
            return
        name = args.thread.name if args.thread is not None else "a thread"
        if debug_enabled():
            traceback.print_exception(args.exc_value, file=sys.stderr)
        print(f"error in {one_line(name)}: {classify(args.exc_value).message}", file=sys.stderr, flush=True)

    threading.excepthook = hook


def disk_cause(exc: BaseException) -> OSError | None:
    """The disk or file-system OSError behind `exc` (itself, or up to a few causes down), if any."""
    seen = 0
    while exc is not None and seen < 5:
        if isinstance(exc, OSError) and exc.errno in DISK_ERRNOS:
            return exc
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return None


def _is_report_error(exc: BaseException) -> bool:
    from nnlite_tui.core.results import ReportError

    return isinstance(exc, ReportError)
