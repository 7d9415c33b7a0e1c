"""The cap on the tasks (processes and threads) one sandbox may run at once, set by the kernel where it can.

  rlimit    (a normal user) RLIMIT_NPROC, set by the first command inside the sandbox, that is inside
            its own user namespace, where the kernel counts only that namespace's tasks (rlimits are
            counted per user namespace since Linux 5.14). Set before bwrap it would count every
            process of the user, and bwrap itself could not start.
  cgroup    (root, which the kernel exempts from RLIMIT_NPROC even when mapped into a user namespace)
            a pids cgroup per sandbox with pids.max, entered by a shell that then execs bwrap: a
            process moved later would leave the children it had already started outside. On cgroup
            v1 the pids hierarchy; on v2 a child of the root with the pids controller enabled (the
            root's `+pids`, which systemd sets at boot, is enabled here if it is available but off).
            On v2 the hierarchy is one: the sandbox then leaves the runner's cgroup, and with it any
            memory or CPU limit set on that cgroup (nnlite's own memory cap still applies).
  watchdog  no kernel limit here (no writable pids cgroup, no prlimit): the parent counts the
            sandbox's tasks each 0.1 s and kills it over the cap (its pid namespace takes everything
            with it). A fast fork loop can outrun the poll: the last resort, and `nnlite doctor` says so.
Threads count in all three: a conversion peaks at 22-24 tasks with 1-2 torch threads (bwrap and its
init included), and the converters' thread pools grow with the cores, so the default grows with them.
"""

from __future__ import annotations

import os
import secrets
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from nnlite_tui.core.convert.process_tree import tree_sum
from nnlite_tui.core.convert.sandbox import memory_cgroup
from nnlite_tui.core.convert.sandbox.memory_cgroup import MemoryCgroup

PARENT = "nnlite-sandbox"  # the cgroup directory that holds one child per running sandbox
ENV_MAX_TASKS = "NNLITE_SANDBOX_MAX_TASKS"


def default_max_tasks() -> int:
    """$NNLITE_SANDBOX_MAX_TASKS, else 512 or 16 per core, whichever is more; ValueError if the variable is bad."""
    value = os.environ.get(ENV_MAX_TASKS, "").strip()
    if value:
        if not value.isdigit() or int(value) < 16:
            raise ValueError(f"${ENV_MAX_TASKS}={value!r}: give a whole number of tasks, at least 16")
        return int(value)
    return max(512, 16 * (os.cpu_count() or 1))


@dataclass
class ProcessCap:
    kind: str  # "rlimit", "cgroup", "watchdog" or "none" (no cap asked for)
    limit: int | None
    cgroup: Path | None = None
    prlimit: str | None = None
    hits_seen: int = 0  # pids.events "max" as of the last newly_hit()
    memory: MemoryCgroup | None = None  # the kernel's memory cap (memory_cgroup.py), where it can be set
    scratch_bytes: int | None = None  # the scratch tmpfs's size (policy.py), when it has one

    def cgroups(self) -> list[Path]:
        dirs = [self.cgroup] if self.kind == "cgroup" and self.cgroup is not None else []
        if self.memory is not None and self.memory.path not in dirs:
            dirs.append(self.memory.path)
        return dirs

    def outer_prefix(self) -> list[str]:
        dirs = self.cgroups()
        if not dirs:
            return []
        # $0 lists the cgroups; the shell moves itself into each, then becomes bwrap (same pid, same
        # process group), so that nothing the sandbox starts is ever outside them.
        script = 'for d in $0; do echo $$ > "$d/cgroup.procs" || exit 1; done; exec "$@"'
        return ["/bin/sh", "-c", script, " ".join(str(d) for d in dirs)]

    def memory_killed(self) -> bool:
        """Whether the kernel killed a process of the sandbox over its memory cap since the last call."""
        return self.memory is not None and self.memory.newly_killed()

    def inner_prefix(self) -> list[str]:
        if self.kind != "rlimit" or self.prlimit is None:
            return []
        return [self.prlimit, f"--nproc={self.limit}:{self.limit}", "--"]

    def newly_hit(self) -> bool:
        """Whether a fork failed on pids.max since the last call (the cgroup's pids.events counts them)."""
        words = _read_words(self.cgroup / "pids.events") if self.cgroup else []
        hits = int(words[1]) if len(words) >= 2 and words[0] == "max" and words[1].isdigit() else 0
        hit, self.hits_seen = hits > self.hits_seen, hits
        return hit

    def peak(self) -> int | None:
        return _read_int(self.cgroup / "pids.peak") if self.cgroup else None

    def release(self, wait_s: float = 2.0) -> None:
        """Remove the cgroups once their tasks are gone; one still busy after wait_s is swept at a later start."""
        deadline = time.monotonic() + wait_s
        if self.memory is not None:
            while not self.memory.remove() and time.monotonic() < deadline:
                time.sleep(0.02)
            self.memory = None
        if self.cgroup is None:
            return
        while True:
            try:
                self.cgroup.rmdir()
                break
            except FileNotFoundError:
                break  # already removed
            except OSError:
                # Busy: the kernel ends a pid namespace's tasks after its init, asynchronously (~0.2 s).
                if time.monotonic() > deadline:
                    return
                time.sleep(0.02)
        self.cgroup = None


def _read_int(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _read_words(path: Path) -> list[str]:
    try:
        return path.read_text().split()
    except OSError:
        return []


def pids_root() -> Path | None:
    """Where a pids cgroup can be made: the v1 pids hierarchy, or a v2 root with pids enabled below it."""
    try:
        mounts = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return None
    v2 = None
    for line in mounts:
        parts = line.split()
        if len(parts) < 4:
            continue
        where, fstype, options = Path(parts[1]), parts[2], parts[3].split(",")
        if fstype == "cgroup" and "pids" in options:
            return where
        if fstype == "cgroup2" and "pids" in _read_words(where / "cgroup.controllers"):
            v2 = where
    if v2 is not None and "pids" not in _read_words(v2 / "cgroup.subtree_control"):
        try:  # the root cgroup may enable a controller it has (no "no internal processes" rule there)
            (v2 / "cgroup.subtree_control").write_text("+pids")
        except OSError:
            return None
    return v2


def _parent_cgroup() -> Path | None:
    root = pids_root()
    if root is None:
        return None
    parent = root / PARENT
    try:
        parent.mkdir(exist_ok=True)
        if (root / "cgroup.subtree_control").exists():  # v2: the children need the controller too
            if "pids" not in _read_words(parent / "cgroup.subtree_control"):
                (parent / "cgroup.subtree_control").write_text("+pids")
    except OSError:
        return None
    return parent


def sweep() -> None:
    """Remove the empty per-sandbox cgroups that a killed runner left (rmdir refuses a busy one)."""
    memory_cgroup.sweep()
    root = pids_root() if os.geteuid() == 0 else None
    if root is None or not (root / PARENT).is_dir():
        return
    for child in (root / PARENT).iterdir():
        if child.is_dir():
            try:
                child.rmdir()
            except OSError:
                continue  # busy: its sandbox still runs


def choose_cap(limit: int | None, probe_only: bool = False, kind: str | None = None,
               memory_bytes: int | None = None) -> ProcessCap:
    """The strongest cap this process can set, or no stronger than `kind` (the one the availability
    check found working), with the kernel's memory cap of memory_bytes where it can be set;
    probe_only says which without keeping a cgroup."""
    cap = _tasks_cap(limit, probe_only, kind)
    if memory_bytes and not probe_only:
        cap.memory = memory_cgroup.make(memory_bytes, cap.cgroup if cap.kind == "cgroup" else None)
    return cap


def _tasks_cap(limit: int | None, probe_only: bool, kind: str | None) -> ProcessCap:
    if limit is None:
        return ProcessCap("none", None)
    if kind == "watchdog":
        return ProcessCap("watchdog", limit)
    if os.geteuid() != 0:
        prlimit = shutil.which("prlimit")
        return ProcessCap("rlimit", limit, prlimit=prlimit) if prlimit else ProcessCap("watchdog", limit)
    parent = _parent_cgroup()
    if parent is None:
        return ProcessCap("watchdog", limit)
    child = parent / f"s-{os.getpid()}-{secrets.token_hex(4)}"
    try:
        child.mkdir()
        (child / "pids.max").write_text(str(limit))
    except OSError:
        if child.exists():
            child.rmdir()
        return ProcessCap("watchdog", limit)
    if probe_only:
        child.rmdir()
        return ProcessCap("cgroup", limit)
    return ProcessCap("cgroup", limit, cgroup=child)


def tree_tasks(pid: int) -> int:
    """Tasks (threads included, as the kernel counts them) of pid and its descendants: the watchdog's count."""
    return int(tree_sum(pid, lambda p: p.num_threads()))
