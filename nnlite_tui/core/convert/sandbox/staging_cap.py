"""A bound on what a job writes into its staging directory, which is on the host's disk.

The staging directory is where a job writes its artifact, bound into the sandbox read-write on the
cache's filesystem (so that the runner can take the artifact from outside). RLIMIT_FSIZE caps each
file, not their number: a model could write file after file onto the host's disk. The runner
measures the directory while the job runs (with the timeout and the memory cap) and ends the job
past one artifact's worth. A poll, not a kernel limit: a fast disk can take what it writes in one
interval beyond the bound, no more.
"""

from __future__ import annotations

import os
from pathlib import Path

from nnlite_tui.core.convert.causes import SCRATCH_FULL
from nnlite_tui.core.convert.intake import MAX_BYTES
from nnlite_tui.core.convert.record import ConversionRecord

ENV_STAGING_MB = "NNLITE_SANDBOX_STAGING_MB"
MAX_ENTRIES = 10_000  # a flood of files is over the bound by itself, however small they are
POLL_S = 0.25


def cap_bytes(copied_in: int = 0) -> int:
    """$NNLITE_SANDBOX_STAGING_MB, else the artifact cap and a margin; plus what the runner copied in."""
    value = os.environ.get(ENV_STAGING_MB, "").strip()
    if value:
        if not value.isdigit() or int(value) < 16:
            raise ValueError(f"${ENV_STAGING_MB}={value!r}: give a whole number of MB, at least 16")
        return int(value) * 2**20 + copied_in
    return MAX_BYTES + 64 * 2**20 + copied_in


def used_bytes(root: Path) -> int:
    """The disk space the files under root take (links not followed); past MAX_ENTRIES, more than any cap."""
    total, seen, stack = 0, 0, [str(root)]
    while stack:
        try:
            with os.scandir(stack.pop()) as entries:
                for entry in entries:
                    seen += 1
                    if seen > MAX_ENTRIES:
                        return 2**62
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            stack.append(entry.path)
                        else:
                            total += entry.stat(follow_symlinks=False).st_blocks * 512
                    except OSError:
                        continue  # removed meanwhile
        except OSError:
            continue  # removed meanwhile, or not a directory any more
    return total


def over_cap(used: int, cap: int) -> ConversionRecord:
    return {"ok": False, "stage": "sandbox", "error_type": "SandboxViolation", "cause": "scratch-full",
            "error_message": f"the model wrote {used / 2**20:.0f} MB into its staging directory, on the host's "
                             f"disk; {SCRATCH_FULL} ({cap // 2**20} MB, ${ENV_STAGING_MB} sets it)"}
