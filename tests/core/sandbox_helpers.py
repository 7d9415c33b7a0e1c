"""What the sandbox tests share: whether this machine can make the sandbox, a listener on 127.0.0.1 that
records what reaches it, a PATH without bubblewrap, and waiting on processes."""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from pathlib import Path

import psutil

from nnlite_tui.core.convert.sandbox.availability import current


def sandbox_here() -> bool:
    return current().sandboxed


SKIP_REASON = "no sandbox on this machine (`nnlite doctor` says why: bubblewrap missing, or no namespaces)"


class Listener:
    """A listener that records every connection it accepts (and what came with it): TCP on 127.0.0.1,
    or a unix socket at `path`."""

    def __init__(self, path: Path | None = None) -> None:
        if path is None:
            self.sock = socket.create_server(("127.0.0.1", 0))
            self.port = self.sock.getsockname()[1]
        else:
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.bind(str(path))
            self.sock.listen()
        self.seen: list[bytes] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return  # closed
            with conn:
                conn.settimeout(1)
                try:
                    self.seen.append(conn.recv(200))
                except OSError:
                    self.seen.append(b"")

    def close(self) -> None:
        self.sock.close()


def path_without_bwrap(where: Path) -> str:
    """A PATH of links to every program on this PATH but bwrap: the machine as if bubblewrap were not installed."""
    where.mkdir(parents=True, exist_ok=True)
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        if not os.path.isdir(folder):
            continue
        for name in os.listdir(folder):
            target, link = os.path.join(folder, name), where / name
            if name != "bwrap" and not link.exists() and os.access(target, os.X_OK) and os.path.isfile(target):
                link.symlink_to(target)
    assert shutil.which("bwrap", path=str(where)) is None
    return str(where)


def processes_with(text: str) -> list[int]:
    found = []
    for p in psutil.process_iter(["pid", "cmdline"]):
        try:
            if text in " ".join(p.info["cmdline"] or []):
                found.append(p.info["pid"])
        except psutil.Error:
            continue  # gone while listing
    return found


def wait_until(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return bool(condition())
