"""The simulated device's filesystem: a sandbox directory on the host plus generated /proc and /sys files.

Device paths are absolute POSIX paths; `resolve()` maps them into the sandbox and can never escape
it (normpath first, then join). `/sdcard` is an alias of `/storage/emulated/0`, as on Android.
Generated files (meminfo, cpuinfo, thermal zones, cpufreq) exist as empty placeholders so that
`ls` and sync LIST see them, and `read_bytes()` returns their live content.
"""

from __future__ import annotations

import errno
import os
import posixpath
from collections.abc import Callable
from pathlib import Path

ALIASES = {"/sdcard": "/storage/emulated/0", "/storage/self/primary": "/storage/emulated/0",
           "/mnt/sdcard": "/storage/emulated/0"}
READ_ONLY = ("/proc", "/sys", "/system", "/vendor")
BASE_DIRS = ("/data/local/tmp", "/data/app", "/data/data", "/storage/emulated/0/Android/data",
             "/storage/emulated/0/Download", "/system/bin", "/vendor", "/dev", "/proc", "/sys", "/cache")


class DeviceFS:
    def __init__(self, root: str | os.PathLike[str]):
        self.root = Path(root).resolve()
        self.generated: dict[str, Callable[[], bytes]] = {}
        for d in BASE_DIRS:
            self.resolve(d).mkdir(parents=True, exist_ok=True)

    @staticmethod
    def normalize(path: str, cwd: str = "/") -> str:
        if not path.startswith("/"):
            path = posixpath.join(cwd, path)
        path = posixpath.normpath(path)
        if path.startswith("//"):
            path = "/" + path.lstrip("/")
        for alias, target in ALIASES.items():
            if path == alias or path.startswith(alias + "/"):
                path = target + path[len(alias):]
        return path

    def resolve(self, path: str, cwd: str = "/") -> Path:
        norm = self.normalize(path, cwd)
        host = self.root / norm.lstrip("/")
        return host

    def device_path(self, host: Path) -> str:
        return "/" + host.resolve().relative_to(self.root).as_posix().lstrip(".")

    def add_generated(self, path: str, content: Callable[[], bytes]) -> None:
        norm = self.normalize(path)
        host = self.resolve(norm)
        host.parent.mkdir(parents=True, exist_ok=True)
        host.touch()
        self.generated[norm] = content

    def check_writable(self, path: str, cwd: str = "/") -> None:
        norm = self.normalize(path, cwd)
        if any(norm == p or norm.startswith(p + "/") for p in READ_ONLY) or norm == "/":
            raise OSError(errno.EROFS, "Read-only file system", path)

    def read_bytes(self, path: str, cwd: str = "/") -> bytes:
        norm = self.normalize(path, cwd)
        if norm in self.generated:
            return self.generated[norm]()
        host = self.resolve(norm)
        if host.is_dir():
            raise IsADirectoryError(errno.EISDIR, "Is a directory", path)
        return host.read_bytes()

    def write_bytes(self, path: str, data: bytes, cwd: str = "/", append: bool = False) -> None:
        self.check_writable(path, cwd)
        host = self.resolve(path, cwd)
        if host.is_dir():
            raise IsADirectoryError(errno.EISDIR, "Is a directory", path)
        if not host.parent.is_dir():
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", path)
        with open(host, "ab" if append else "wb") as fh:
            fh.write(data)

    def exists(self, path: str, cwd: str = "/") -> bool:
        return self.resolve(path, cwd).exists()
