"""One adb transport (a TCP connection from the adb server), device side.

Handshake: the host sends CNXN(version, maxdata, "host::features=..."); we answer with our CNXN
once the device is past its `offline` boot phase (withholding it is what `offline` looks like to
the server). No AUTH is ever sent, like a device with ro.adb.secure=0.

Streams: OPEN(host_id, 0, "service\\0") -> OKAY(our_id, host_id) or CLSE(0, host_id) if refused.
Each WRTE we send waits for the host's OKAY before the next (no delayed_ack), payloads are chunked
to min(host maxdata, our maxdata), and each host WRTE is acked once the service has consumed it.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from typing import TYPE_CHECKING

from nnlite_tui.simdevice.protocol import (A_CLSE, A_CNXN, A_OKAY, A_OPEN, A_VERSION, A_WRTE, Message,
                                           ProtocolError, device_banner, parse_host_banner, read_message)

if TYPE_CHECKING:
    from nnlite_tui.simdevice.device import SimDevice

log = logging.getLogger(__name__)


class StreamClosed(Exception):
    pass


class Stream:
    def __init__(self, conn: "Connection", local_id: int, remote_id: int, service: str):
        self.conn, self.local_id, self.remote_id, self.service = conn, local_id, remote_id, service
        self._inbox: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._buffer = bytearray()
        self._acked = asyncio.Event()
        self._acked.set()
        self.closed = False

    # host -> device
    def feed(self, data: bytes) -> None:
        self._inbox.put_nowait(data)

    async def read(self) -> bytes:
        """Next chunk from the host; b"" once the host closed the stream."""
        if self._buffer:
            data, self._buffer = bytes(self._buffer), bytearray()
            return data
        chunk = await self._inbox.get()
        if chunk is None:
            self._inbox.put_nowait(None)
            return b""
        if not self.closed:
            self.conn.send(Message(A_OKAY, self.local_id, self.remote_id))
        return chunk

    async def readexactly(self, n: int) -> bytes:
        while len(self._buffer) < n:
            chunk = await self._inbox.get()
            if chunk is None:
                self._inbox.put_nowait(None)
                raise StreamClosed(f"stream closed with {len(self._buffer)} of {n} bytes")
            if not self.closed:
                self.conn.send(Message(A_OKAY, self.local_id, self.remote_id))
            self._buffer += chunk
        data = bytes(self._buffer[:n])
        del self._buffer[:n]
        return data

    # device -> host
    async def write(self, data: bytes) -> None:
        size = self.conn.max_payload
        for start in range(0, len(data), size):
            await self._acked.wait()
            if self.closed:
                raise StreamClosed("stream closed by the host")
            self._acked.clear()
            self.conn.send(Message(A_WRTE, self.local_id, self.remote_id, data[start:start + size]))
            await self.conn.drain()

    def on_okay(self) -> None:
        self._acked.set()

    def on_host_close(self) -> None:
        self.closed = True
        self._inbox.put_nowait(None)
        self._acked.set()

    async def close(self) -> None:
        if self.closed:
            return
        try:
            await asyncio.wait_for(self._acked.wait(), 30)
        except asyncio.TimeoutError:
            log.warning("no OKAY for the last write on %s", self.service)
        if not self.closed:
            self.closed = True
            self.conn.send(Message(A_CLSE, self.local_id, self.remote_id))
        self.conn.streams.pop(self.local_id, None)


class Connection:
    _ids = itertools.count(1)

    def __init__(self, device: "SimDevice", reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.device, self.reader, self.writer = device, reader, writer
        self.streams: dict[int, Stream] = {}
        self.tasks: dict[int, asyncio.Task] = {}
        self.max_payload = device.config.max_payload
        self.host_features: set[str] = set()
        self.online = False

    def send(self, msg: Message) -> None:
        if not self.writer.is_closing():
            self.writer.write(msg.encode())

    async def drain(self) -> None:
        try:
            await self.writer.drain()
        except ConnectionError as exc:
            raise StreamClosed(str(exc)) from exc

    async def run(self) -> None:
        try:
            while True:
                msg = await read_message(self.reader, self.device.config.max_payload)
                await self.dispatch(msg)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass  # the server went away: the normal end of a transport
        except ProtocolError as exc:
            log.warning("protocol error, dropping transport: %s", exc)
        finally:
            self.close()

    async def dispatch(self, msg: Message) -> None:
        if msg.command == A_CNXN:
            await self.device.boot.wait_cnxn_allowed()
            self.max_payload = min(msg.arg1, self.device.config.max_payload)
            self.host_features = set(parse_host_banner(msg.payload).get("features", "").split(","))
            banner = device_banner(self.device.props, self.device.features)
            self.send(Message(A_CNXN, min(msg.arg0, A_VERSION), self.device.config.max_payload, banner))
            self.online = True
        elif not self.online:
            log.debug("ignoring %s before the handshake", msg.name)
        elif msg.command == A_OPEN:
            self.open_stream(msg.arg0, msg.payload.rstrip(b"\0").decode("utf-8", "replace"))
        elif msg.command == A_WRTE:
            stream = self.streams.get(msg.arg1)
            if stream is not None:
                stream.feed(msg.payload)
        elif msg.command == A_OKAY:
            stream = self.streams.get(msg.arg1)
            if stream is not None:
                stream.on_okay()
        elif msg.command == A_CLSE:
            stream = self.streams.pop(msg.arg1, None)
            if stream is not None:
                stream.on_host_close()
                task = self.tasks.get(stream.local_id)
                if task is not None:
                    task.cancel()
        else:
            log.debug("ignoring %s", msg.name)

    def open_stream(self, remote_id: int, service: str) -> None:
        from nnlite_tui.simdevice.services import find_service

        self.device.log_service(service)
        handler = find_service(self.device, service)
        if handler is None:
            self.send(Message(A_CLSE, 0, remote_id))
            return
        local_id = next(self._ids)
        stream = Stream(self, local_id, remote_id, service)
        self.streams[local_id] = stream
        self.send(Message(A_OKAY, local_id, remote_id))
        self.tasks[local_id] = asyncio.get_running_loop().create_task(self._serve(stream, handler))

    async def _serve(self, stream: Stream, handler) -> None:
        try:
            await handler(stream)
            await stream.close()
        except StreamClosed:
            pass  # the host hung up on us
        except asyncio.CancelledError:
            pass  # host CLSE or transport teardown
        except Exception:
            log.exception("service %r failed", stream.service)
            await stream.close()
        finally:
            self.tasks.pop(stream.local_id, None)

    def close(self) -> None:
        for task in list(self.tasks.values()):
            task.cancel()
        for stream in list(self.streams.values()):
            stream.on_host_close()
        self.streams.clear()
        if not self.writer.is_closing():
            self.writer.close()
        self.device.connections.discard(self)
