"""The adb wire format, device side: 24-byte little-endian message headers and the CNXN banner.

Message = header(command, arg0, arg1, data_length, data_check, magic) + payload, with
magic = command ^ 0xffffffff. The host never verifies data_check (adb 29 and 36), but we fill it.
"""

from __future__ import annotations

import asyncio
import struct
from dataclasses import dataclass

A_CNXN = 0x4E584E43
A_AUTH = 0x48545541
A_OPEN = 0x4E45504F
A_OKAY = 0x59414B4F
A_WRTE = 0x45545257
A_CLSE = 0x45534C43
A_STLS = 0x534C5453

NAMES = {A_CNXN: "CNXN", A_AUTH: "AUTH", A_OPEN: "OPEN", A_OKAY: "OKAY", A_WRTE: "WRTE",
         A_CLSE: "CLSE", A_STLS: "STLS"}

A_VERSION = 0x01000001  # the newest version we speak; we answer min(host's, ours)
DEVICE_MAX_PAYLOAD = 256 * 1024
HEADER = struct.Struct("<6I")


class ProtocolError(Exception):
    pass


@dataclass(frozen=True)
class Message:
    command: int
    arg0: int
    arg1: int
    payload: bytes = b""

    @property
    def name(self) -> str:
        return NAMES.get(self.command, hex(self.command))

    def encode(self) -> bytes:
        check = sum(self.payload) & 0xFFFFFFFF
        header = HEADER.pack(self.command, self.arg0, self.arg1, len(self.payload), check,
                             self.command ^ 0xFFFFFFFF)
        return header + self.payload


async def read_message(reader: asyncio.StreamReader, max_payload: int) -> Message:
    """Read one message; raise asyncio.IncompleteReadError at EOF, ProtocolError on garbage."""
    raw = await reader.readexactly(HEADER.size)
    command, arg0, arg1, length, _check, magic = HEADER.unpack(raw)
    if magic != command ^ 0xFFFFFFFF:
        raise ProtocolError(f"bad magic for command {command:#x}")
    if length > max(max_payload, 1024 * 1024):
        raise ProtocolError(f"payload of {length} bytes exceeds the limit")
    payload = await reader.readexactly(length) if length else b""
    return Message(command, arg0, arg1, payload)


def device_banner(props: dict[str, str], features: list[str]) -> bytes:
    """`device::ro.product.name=..;ro.product.model=..;ro.product.device=..;features=a,b`."""
    parts = [f"{key}={props.get(key, '')};" for key in ("ro.product.name", "ro.product.model",
                                                         "ro.product.device")]
    parts.append("features=" + ",".join(features))
    return ("device::" + "".join(parts)).encode()


def parse_host_banner(payload: bytes) -> dict[str, str]:
    """`host::features=shell_v2,cmd,...` -> {"features": "..."}; tolerant of a trailing NUL."""
    text = payload.rstrip(b"\0").decode("utf-8", "replace")
    _, _, rest = text.partition("::")
    out: dict[str, str] = {}
    for item in rest.split(";"):
        if "=" in item:
            key, value = item.split("=", 1)
            out[key] = value
    return out
