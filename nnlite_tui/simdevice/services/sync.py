"""The `sync:` service, protocol v1: STAT, LIST, SEND, RECV, QUIT over the device filesystem.

Requests are `ID(4) + u32 length + path`. SEND's path is "path,mode", followed by DATA chunks
(<= 64 KiB) and DONE+mtime, answered by OKAY or FAIL. RECV answers DATA chunks then DONE, or FAIL.
STAT answers mode/size/mtime, all zero when the path does not exist. v2 variants are never
requested because the device does not advertise stat_v2/ls_v2/sendrecv_v2.
"""

from __future__ import annotations

import io
import os
import struct
from typing import TYPE_CHECKING

from nnlite_tui.simdevice.transport import Stream

if TYPE_CHECKING:
    from nnlite_tui.simdevice.device import SimDevice

SYNC_DATA_MAX = 64 * 1024


def _fail(message: str) -> bytes:
    data = message.encode()
    return b"FAIL" + struct.pack("<I", len(data)) + data


def _stat_triplet(st: os.stat_result) -> tuple[int, int, int]:
    return st.st_mode & 0xFFFFFFFF, st.st_size & 0xFFFFFFFF, int(st.st_mtime) & 0xFFFFFFFF


async def serve(device: "SimDevice", stream: Stream) -> None:
    fs = device.fs
    while True:
        header = await stream.readexactly(8)
        request, length = header[:4], struct.unpack("<I", header[4:])[0]
        if request == b"QUIT":
            return
        path = (await stream.readexactly(length)).decode("utf-8", "replace")
        if request == b"STAT":
            try:
                st = fs.resolve(path).stat()
                triplet = _stat_triplet(st)
            except OSError:
                triplet = (0, 0, 0)
            await stream.write(b"STAT" + struct.pack("<3I", *triplet))
        elif request == b"LIST":
            await stream.write(_list(device, path))
        elif request == b"SEND":
            await _send(device, stream, path)
        elif request == b"RECV":
            await _recv(device, stream, path)
        else:
            await stream.write(_fail(f"unknown sync request {request!r}"))
            return


def _list(device: "SimDevice", path: str) -> bytes:
    host = device.fs.resolve(path)
    out = bytearray()
    entries = []
    if host.is_dir():
        entries = [(".", host), ("..", host.parent)] + sorted((p.name, p) for p in host.iterdir())
    for name, p in entries:
        try:
            mode, size, mtime = _stat_triplet(p.stat())
        except OSError:
            continue
        raw = name.encode()
        out += b"DENT" + struct.pack("<4I", mode, size, mtime, len(raw)) + raw
    return bytes(out + b"DONE" + b"\0" * 16)


async def _send(device: "SimDevice", stream: Stream, spec: str) -> None:
    path, _, mode_text = spec.rpartition(",")
    if not path:
        path, mode_text = spec, "33188"
    mode = int(mode_text) if mode_text.isdigit() else 0o100644
    fs = device.fs
    error = None
    try:
        fs.check_writable(path)
        host = fs.resolve(path)
        if host.is_dir():
            raise IsADirectoryError(21, "Is a directory")
        host.parent.mkdir(parents=True, exist_ok=True)  # adbd creates parents (fixed_push_mkdir)
        tmp = host.with_name(host.name + ".adbsync.tmp")
        fh = open(tmp, "wb")
    except OSError as exc:
        error, fh = f"couldn't create file: {exc.strerror or exc}", None
    mtime = 0
    try:
        while True:
            header = await stream.readexactly(8)
            kind, value = header[:4], struct.unpack("<I", header[4:])[0]
            if kind == b"DATA":
                if value > SYNC_DATA_MAX:
                    await stream.write(_fail(f"sync data chunk of {value} bytes is too large"))
                    return
                chunk = await stream.readexactly(value)
                if fh is not None:
                    fh.write(chunk)
            elif kind == b"DONE":
                mtime = value
                break
            else:
                await stream.write(_fail(f"invalid data message {kind!r}"))
                return
    finally:
        if fh is not None:
            fh.close()
    if error is not None:
        await stream.write(_fail(error))
        return
    os.replace(tmp, host)
    os.chmod(host, mode & 0o777)
    if mtime:
        os.utime(host, (mtime, mtime))
    await stream.write(b"OKAY" + b"\0" * 4)


async def _recv(device: "SimDevice", stream: Stream, path: str) -> None:
    fs = device.fs
    norm = fs.normalize(path)
    try:
        if norm in fs.generated:
            source = io.BytesIO(fs.read_bytes(norm))
        else:
            source = open(fs.resolve(norm), "rb")
    except OSError as exc:
        await stream.write(_fail(f"remote object '{path}' does not exist" if isinstance(exc, FileNotFoundError)
                                 else f"{exc.strerror}"))
        return
    with source:
        # Several DATA frames per WRTE: one host round trip per max payload, not per 64 KiB.
        batch = bytearray()
        while chunk := source.read(SYNC_DATA_MAX):
            batch += b"DATA" + struct.pack("<I", len(chunk)) + chunk
            if len(batch) >= stream.conn.max_payload:
                await stream.write(bytes(batch))
                batch.clear()
        await stream.write(bytes(batch) + b"DONE" + b"\0" * 4)
