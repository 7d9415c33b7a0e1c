"""The worker's record of what model code attempted: the functions a model calls to reach out, wrapped.

Not a boundary (the sandbox is, convert/sandbox; C code, `posix.*` called directly and the processes
a model starts pass by it, and model code runs in this process and could edit the record): it names
what the kernel refused, so that a failure can say "the model tried to connect to 127.0.0.1:8765"
rather than "Connection refused". A job's record is taken (and cleared) with each result, and the
parent judges it (sandbox/verdict.py) with what it saw from outside.

Why wrapped functions and not an audit hook (PEP 578), which sees more: CPython calls a hook for
every audited event, and torch.export calls id() (audited as `builtins.id`) about 120,000 times per
plain_cnn conversion; a Python hook cost 0.2-0.45 us per event here, 2-5% of the conversion's CPU.
These wrappers cost nothing until the wrapped function is called.

Recorded: every connect, datagram and name lookup (no network is the rule, loopback included); every
command or exec; a write (open for writing, mkdir, remove, rename ...) outside the writable roots; a
read of a path that does not exist here (the parent keeps those that exist on the host: outside the view).
"""

from __future__ import annotations

import builtins
import functools
import io
import os
import shutil
import socket
import subprocess
from collections.abc import Callable
from typing import Any

ENV_WRITABLE = "NNLITE_SANDBOX_WRITABLE"  # os.pathsep-separated roots a model may write under
# Always writable: the job's log arrives as a file descriptor and is opened as /proc/self/fd/N.
_ALWAYS_WRITABLE = ("/proc/self/fd", "/dev")
MAX_RECORDS = 20
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
_FIRST_PATH = ("remove", "unlink", "rmdir", "chmod", "truncate")
_COMMANDS = ("system", "posix_spawn", "posix_spawnp", "execv", "execve")

_records: list[dict[str, str]] = []
_writable: tuple[str, ...] = ()


def _add(event: str, target: str) -> None:
    if len(_records) < MAX_RECORDS:
        _records.append({"event": event, "target": target[:300]})


def _under(path: str, roots: tuple[str, ...]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def _as_path(value: Any) -> str | None:
    if isinstance(value, (str, bytes, os.PathLike)):
        return os.path.abspath(os.fsdecode(value))
    return None  # an fd


def _command(args: Any) -> str:
    if isinstance(args, (list, tuple)):
        return " ".join(os.fsdecode(a) if isinstance(a, (str, bytes, os.PathLike)) else str(a) for a in args)
    return os.fsdecode(args) if isinstance(args, (str, bytes, os.PathLike)) else str(args)


def _address(address: Any) -> str:
    if isinstance(address, tuple) and len(address) >= 2:
        host, port = address[0], address[1]
        return f"[{host}]:{port}" if ":" in str(host) else f"{host}:{port}"
    return str(address)


def _opened(path: Any, writes: bool) -> None:
    p = _as_path(path)
    if p is None:
        return
    if writes:
        if not _under(p, _writable):
            _add("write", p)
    elif not os.path.exists(p):
        _add("read", p)


def _open_check(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> None:
    _opened(file, any(c in str(mode) for c in "wax+"))


def _os_open_check(path: Any, flags: int, *args: Any, **kwargs: Any) -> None:
    if kwargs.get("dir_fd") is None:
        _opened(path, bool(flags & _WRITE_FLAGS))


def _path_write(*paths: Any, **kwargs: Any) -> None:
    if any(kwargs.get(k) is not None for k in ("dir_fd", "src_dir_fd", "dst_dir_fd")):
        return  # relative to a directory fd (shutil.rmtree's inner calls): the call that opened it was recorded
    for path in paths:
        p = _as_path(path)
        if p is not None and not _under(p, _writable):
            _add("write", p)
            return


def _first_path(path: Any, *args: Any, **kwargs: Any) -> None:  # remove, chmod, rmtree ...
    _path_write(path, **kwargs)


def _mkdir_check(path: Any, *args: Any, **kwargs: Any) -> None:
    # os.makedirs(exist_ok=True) calls mkdir on directories that exist: that writes nothing.
    p = _as_path(path)
    if p is None or not os.path.isdir(p):
        _path_write(path, **kwargs)


def _both_paths(src: Any, dst: Any, *args: Any, **kwargs: Any) -> None:  # rename, replace
    _path_write(src, dst, **kwargs)


def _second_path(src: Any, dst: Any, *args: Any, **kwargs: Any) -> None:  # symlink, link: only dst is written
    _path_write(dst, **kwargs)


def _command_check(path_or_command: Any, *args: Any, **kwargs: Any) -> None:
    """os.system(command); os.posix_spawn(path, argv, env) and os.execv(e)(path, argv[, env]): the argv."""
    _add("command", _command(args[0] if args else path_or_command))


def _popen_check(self: subprocess.Popen, args: Any, *rest: Any, **kwargs: Any) -> None:
    _add("command", _command(args))


def _lookup_check(host: Any, port: Any, *args: Any, **kwargs: Any) -> None:
    _add("lookup", f"{os.fsdecode(host) if isinstance(host, (str, bytes)) else ''}:{port}")


def _sendto_check(sock: socket.socket, data: Any, *rest: Any) -> None:  # sendto(data, [flags,] address)
    _connect_check(sock, rest[-1] if rest else None)


def _connect_check(sock: socket.socket, address: Any, *args: Any) -> None:
    if sock.family in (socket.AF_INET, socket.AF_INET6):
        _add("connect", _address(address))


def _wrap(owner: Any, name: str, check: Callable[..., None]) -> None:
    original = getattr(owner, name, None)
    if original is None or getattr(original, "_nnlite_recorded", False):
        return

    @functools.wraps(original)
    def recorded(*args: Any, **kwargs: Any) -> Any:
        check(*args, **kwargs)
        return original(*args, **kwargs)

    setattr(recorded, "_nnlite_recorded", True)  # so that a second install() leaves it wrapped once
    setattr(owner, name, recorded)


def install() -> None:
    """Start recording (once per process). The writable roots come from the environment."""
    global _writable
    roots = [r for r in os.environ.get(ENV_WRITABLE, "").split(os.pathsep) if r]
    _writable = tuple(os.path.abspath(r) for r in (*roots, *_ALWAYS_WRITABLE))
    for owner in (builtins, io):
        _wrap(owner, "open", _open_check)
    _wrap(os, "open", _os_open_check)
    for name in _FIRST_PATH:
        _wrap(os, name, _first_path)
    _wrap(os, "mkdir", _mkdir_check)
    for name in ("rename", "replace"):
        _wrap(os, name, _both_paths)
    for name in ("symlink", "link"):
        _wrap(os, name, _second_path)
    _wrap(shutil, "rmtree", _first_path)
    for name in ("connect", "connect_ex"):
        _wrap(socket.socket, name, _connect_check)
    _wrap(socket.socket, "sendto", _sendto_check)
    _wrap(socket, "getaddrinfo", _lookup_check)
    for name in _COMMANDS:
        _wrap(os, name, _command_check)
    _wrap(subprocess.Popen, "__init__", _popen_check)


def take() -> list[dict[str, str]]:
    """The records since the last take()."""
    out = list(_records)
    _records.clear()
    return out
