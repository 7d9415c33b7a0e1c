"""The parent's view of a running sandbox, from outside it (out of the model's reach).

  - the network namespace's counters (/proc/<worker>/net/snmp): any connection or datagram
    attempt by any process in the sandbox, C code and commands included, moves one of them; a
    normal conversion moves none;
  - the pid namespace's processes: anything but bwrap's init (pid 1 inside) and the worker (pid 2)
    was started by the model.
"""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass

# Counters in /proc/net/snmp that move when anything in the namespace tries the network.
_COUNTERS = {"Tcp": ("ActiveOpens",), "Udp": ("OutDatagrams",), "Ip": ("OutNoRoutes",)}


@dataclass(frozen=True)
class SandboxState:
    net: dict[str, int]  # "Tcp.ActiveOpens" ... (empty when unreadable or not the sandbox's own)
    extra: tuple[tuple[int, str], ...]  # (host pid, command line) of the processes the model started

    def net_delta(self, before: SandboxState) -> dict[str, int]:
        return {k: v - before.net.get(k, 0) for k, v in self.net.items() if v - before.net.get(k, 0) > 0}

    def started_since(self, before: SandboxState) -> SandboxState:
        """This state without the processes that were already there (ones the worker started for itself)."""
        known = {pid for pid, _ in before.extra}
        return SandboxState(self.net, tuple(p for p in self.extra if p[0] not in known))


def _snmp(pid: int) -> dict[str, int]:
    try:
        with open(f"/proc/{pid}/net/snmp") as f:
            lines = f.read().splitlines()
    except OSError:
        return {}
    out: dict[str, int] = {}
    for names, values in zip(lines[::2], lines[1::2]):
        proto, *keys = names.split()
        proto = proto.rstrip(":")
        for key, value in zip(keys, values.split()[1:]):
            if key in _COUNTERS.get(proto, ()):
                out[f"{proto}.{key}"] = int(value)
    return out


def _ns_pid(pid: int) -> int | None:
    """pid's number in its own (innermost) pid namespace."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("NSpid:"):
                    return int(line.split()[-1])
    except (OSError, ValueError):
        return None
    return None


def worker_host_pid(outer_pid: int) -> int | None:
    """The worker's pid on the host, under the bwrap started as outer_pid: the sandbox's pid 2."""
    import psutil

    try:
        for child in psutil.Process(outer_pid).children(recursive=True):
            if _ns_pid(child.pid) == 2:
                return child.pid
    except psutil.Error:
        return None
    return None


def sandbox_state(outer_pid: int, mechanism: str) -> SandboxState:
    """The sandbox as the parent sees it. Without bwrap's pid namespace the worker is outer_pid itself
    (unshare execs it) and only its descendants can be seen: one that left its session and was
    reparented is out of sight. The network counters are the sandbox's own under bwrap and unshare;
    without a namespace they would be the host's, so they are left out."""
    import psutil

    worker = worker_host_pid(outer_pid) if mechanism == "bwrap" else outer_pid
    extra = []
    try:
        for child in psutil.Process(outer_pid).children(recursive=True):
            if (_ns_pid(child.pid) in (1, 2)) if mechanism == "bwrap" else child.pid == worker:
                continue
            try:
                extra.append((child.pid, " ".join(child.cmdline())[:200]))
            except psutil.Error:
                continue  # ended between listing and reading
    except psutil.Error:
        pass  # the sandbox ended: nothing is left in it
    net = _snmp(worker) if worker and mechanism in ("bwrap", "unshare") else {}
    return SandboxState(net, tuple(extra))


def end_leftovers(state: SandboxState) -> tuple[tuple[int, str], ...]:
    """Kill the processes a model left in the sandbox; the ones that were there."""
    for pid, _ in state.extra:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            continue  # it ended by itself
    return state.extra
