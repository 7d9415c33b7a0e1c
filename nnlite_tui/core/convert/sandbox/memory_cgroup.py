"""The memory cap of one sandbox, enforced by the kernel: a memory cgroup per sandbox.

The pool's own cap polls the worker tree's RSS, which does not count memory held in a memfd, in
shared memory or in a tmpfs (the scratch): a model could hold gigabytes there and pass the cap. The
cgroup counts every page the sandbox's processes charge, those included, and the kernel's OOM
killer ends the sandbox when it goes over. Swap is capped too (memsw / swap.max), so that the pages
are not simply moved out of the count.

Where: on cgroup v2 a child of the root with the memory controller enabled (as the pids cap does);
on cgroup v1 a child of this process's own memory cgroup, so that any limit set on the runner
still covers its sandboxes. Only root can make one here (a normal user's cgroup is not delegated
to it as a rule): elsewhere the RSS poll is the cap, and `nnlite doctor` says which is in effect.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from pathlib import Path

PARENT = "nnlite-sandbox"


def _words(path: Path) -> list[str]:
    try:
        return path.read_text().split()
    except OSError:
        return []


def _mounts() -> list[tuple[Path, str, list[str]]]:
    try:
        lines = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return []
    out = []
    for line in lines:
        parts = line.split()
        if len(parts) >= 4:
            out.append((Path(parts[1]), parts[2], parts[3].split(",")))
    return out


def _own_v1_path() -> str:
    """This process's cgroup in the v1 memory hierarchy ("/" when it is the root)."""
    try:
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            if "memory" in controllers.split(","):
                return path
    except (OSError, ValueError):
        return "/"
    return "/"


def _enable(directory: Path) -> bool:
    """v2: the memory controller enabled for directory's children."""
    if "memory" in _words(directory / "cgroup.subtree_control"):
        return True
    try:
        (directory / "cgroup.subtree_control").write_text("+memory")
    except OSError:
        return False
    return True


def parent_cgroup() -> tuple[Path, int] | None:
    """(the directory that holds one child per sandbox, cgroup version), or None where none can be made."""
    if os.geteuid() != 0:
        return None
    for where, fstype, options in _mounts():
        if fstype == "cgroup" and "memory" in options:
            parent = where / _own_v1_path().lstrip("/") / PARENT
            version = 1
            break
    else:
        v2 = next((w for w, t, _ in _mounts() if t == "cgroup2" and "memory" in _words(w / "cgroup.controllers")),
                  None)
        if v2 is None or not _enable(v2):
            return None
        parent, version = v2 / PARENT, 2
    try:
        parent.mkdir(exist_ok=True)
    except OSError:
        return None
    if version == 2 and not _enable(parent):
        return None
    return parent, version


@dataclass
class MemoryCgroup:
    path: Path
    version: int
    limit_bytes: int
    owned: bool = True  # False: the pids cgroup's own directory (v2), which the process cap removes
    kills_seen: int = 0

    def kills(self) -> int:
        """OOM kills in this cgroup so far (v2 memory.events, v1 memory.oom_control)."""
        name = "memory.events" if self.version == 2 else "memory.oom_control"
        words = _words(self.path / name)
        for key, value in zip(words[::2], words[1::2]):
            if key == "oom_kill" and value.isdigit():
                return int(value)
        return 0

    def newly_killed(self) -> bool:
        """Whether the kernel killed a process over the cap since the last call."""
        kills = self.kills()
        hit, self.kills_seen = kills > self.kills_seen, kills
        return hit

    def peak_bytes(self) -> int | None:
        text = _words(self.path / ("memory.peak" if self.version == 2 else "memory.max_usage_in_bytes"))
        return int(text[0]) if text and text[0].isdigit() else None

    def remove(self) -> bool:
        if not self.owned:
            return True
        try:
            self.path.rmdir()
        except FileNotFoundError:
            return True
        except OSError:
            return False  # busy: its tasks are still ending
        return True


def make(limit_bytes: int, v2_cgroup: Path | None = None) -> MemoryCgroup | None:
    """A new cgroup capped at limit_bytes (swap included), or None where the kernel offers none. On v2
    a process is in one cgroup only: the sandbox's pids cgroup (v2_cgroup) gets the cap, if there is one."""
    found = parent_cgroup()
    if found is None:
        return None
    parent, version = found
    shared = version == 2 and v2_cgroup is not None and v2_cgroup.parent == parent
    child = v2_cgroup if shared and v2_cgroup is not None else parent / f"s-{os.getpid()}-{secrets.token_hex(4)}"
    try:
        if not shared:
            child.mkdir()
        if version == 2:
            (child / "memory.max").write_text(str(limit_bytes))
            for name, value in (("memory.swap.max", "0"), ("memory.oom.group", "1")):
                if (child / name).exists():
                    (child / name).write_text(value)
        else:
            (child / "memory.limit_in_bytes").write_text(str(limit_bytes))
            if (child / "memory.memsw.limit_in_bytes").exists():  # not there without swap accounting
                (child / "memory.memsw.limit_in_bytes").write_text(str(limit_bytes))
    except OSError:
        if not shared:
            try:
                child.rmdir()
            except OSError:
                pass  # it was never made
        return None
    return MemoryCgroup(child, version, limit_bytes, owned=not shared)


def sweep() -> None:
    """Remove the empty per-sandbox memory cgroups that a killed runner left (rmdir refuses a busy one)."""
    found = parent_cgroup()
    if found is None:
        return
    for child in found[0].iterdir():
        if child.is_dir():
            try:
                child.rmdir()
            except OSError:
                continue  # busy: its sandbox still runs


def describe() -> str:
    """One line for `nnlite doctor`: how the memory cap is enforced here."""
    found = parent_cgroup()
    if found is None:
        return ("memory cap: the worker tree's RSS, polled each 0.1 s (memory held in a memfd, shared memory "
                "or the scratch is not counted: no memory cgroup can be made here"
                + ("" if os.geteuid() == 0 else ", not root") + ")")
    probe = make(2**30)
    if probe is None:
        return f"memory cap: RSS poll only (the memory cgroup under {found[0]} refused a limit)"
    probe.remove()
    return f"memory cap: by the kernel, a memory cgroup v{found[1]} per sandbox (memfd, shared memory, scratch counted)"
