"""The exit codes of every front end (the headless CLI and the console), in one neutral module.

docs/reference/exit-codes.md documents them; errors.py decides which one an uncaught error gets.
"""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    OK = 0  # every model reached a terminal state (failed models are results, not errors)
    INTERNAL = 1  # a bug: one line says so, --debug prints the traceback
    USAGE = 2  # bad option, missing path, settings that clash with the run being resumed
    STATE = 3  # the run's state file or a report is corrupt or unreadable (it is kept untouched)
    STOPPED = 4  # stopped by a signal or the operator before the end; rerun the command to resume
    NOTHING = 5  # nothing could be done: no model found, no device, the converter could not start
    REGRESSION = 6  # `nnlite compare --fail-on-regression` found a significant slowdown or a new failure
    DISK = 7  # a file could not be written or read: disk full, read-only file system, no permission, I/O error
    BUSY = 8  # another nnlite process is writing this run directory
