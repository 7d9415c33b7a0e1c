"""A figure summed over a process and all its descendants (a worker's tree: bwrap, the worker, what
the model started), read through psutil."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def tree_sum(pid: int, read: Callable[[Any], float]) -> float:
    """read(psutil.Process) summed over pid's tree; 0 when pid is gone. A member that exits between
    the listing and the reading counts nothing."""
    import psutil

    try:
        proc = psutil.Process(pid)
        procs = [proc, *proc.children(recursive=True)]
    except psutil.Error:
        return 0.0
    total = 0.0
    for p in procs:
        try:
            total += read(p)
        except psutil.Error:
            continue
    return total


def tree_cpu_s(pid: int) -> float:
    """CPU seconds of a live process tree, what its members reaped included (bench scripts: the
    kernel's accounting of reaped children sees nothing of a sandboxed worker's tree until it ends)."""

    def cpu(p: Any) -> float:
        t = p.cpu_times()
        return t.user + t.system + t.children_user + t.children_system

    return tree_sum(pid, cpu)
