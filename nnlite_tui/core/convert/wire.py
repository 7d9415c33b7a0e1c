"""The bytes between the runner and a conversion worker: length-prefixed JSON, nothing else.

A worker runs model code, so whatever it sends is hostile data: a frame is a 4-byte big-endian
length and that many bytes of UTF-8 JSON, refused above MAX_FRAME before a byte of it is buffered,
and parsed with the json module (no objects, no code: `multiprocessing.Connection.recv()` would
unpickle, and a pickle runs code in the process that loads it). What a parsed message may hold is
checked field by field by convert/messages.py.

File descriptors go one way only, runner -> worker (SCM_RIGHTS on the job's frame): the runner
never takes a descriptor from a worker.
"""

from __future__ import annotations

import json
import math
import os
import select
import socket
import struct
from collections.abc import Mapping
from typing import Any

HEADER = struct.Struct(">I")
MAX_FRAME = 4 * 2**20  # a result is a few KB (tracebacks are cut to 3,000 characters); a flood is refused
MAX_FDS = 4


class ProtocolError(ValueError):
    """A frame that is not one bounded JSON object: the peer is broken or hostile."""


def _plain(value: Any) -> Any:
    """numpy scalars and other number-likes as plain JSON numbers (the worker side's results hold some)."""
    if hasattr(value, "item"):
        return value.item()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    raise TypeError(f"{type(value).__name__} is not JSON data")


def encode(message: Mapping[str, object]) -> bytes:
    body = json.dumps(message, default=_plain, separators=(",", ":")).encode()
    if len(body) > MAX_FRAME:
        raise ProtocolError(f"message of {len(body)} bytes is over the {MAX_FRAME}-byte limit")
    return HEADER.pack(len(body)) + body


def decode(body: bytes) -> dict[str, object]:
    """One frame's body as a JSON object; ProtocolError for anything else."""
    try:
        message = json.loads(body.decode("utf-8"), parse_constant=_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ProtocolError(f"not a JSON message ({type(exc).__name__})") from None
    if not isinstance(message, dict):
        raise ProtocolError(f"a JSON {type(message).__name__} where an object was expected")
    return message


def _constant(name: str) -> float:
    # NaN and infinities are floats a comparison may give (max_abs_diff of a diverging artifact).
    return {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}[name]


def send(sock: socket.socket, message: Mapping[str, object], fds: tuple[int, ...] = ()) -> None:
    frame = encode(message)
    if fds:
        sent = socket.send_fds(sock, [frame], list(fds))
        sock.sendall(frame[sent:])
    else:
        sock.sendall(frame)


class FrameReader:
    """Reassembles one frame from a non-blocking socket, a read at a time (the caller polls)."""

    def __init__(self, limit: int = MAX_FRAME):
        self.limit = limit
        self._buf = bytearray()
        self._need: int | None = None
        self.eof = False

    def feed(self, sock: socket.socket) -> dict[str, object] | None:
        """Read what is there; the message once whole, else None. ProtocolError on an oversized or bad frame."""
        while not self.eof:
            want = HEADER.size - len(self._buf) if self._need is None else self._need - len(self._buf)
            try:
                chunk = sock.recv(min(max(want, 1), 1 << 20))
            except (BlockingIOError, InterruptedError):
                return None
            if not chunk:
                self.eof = True
                break
            self._buf += chunk
            if self._need is None and len(self._buf) == HEADER.size:
                (self._need,) = HEADER.unpack(bytes(self._buf))
                self._buf.clear()
                if self._need > self.limit:
                    raise ProtocolError(f"a message of {self._need} bytes announced, over the {self.limit}-byte limit")
            if self._need is not None and len(self._buf) == self._need:
                message = decode(bytes(self._buf))
                self._buf.clear()
                self._need = None
                return message
        return None


def receive(sock: socket.socket, timeout: float | None = None, limit: int = MAX_FRAME) -> dict[str, object] | None:
    """One whole message (blocking up to `timeout`); None at end of stream. TimeoutError if none came in time."""
    reader = FrameReader(limit)
    sock.setblocking(False)
    try:
        while True:
            message = reader.feed(sock)
            if message is not None:
                return message
            if reader.eof:
                return None
            if not select.select([sock], [], [], timeout)[0]:
                raise TimeoutError("no message in time")
    finally:
        sock.setblocking(True)


def receive_with_fds(sock: socket.socket) -> tuple[dict[str, object] | None, list[int]]:
    """The worker's side: one job frame and the descriptors that came with its first bytes."""
    head, fds, _, _ = socket.recv_fds(sock, HEADER.size, MAX_FDS)
    if not head:
        return None, list(fds)
    while len(head) < HEADER.size:
        more = sock.recv(HEADER.size - len(head))
        if not more:
            return None, list(fds)
        head += more
    (size,) = HEADER.unpack(head)
    if size > MAX_FRAME:
        raise ProtocolError(f"a message of {size} bytes announced, over the {MAX_FRAME}-byte limit")
    body = bytearray()
    while len(body) < size:
        more = sock.recv(size - len(body))
        if not more:
            return None, list(fds)
        body += more
    return decode(bytes(body)), list(fds)


def close_fds(fds: list[int]) -> None:
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass  # already closed by whoever took it
