"""What a model attempted in the sandbox, as the job's stage, cause and message, judged in the parent.

From the records, outside in: the network namespace's counters and the processes left in the pid
namespace (view.py: the kernel's, out of the model's reach), the worker's record (attempt_record.py:
the address of a connect, the command of a process, the path of a write outside the writable
directories or of a read outside the view) and the exception the model raised (errno, filename).

An attempt that made the model fail keeps the failing stage (instantiate...) with the attempt as its
cause and message, the original message kept as `error_detail`; a conversion that went through but
did what model code may not fails at stage `sandbox`; a read outside the view that the model
survived is recorded in `sandbox_attempts`. The messages never carry what the model read: a file
outside the view does not exist inside it, so there is nothing to carry.
"""

from __future__ import annotations

import errno
import os
import re

from nnlite_tui.core.convert.causes import LEFT_PROCESSES, NO_NETWORK, PROCESS_CAP, SCRATCH_FULL, VIEW, \
    WRITE_SCRATCH
from nnlite_tui.core.convert.record import ConversionRecord, SandboxAttempt
from nnlite_tui.core.convert.sandbox.launch import ENV_SCRATCH_MB
from nnlite_tui.core.convert.sandbox.process_cap import ProcessCap
from nnlite_tui.core.convert.sandbox.view import SandboxState

# Verdicts after which the worker is replaced: the processes killed stay zombies of the worker (counted
# against the cap) until it exits, and the next model then could not start its thread pools.
RECYCLE = ("leaves-processes", "process-cap")
_OS_ERROR = re.compile(r"\[Errno (\d+)\] [^:]*: '([^']+)'")


def _fail(result: ConversionRecord, cause: str, message: str) -> ConversionRecord:
    out = result.copy()
    if result.get("ok"):  # the conversion went through, but what the model did is not allowed
        out.update({"ok": False, "stage": "sandbox", "error_type": "SandboxViolation"})
        out.pop("artifact_path", None)
    else:
        out["error_detail"] = result.get("error_message")
    out.update({"cause": cause, "error_message": message})
    return out


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}es" if word.endswith("ss") else f"{n} {word}s"


def _from_exception(result: ConversionRecord) -> list[SandboxAttempt]:
    """A write or read outside the view that only the exception shows (C code, posix.* called directly)."""
    found = _OS_ERROR.search(str(result.get("error_message") or ""))
    if result.get("ok") or not found:
        return []
    code, path = int(found.group(1)), found.group(2)
    if code in (errno.EROFS, errno.EACCES, errno.EPERM):
        return [{"event": "write", "target": path}]
    if code == errno.ENOENT:
        return [{"event": "read", "target": path}]
    return []


def judge(result: ConversionRecord, before: SandboxState, after: SandboxState, left: tuple[tuple[int, str], ...],
          cap: ProcessCap | None = None, contained: bool = True) -> ConversionRecord:
    """The job's result with the sandbox's verdict. contained=False (no bwrap: a network namespace
    only, or nothing) says what the model did, not what it tried."""
    result = result.copy()
    seen = list(result.pop("sandbox_record", None) or []) or _from_exception(result)
    net = after.net_delta(before)
    # A connect names the address; a lookup only the name (create_connection looks up even an IP first).
    connects = [a for a in seen if a["event"] == "connect"] or [a for a in seen if a["event"] == "lookup"]
    commands = [a for a in seen if a["event"] == "command"]
    writes = [a for a in seen if a["event"] == "write"]
    # A read that missed in the sandbox but would have found the file on the host reached outside the view.
    reads = [a for a in seen if a["event"] == "read" and os.path.exists(a["target"])]
    if (connects or net) and result.get("cause") == "downloads-weights":
        return {**result, "sandbox_network": net}  # offline.py's refusal already says what it was
    if connects or net:
        if connects:
            a = connects[0]
            what = f"connect to {a['target']}" if a["event"] == "connect" else f"look up {a['target']}"
        else:  # only the kernel saw it: C code, or a process the model started
            via = f" (the model ran: {commands[0]['target']})" if commands else ""
            what = f"use the network{via}"
        return {**_fail(result, "network", f"the model tried to {what}; {NO_NETWORK}"), "sandbox_network": net}
    if writes:
        did = "tried to write" if contained else "wrote"
        return _fail(result, "writes-outside-scratch", f"the model {did} {writes[0]['target']}; {WRITE_SCRATCH}")
    if cap is not None and (cap.memory_killed() or (_out_of_memory(result) and _at_limit(cap))):
        return over_memory(result, (cap.memory.limit_bytes if cap.memory else 0) // 2**20)
    if cap is not None and cap.scratch_bytes and _no_space(result):
        return _fail(result, "scratch-full", f"the model filled its scratch ({cap.scratch_bytes // 2**20} MB, "
                                             f"a size-limited tmpfs); {SCRATCH_FULL} (${ENV_SCRATCH_MB} sets it)")
    if cap is not None and cap.kind == "cgroup" and cap.newly_hit():
        return over_cap(result, cap.limit, len(left))
    if not result.get("ok") and cap is not None and cap.kind == "rlimit" and _eagain(result):
        return over_cap(result, cap.limit, len(left))
    if left:
        names = ", ".join(sorted({cmd for _, cmd in left}))[:200]
        return _fail(result, "leaves-processes", f"the model left {_plural(len(left), 'process')} running "
                                                 f"({names}); {LEFT_PROCESSES}, so they were killed")
    if reads:
        # A failure is the read's only when the error names that path (a library's missed probe earlier
        # in the job must not take the blame for another failure).
        failed_on = [a for a in reads if a["target"] in str(result.get("error_message") or "")]
        if not result.get("ok") and failed_on:
            return _fail(result, "reads-outside-view", f"the model tried to read {failed_on[0]['target']}, "
                                                       f"outside its view; {VIEW}")
        return {**result, "sandbox_attempts": [f"read {a['target']} (not visible)" for a in reads][:10]}
    return result


def _no_space(result: ConversionRecord) -> bool:
    return not result.get("ok") and ("[Errno 28]" in str(result.get("error_message") or "")
                                     or "No space left on device" in str(result.get("error_message") or ""))


def _out_of_memory(result: ConversionRecord) -> bool:
    text = f"{result.get('error_type')} {result.get('error_message')}"
    return not result.get("ok") and ("MemoryError" in text or "[Errno 12]" in text or "Cannot allocate memory" in text)


def _at_limit(cap: ProcessCap) -> bool:
    """Whether the sandbox's memory reached the kernel's cap (a failed allocation was the cap's doing)."""
    peak = cap.memory.peak_bytes() if cap.memory else None
    return bool(peak and cap.memory and peak >= cap.memory.limit_bytes * 0.95)


def over_memory(result: ConversionRecord, cap_mb: int) -> ConversionRecord:
    """The sandbox went over the memory cap the kernel enforces, memfd, shared memory and scratch counted."""
    message = (f"the model's sandbox went over its memory cap of {cap_mb} MB (counted by the kernel: memory held "
               f"in a memfd, shared memory and the scratch included); raise it with --mem-cap-mb")
    out: ConversionRecord = {**result, "ok": False, "stage": "out-of-memory", "error_type": "MemoryCap",
                             "error_message": message, "cause": "out-of-memory",
                             "error_detail": result.get("error_message")}
    out.pop("artifact_path", None)
    return out


def _eagain(result: ConversionRecord) -> bool:
    text = f"{result.get('error_type')} {result.get('error_message')}"
    return "Resource temporarily unavailable" in text or "BlockingIOError" in text


def over_cap(result: ConversionRecord, limit: int | None, killed: int = 0, seen: int | None = None) -> ConversionRecord:
    counted = f"{seen}" if seen else f"more than {limit}"
    ended = f" ({_plural(killed, 'process')} it left {'was' if killed == 1 else 'were'} killed)" if killed else ""
    return _fail(result, "process-cap", f"the model ran {counted} {PROCESS_CAP} {limit}{ended}")
