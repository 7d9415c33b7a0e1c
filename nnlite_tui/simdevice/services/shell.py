"""`shell:` (v1: one raw byte stream, exit code lost), `shell,v2` (framed stdout/stderr/exit),
`exec:` (raw, stdin passed through: how streamed installs arrive) and `reboot:`.

v2 packets: [id:u8][len:u32le][data], ids 0 stdin, 1 stdout, 2 stderr, 3 exit, 4 close-stdin,
5 window size. The host sends close-stdin right after a non-interactive open.
"""

from __future__ import annotations

import asyncio
import struct
from typing import TYPE_CHECKING

from nnlite_tui.simdevice.interp import Shell
from nnlite_tui.simdevice.transport import Stream

if TYPE_CHECKING:
    from nnlite_tui.simdevice.device import SimDevice

ID_STDIN, ID_STDOUT, ID_STDERR, ID_EXIT, ID_CLOSE_STDIN, ID_WINDOW = range(6)


class _Pump:
    """Writes sink output to the stream in production order, from one task."""

    def __init__(self, stream: Stream, frame):
        self.queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.frame = frame
        self.task = asyncio.get_running_loop().create_task(self._run(stream))

    def sink(self, fd: int, data: bytes) -> None:
        if data:
            self.queue.put_nowait(self.frame(fd, data))

    async def _run(self, stream: Stream) -> None:
        while (item := await self.queue.get()) is not None:
            # coalesce what is already queued into one write
            while not self.queue.empty():
                nxt = self.queue.get_nowait()
                if nxt is None:
                    await stream.write(item)
                    return
                item += nxt
            await stream.write(item)

    async def finish(self) -> None:
        self.queue.put_nowait(None)
        await self.task

    def cancel(self) -> None:
        self.task.cancel()


async def _run_interactive(device: "SimDevice", stream: Stream, pump: _Pump) -> int:
    shell, status, pending = Shell(device), 0, b""
    while chunk := await stream.read():
        pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            status = await shell.run(line.decode("utf-8", "replace"), pump.sink)
    return status


async def serve_v1(device: "SimDevice", command: str, stream: Stream) -> None:
    pump = _Pump(stream, lambda fd, data: data)
    try:
        if command.strip():
            await Shell(device).run(command, pump.sink)
        else:
            await _run_interactive(device, stream, pump)
        await pump.finish()
    finally:
        pump.cancel()


async def serve_exec(device: "SimDevice", command: str, stream: Stream) -> None:
    """exec: raw stdout only (stderr too, unframed); the host's bytes are the command's stdin."""
    pump = _Pump(stream, lambda fd, data: data)
    try:
        await Shell(device, stdin_stream=stream).run(command, pump.sink)
        await pump.finish()
    finally:
        pump.cancel()


def _frame(packet_id: int, data: bytes) -> bytes:
    return struct.pack("<BI", packet_id, len(data)) + data


async def serve_v2(device: "SimDevice", command: str, stream: Stream) -> None:
    pump = _Pump(stream, lambda fd, data: _frame(ID_STDERR if fd == 2 else ID_STDOUT, data))
    stdin = _V2Stdin(stream)
    try:
        if command.strip():
            status = await Shell(device, stdin_stream=stdin).run(command, pump.sink)
        else:
            status = await _run_interactive(device, stdin, pump)
        pump.queue.put_nowait(_frame(ID_EXIT, bytes([status & 0xFF])))
        await pump.finish()
    finally:
        pump.cancel()
        stdin.stop()


class _V2Stdin:
    """The stdin packets of a v2 stream as a byte stream, with read()/readexactly() like Stream."""

    def __init__(self, stream: Stream):
        self.stream = stream
        self.data = bytearray()
        self.eof = False

    async def _fill(self) -> bool:
        if self.eof:
            return False
        header = await self.stream.readexactly(5)
        packet_id, length = struct.unpack("<BI", header)
        payload = await self.stream.readexactly(length) if length else b""
        if packet_id == ID_STDIN:
            self.data += payload
        elif packet_id == ID_CLOSE_STDIN:
            self.eof = True
        return True

    async def read(self) -> bytes:
        while not self.data and await self._fill():
            pass
        data, self.data = bytes(self.data), bytearray()
        return data

    async def readexactly(self, n: int) -> bytes:
        while len(self.data) < n:
            if not await self._fill():
                raise EOFError(f"stdin closed with {len(self.data)} of {n} bytes")
        data = bytes(self.data[:n])
        del self.data[:n]
        return data

    def stop(self) -> None:
        self.eof = True


async def serve_reboot(device: "SimDevice", target: str, stream: Stream) -> None:
    await stream.close()
    device.schedule_reboot(0.2)


def serve_text(text: str):
    async def handler(stream: Stream) -> None:
        await stream.write(text.encode())
    return handler
