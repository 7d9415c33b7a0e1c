"""Runs parsed command lines against the simulated device: expansion, redirection, pipelines,
`$?`, and the table of commands (nnlite_tui.simdevice.commands).

Output goes to a sink `(fd, bytes) -> None` in the order it is produced, which is what `shell:` v1
needs (stdout and stderr interleaved) and what shell v2 frames separately.
"""

from __future__ import annotations

import fnmatch
import posixpath
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from nnlite_tui.simdevice.shparse import Command, ShellSyntaxError, Word, parse

if TYPE_CHECKING:
    from nnlite_tui.simdevice.device import SimDevice

Sink = Callable[[int, bytes], None]
RESERVED = {"if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac",
            "function", "(", ")", "{", "}", "[["}


class ExitShell(Exception):
    def __init__(self, status: int):
        self.status = status


@dataclass
class Ctx:
    """What one command sees: the device, its argv, stdin, and where its output goes."""

    device: "SimDevice"
    shell: "Shell"
    argv: list[str]
    stdin: bytes | None  # None: inherit the session's stdin (shell v2 / exec stream), if any
    sink: Sink

    def out(self, text: str | bytes) -> None:
        self.sink(1, text.encode() if isinstance(text, str) else text)

    def err(self, text: str | bytes) -> None:
        self.sink(2, text.encode() if isinstance(text, str) else text)

    async def read_stdin(self, n: int | None = None) -> bytes:
        """All of stdin (or exactly n bytes of it) from a pipe, a redirect or the session."""
        if self.stdin is not None:
            return self.stdin if n is None else self.stdin[:n]
        source = self.shell.stdin_stream
        if source is None:
            return b""
        if n is not None:
            return await source.readexactly(n)
        chunks = []
        while chunk := await source.read():
            chunks.append(chunk)
        return b"".join(chunks)

    @property
    def fs(self):
        return self.device.fs

    def path(self, p: str) -> str:
        return self.fs.normalize(p, self.shell.cwd)


@dataclass
class Shell:
    device: "SimDevice"
    stdin_stream: object | None = None  # has async read()/readexactly(n), like transport.Stream
    cwd: str = "/"
    status: int = 0
    env: dict[str, str] = field(default_factory=lambda: {
        "PATH": "/product/bin:/apex/com.android.runtime/bin:/system/bin:/system/xbin:/odm/bin:/vendor/bin",
        "HOME": "/", "USER": "shell", "HOSTNAME": "localhost", "TMPDIR": "/data/local/tmp"})

    async def run(self, line: str, sink: Sink, stdin: bytes | None = None) -> int:
        try:
            program = parse(line)
        except ShellSyntaxError as exc:
            sink(2, f"/system/bin/sh: {exc}\n".encode())
            self.status = 2
            return 2
        try:
            for connector, pipeline in program:
                if connector == "&&" and self.status != 0:
                    continue
                if connector == "||" and self.status == 0:
                    continue
                data = stdin
                for index, command in enumerate(pipeline.commands):
                    last = index == len(pipeline.commands) - 1
                    if last:
                        self.status = await self._run_command(command, data, sink)
                    else:
                        captured: list[bytes] = []

                        def pipe_sink(fd: int, chunk: bytes, captured=captured) -> None:
                            captured.append(chunk) if fd == 1 else sink(fd, chunk)

                        await self._run_command(command, data, pipe_sink)
                        data = b"".join(captured)
        except ExitShell as exc:
            self.status = exc.status
        return self.status

    def expand(self, word: Word) -> list[str]:
        text, pattern, globbed = "", "", False
        for kind, piece in word:
            if kind == "var":
                value = str(self.status) if piece == "?" else self.env.get(piece, "")
                text += value
                pattern += _escape(value)
            elif kind == "lit":
                text += piece
                pattern += _escape(piece)
            else:
                text += piece
                pattern += piece
                globbed = globbed or piece in "*?["
        if globbed:
            matches = self._glob(pattern)
            if matches:
                return matches
        return [text]

    def _glob(self, pattern: str) -> list[str]:
        """Expand a pattern component by component (`/sys/class/thermal/thermal_zone*/temp`)."""
        absolute = pattern.startswith("/")
        found = ["/" if absolute else ""]
        for part in [p for p in pattern.split("/") if p]:
            step = []
            for base in found:
                host = self.device.fs.resolve(base or ".", self.cwd)
                if not any(c in part for c in "*?["):
                    literal = _unescape(part)
                    if (host / literal).exists():
                        step.append(posixpath.join(base, literal))
                elif host.is_dir():
                    step += [posixpath.join(base, p.name) for p in sorted(host.iterdir())
                             if fnmatch.fnmatchcase(p.name, part) and not p.name.startswith(".")]
            found = step
        return found

    async def _run_command(self, command: Command, stdin: bytes | None, sink: Sink) -> int:
        from nnlite_tui.simdevice.commands import lookup

        argv = [arg for word in command.words for arg in self.expand(word)]
        fs = self.device.fs
        outputs: dict[int, tuple[str, bool] | None] = {}  # fd -> (path, append) or None (= inherit)
        dup_of: dict[int, int] = {}
        for redirect in command.redirects:
            target = "".join(self.expand(redirect.target))
            if redirect.op == "<":
                try:
                    stdin = b"" if target == "/dev/null" else fs.read_bytes(target, self.cwd)
                except OSError as exc:
                    sink(2, f"/system/bin/sh: {target}: {exc.strerror}\n".encode())
                    return 1
            elif redirect.op == ">&":
                dup_of[redirect.fd] = int(target) if target.isdigit() else 1
            else:
                try:
                    if target != "/dev/null":
                        fs.write_bytes(target, b"", self.cwd, append=redirect.op == ">>")
                except OSError as exc:
                    sink(2, f"/system/bin/sh: can't create {target}: {exc.strerror}\n".encode())
                    return 1
                outputs[redirect.fd] = (target, True)
                dup_of.pop(redirect.fd, None)

        def routed(fd: int, data: bytes) -> None:
            fd = dup_of.get(fd, fd)
            dest = outputs.get(fd)
            if dest is None:
                sink(fd, data)
            elif dest[0] != "/dev/null":
                fs.write_bytes(dest[0], data, self.cwd, append=True)

        if not argv:
            return 0
        name = argv[0]
        if name.startswith(("/system/bin/", "/system/xbin/", "/vendor/bin/")):
            name = posixpath.basename(name)
        if name == "toybox" and len(argv) > 1:
            argv, name = argv[1:], argv[1]
        if name in RESERVED:
            routed(2, f"/system/bin/sh: '{name}' is not supported by the simulated shell\n".encode())
            return 2
        func = lookup(name)
        if func is None:
            routed(2, f"/system/bin/sh: {argv[0]}: inaccessible or not found\n".encode())
            return 127
        ctx = Ctx(self.device, self, argv, stdin, routed)
        await self.device.faults.maybe_hang(argv)
        return int(await func(ctx))


def _escape(text: str) -> str:
    return "".join(f"[{c}]" if c in "*?[" else c for c in text)


def _unescape(text: str) -> str:
    return text.replace("[*]", "*").replace("[?]", "?").replace("[[]", "[")
