"""What one sandboxed process may see and do, and the bubblewrap command line that enforces it.

The view: the system (/usr and its top-level links, a few loader files of /etc) and the Python
environment read-only, the policy's read-only paths (model sources, caches a model may read), its
scratch and writable paths, a fresh /proc of its own pid namespace, a minimal /dev, and nothing else:
the user's home, the run directory and the system temp directory are simply not there (/tmp is an
empty read-only directory; TMPDIR is in scratch, on disk). Own user, pid, network (loopback only),
IPC and UTS namespaces, no capabilities, no new privileges, no user namespaces of its own, a clean
environment, and the process cap of process_cap.py.

No --new-session: the parent stops (SIGSTOP) and kills the worker through its process group, which
--new-session would leave; the worker has no controlling terminal to inject into (stdin is
/dev/null and the parent starts it in a new session).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import nnlite_tui
from nnlite_tui.core.convert.sandbox import seccomp
from nnlite_tui.core.convert.sandbox.process_cap import ProcessCap, choose_cap

# Merged-/usr systems have these as symlinks into /usr; older ones as directories.
_TOP_DIRS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
# What the dynamic loader, "localhost" and Debian's /usr/bin links read; nothing with secrets.
_ETC = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "hosts", "nsswitch.conf", "host.conf",
        "alternatives")
PATH = "/usr/local/bin:/usr/bin:/bin"
SHM_BYTES = 64 * 2**20  # memory in /dev/shm is not in the worker's RSS (the memory cap): kept small


@dataclass(frozen=True)
class SandboxPolicy:
    """Every path is absolute and appears at the same path inside."""

    scratch: Path  # writable; HOME is scratch/home, TMPDIR scratch/tmp
    read_only: tuple[Path, ...] = ()  # model sources, caches a model may read (torch hub)
    writable: tuple[Path, ...] = ()
    hidden: tuple[Path, ...] = ()  # empty and read-only, even inside a read-only path
    masked: tuple[Path, ...] = ()  # files read as empty (/dev/null over them), even inside a read-only path
    python_path: tuple[Path, ...] = ()  # PYTHONPATH inside, after this package's own root
    max_tasks: int | None = None  # processes and threads at once (process_cap.py); None: no cap
    env: Mapping[str, str] = field(default_factory=dict)  # the only other variables passed in
    memory_bytes: int | None = None  # the kernel's memory cap (memory_cgroup.py) where it can be set
    scratch_bytes: int | None = None  # scratch as a tmpfs of this size (counted as memory); None: on disk

    def __post_init__(self) -> None:
        for p in (self.scratch, *self.read_only, *self.writable, *self.hidden, *self.masked, *self.python_path):
            if not Path(p).is_absolute():
                raise ValueError(f"sandbox path {p} is not absolute")


def package_root() -> Path:
    """The directory holding the nnlite_tui package that is running (a checkout, or site-packages)."""
    return Path(nnlite_tui.__file__).resolve().parent.parent


def python_paths() -> tuple[Path, ...]:
    """The interpreter, its environment, this package and any other site directory on sys.path, for a
    read-only view in which `python -m nnlite_tui...` imports what it imports here. Only the package
    directory of a checkout, not the checkout (its run directories, say)."""
    paths = {Path(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)}
    paths.add(Path(os.path.realpath(sys.executable)).parent)
    paths.add(Path(nnlite_tui.__file__).resolve().parent)
    paths.update(Path(p) for p in sys.path if Path(p).name in ("site-packages", "dist-packages") and Path(p).is_dir())
    return outermost(paths)


def outermost(paths: Iterable[Path | str]) -> tuple[Path, ...]:
    """The paths without those inside another of them."""
    kept: list[Path] = []
    for p in sorted({Path(os.path.abspath(x)) for x in paths}, key=lambda x: (len(x.parts), str(x))):
        if not any(p == k or k in p.parents for k in kept):
            kept.append(p)
    return tuple(kept)


def _system_args() -> list[str]:
    args = ["--ro-bind", "/usr", "/usr"]
    for name in _TOP_DIRS:
        host = Path("/") / name
        if host.is_symlink():
            args += ["--symlink", os.readlink(host), str(host)]
        elif host.is_dir():
            args += ["--ro-bind", str(host), str(host)]
    for name in _ETC:
        args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    # The CPUs' topology and caches, for XNNPACK's cpuinfo (it also works from /proc/cpuinfo alone).
    args += ["--ro-bind-try", "/sys/devices/system/cpu", "/sys/devices/system/cpu"]
    return args


@dataclass
class Launch:
    """A command line ready to start, and how its process cap is enforced; release() once it has ended."""

    argv: list[str]
    cap: ProcessCap
    env: dict[str, str]  # the environment to start argv with (bwrap's own, or the process's without it)
    fds: tuple[int, ...] = ()  # to keep open in the started process (bwrap's seccomp program)

    @property
    def pass_fds(self) -> tuple[int, ...]:
        """The descriptors to pass to a start of argv, each read from its start (bwrap reads to the end,
        and the offset is shared: a second start from the same Launch would read nothing)."""
        for fd in self.fds:
            os.lseek(fd, 0, os.SEEK_SET)
        return self.fds

    def release(self) -> None:
        for fd in self.fds:
            os.close(fd)
        self.fds = ()
        self.cap.release()


def inner_env(policy: SandboxPolicy, path: str = PATH) -> dict[str, str]:
    """The model's whole environment: no variable of the user's (tokens, keys) unless the policy passes it."""
    home, tmp = Path(policy.scratch) / "home", Path(policy.scratch) / "tmp"
    for d in (home, tmp):
        d.mkdir(parents=True, exist_ok=True)
    python_path = os.pathsep.join(str(p) for p in (package_root(), *policy.python_path))
    return {**policy.env, "PATH": path, "HOME": str(home), "TMPDIR": str(tmp), "PYTHONPATH": python_path,
            # The sources are read-only: importing them must not try to write __pycache__ next to them.
            "PYTHONDONTWRITEBYTECODE": "1"}


def wrap(argv: list[str], policy: SandboxPolicy, *, user_namespace: bool = True, bwrap: str = "bwrap",
         options: frozenset[str] | None = None, cap_kind: str | None = None) -> Launch:
    """The bwrap command line that runs argv under policy (the caller passes fds with pass_fds as before).

    user_namespace=False only for root where no user namespace can be made (availability.py finds
    out): bwrap then makes the other namespaces with root's own privileges, and --cap-drop ALL leaves
    the sandbox none of them. `options` (what this bwrap knows) leaves out recent options it lacks;
    `cap_kind` "watchdog" where the kernel's cap failed its trial.
    """
    cap = choose_cap(policy.max_tasks, kind=cap_kind, memory_bytes=policy.memory_bytes)

    def known(option: str) -> bool:
        return options is None or option in options

    # --disable-userns: no user namespaces of the model's own inside (less kernel surface to attack).
    userns = ["--unshare-user", *(["--disable-userns"] if known("--disable-userns") else [])] if user_namespace else []
    args = [bwrap, *userns, "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
            "--die-with-parent", "--cap-drop", "ALL", "--unshare-net"]
    shm = ["--size", str(SHM_BYTES), "--tmpfs", "/dev/shm"] if known("--size") else []
    # /tmp stays an empty read-only directory, so that the parents bwrap makes for mounts under it
    # (a cache or run directory in /tmp) take no writes either.
    args += ["--proc", "/proc", "--dev", "/dev", *shm, "--dir", "/tmp", *_system_args()]
    mounts: list[tuple[Path, int, list[str]]] = []
    for p in outermost((*python_paths(), *policy.read_only)):
        mounts.append((p, 0, ["--ro-bind", os.path.realpath(p), str(p)]))
    scratch = Path(policy.scratch)
    if policy.scratch_bytes and known("--size"):
        cap.scratch_bytes = policy.scratch_bytes
        # Its own size-limited tmpfs: a model that fills it gets ENOSPC, not the host's disk.
        mounts.append((scratch, 1, ["--size", str(policy.scratch_bytes), "--tmpfs", str(scratch),
                                    "--dir", str(scratch / "home"), "--dir", str(scratch / "tmp")]))
    for p in {Path(x) for x in policy.writable} | ({scratch} if not policy.scratch_bytes or not known("--size")
                                                    else set()):
        mounts.append((p, 1, ["--bind", os.path.realpath(p), str(p)]))
    for p in policy.hidden:
        mounts.append((Path(p), 2, ["--tmpfs", str(p)]))
    for p in policy.masked:
        mounts.append((Path(p), 2, ["--ro-bind", os.devnull, str(p)]))
    # A directory before what is inside it; at the same path a hidden tmpfs last, so that it wins.
    for _, _, m in sorted(mounts, key=lambda m: (len(m[0].parts), m[1])):
        args += m
    for p in policy.hidden:  # empty and read-only: a write there fails as anywhere outside scratch
        args += ["--remount-ro", str(p)]
    args += ["--remount-ro", "/", "--chdir", str(policy.scratch), "--clearenv"]
    for k, v in inner_env(policy).items():
        args += ["--setenv", k, v]
    fd = seccomp.program_fd() if known("--seccomp") else None
    if fd is not None:
        args += ["--seccomp", str(fd)]
    outer = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL")}
    return Launch([*cap.outer_prefix(), *args, "--", *cap.inner_prefix(), *argv], cap, outer,
                  (fd,) if fd is not None else ())
