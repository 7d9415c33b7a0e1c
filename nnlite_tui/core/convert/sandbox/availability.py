"""Which isolation this machine allows for model code, found once per process, and why not more.

Trial sandboxes, as the workers get them, run `true`: with a user namespace, then (root only)
without one; failing both, whether `unshare` can give a network namespace alone. The outcome:

  bwrap    the sandbox (policy.py); process cap rlimit (a normal user), cgroup or watchdog (root)
  unshare  a network namespace only, plus the in-process offline guard: files and processes are
           not protected
  none     the in-process offline guard only
  off      the user asked for no sandbox (--no-sandbox)

`nnlite run` says once at start when it is less than the sandbox, `--require-sandbox` refuses to
start then, and `nnlite doctor` prints `describe()`.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from nnlite_tui.core.convert.sandbox.policy import SandboxPolicy, wrap
from nnlite_tui.core.convert.sandbox.process_cap import default_max_tasks

MODES = ("auto", "require", "off")
INSTALL = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)"


class SandboxUnavailable(RuntimeError):
    """--require-sandbox on a machine where the sandbox cannot be made."""


@dataclass(frozen=True)
class Availability:
    mechanism: str  # "bwrap", "unshare", "none" or "off"
    reason: str  # why not the sandbox; "" when it works
    process_cap: str  # "rlimit", "cgroup" or "watchdog"
    max_tasks: int
    seconds: float  # how long the check took
    user_namespace: bool = True  # False: root's bwrap without one (user namespaces are disabled here)
    bwrap: str = "bwrap"
    version: str = ""
    options: frozenset[str] = field(default=frozenset(), repr=False)  # what this bwrap supports

    @property
    def sandboxed(self) -> bool:
        return self.mechanism == "bwrap"

    def describe(self) -> str:
        """One line for `nnlite run` (said once at start) and `nnlite doctor`."""
        if self.mechanism == "bwrap":
            how = "" if self.user_namespace else ", without a user namespace (root)"
            return (f"model code runs in a sandbox ({self.version or 'bubblewrap'}{how}; process cap "
                    f"{self.max_tasks} tasks by {self.process_cap})")
        if self.mechanism == "off":
            return "sandbox off (--no-sandbox): model code runs with the in-process offline guard only"
        if self.mechanism == "unshare":
            return (f"sandbox not available ({self.reason}): model code runs with network isolation only "
                    f"(unshare) and the in-process offline guard")
        return f"sandbox not available ({self.reason}): model code runs with the in-process offline guard only"

    def to_dict(self) -> dict[str, object]:
        """What a report records of the isolation a conversion ran under."""
        return {"mechanism": self.mechanism, "process_cap": self.process_cap if self.mechanism != "off" else None,
                "max_tasks": self.max_tasks if self.mechanism != "off" else None, "reason": self.reason or None}


def bwrap_options(bwrap: str) -> tuple[frozenset[str], str]:
    """The options this bwrap knows (`--help`) and its version: an older one lacks recent options
    (--disable-userns, --size), and one unknown option would make every sandbox fail to start."""
    try:
        text = subprocess.run([bwrap, "--help"], capture_output=True, text=True, timeout=10).stdout
        version = subprocess.run([bwrap, "--version"], capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return frozenset(), ""
    return frozenset(re.findall(r"^\s+(--[a-z0-9-]+)", text, flags=re.MULTILINE)), version


def _trial(argv: list[str], env: dict[str, str] | None, timeout_s: float, pass_fds: tuple[int, ...] = ()) -> str:
    """"" when argv ran and exited 0, else the reason in one line."""
    try:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout_s,
                              env=env, pass_fds=pass_fds)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{Path(argv[0]).name}: {exc}"
    if done.returncode == 0:
        return ""
    text = (done.stderr or done.stdout).strip().splitlines()
    return text[-1] if text else f"{Path(argv[0]).name} exited with code {done.returncode}"


def unshare_prefix() -> list[str]:
    return ["unshare", "-n" if os.geteuid() == 0 else "-rn", "--"]


def check(timeout_s: float = 10.0) -> Availability:
    """The trials (uncached; `current()` keeps the answer for the process)."""
    began = time.perf_counter()
    max_tasks = default_max_tasks()
    bwrap = shutil.which("bwrap")
    reason = f"bubblewrap (bwrap) is not on PATH; {INSTALL}"
    if bwrap is not None:
        options, version = bwrap_options(bwrap)
        scratch = Path(tempfile.mkdtemp(prefix="nnlite-sandbox-check-"))
        failures = []
        try:
            # A scratch of its own size, as the workers get it (bwrap's --size).
            policy = SandboxPolicy(scratch=scratch, max_tasks=max_tasks, scratch_bytes=16 * 2**20)
            true = [shutil.which("true") or "/bin/true"]
            for userns in (True, False) if os.geteuid() == 0 else (True,):
                # The kernel's cap as the workers get it, then (its prefix may be what failed) the watchdog.
                for kind in (None, "watchdog"):
                    launch = wrap(true, policy, user_namespace=userns, bwrap=bwrap, options=options, cap_kind=kind)
                    failed = _trial(launch.argv, launch.env, timeout_s, launch.pass_fds)
                    launch.release()
                    if not failed:
                        return Availability("bwrap", "", launch.cap.kind, max_tasks, time.perf_counter() - began,
                                            userns, bwrap, version, options)
                    failures.append(failed)
                    if launch.cap.kind == "watchdog":
                        break
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        reason = f"bwrap cannot create the sandbox: {failures[0]}"  # the one with a user namespace
    if shutil.which("unshare") is not None and not _trial([*unshare_prefix(), "true"], None, timeout_s):
        return Availability("unshare", reason, "watchdog", max_tasks, time.perf_counter() - began)
    return Availability("none", reason, "watchdog", max_tasks, time.perf_counter() - began)


@functools.lru_cache(maxsize=None)
def _current(path: str) -> Availability:
    return check()


def current() -> Availability:
    """check(), once per process and PATH (the PATH decides which bwrap, if any, is found)."""
    return _current(os.environ.get("PATH", ""))


def in_effect(mode: str) -> Availability:
    """The isolation for ConvertOptions.sandbox `mode`; SandboxUnavailable for "require" without the sandbox."""
    if mode not in MODES:
        raise ValueError(f"sandbox mode {mode!r} not one of {MODES}")
    if mode == "off":
        return Availability("off", "--no-sandbox", "none", 0, 0.0)
    found = current()
    if mode == "require" and not found.sandboxed:
        raise SandboxUnavailable(f"--require-sandbox: the sandbox for model code is not available here "
                                 f"({found.reason}); `nnlite doctor` says what is in effect")
    return found
