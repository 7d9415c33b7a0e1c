"""What `nnlite doctor` says of the sandbox's other limits: how the memory cap is enforced here, the
scratch's size, unix sockets, and which of the user's environment variables go in."""

from __future__ import annotations

from nnlite_tui.core.convert.sandbox import memory_cgroup, seccomp, staging_cap
from nnlite_tui.core.convert.sandbox.availability import Availability
from nnlite_tui.core.convert.sandbox.launch import ENV_SCRATCH_MB, PASSED_ENV, scratch_mb


def rows(found: Availability, memory_mb: int | None = None) -> list[tuple[str, str]]:
    """(name, text) lines; memory_mb: the worker's memory cap (default: what a run would take now)."""
    if memory_mb is None:
        from nnlite_tui.core.convert.memory_cap import default_mem_cap_mb

        memory_mb = default_mem_cap_mb()
    out = [("memory", f"{memory_mb} MB per worker by default (--mem-cap-mb); "
                      + memory_cgroup.describe().removeprefix("memory cap: "))]
    if found.sandboxed and "--size" in found.options:
        out.append(("scratch", f"a tmpfs of {scratch_mb(memory_mb)} MB (${ENV_SCRATCH_MB}; counted as memory): "
                               f"a model that fills it fails as scratch-full, the host's disk untouched"))
    elif found.sandboxed:
        out.append(("scratch", "on disk, NOT size-limited (this bubblewrap lacks --size)"))
    if found.sandboxed:
        out.append(("staging", f"{staging_cap.cap_bytes() // 2**20} MB per job on the cache's disk "
                               f"(${staging_cap.ENV_STAGING_MB}; polled): past it the job fails as scratch-full"))
    refused = found.sandboxed and "--seccomp" in found.options and seccomp.program() is not None
    out.append(("unix sockets", "refused (seccomp: socket(AF_UNIX) fails with EACCES)" if refused else
                "NOT refused: a unix socket bound to a path in the view can be connected to"))
    out.append(("environment", f"only {len(PASSED_ENV)} named variables of yours go in (locale, thread counts, "
                               f"log levels: {', '.join(sorted(PASSED_ENV)[:4])}, ...)"))
    return out
