"""The transport itself, spoken to directly (no adb server): handshake, version and max-payload
negotiation, chunking to the smaller maxdata, per-WRTE acks, refused services."""

from __future__ import annotations

import socket
import struct

import pytest

from nnlite_tui.simdevice.device import SimDevice
from nnlite_tui.simdevice.protocol import (A_CLSE, A_CNXN, A_OKAY, A_OPEN, A_VERSION, A_WRTE, HEADER, Message)


class RawHost:
    """A minimal adb host: enough to drive one stream at a time."""

    def __init__(self, port: int):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)

    def send(self, command: int, arg0: int, arg1: int, payload: bytes = b"") -> None:
        self.sock.sendall(Message(command, arg0, arg1, payload).encode())

    def recv(self) -> Message:
        command, arg0, arg1, length, _check, magic = HEADER.unpack(self._exact(HEADER.size))
        assert magic == command ^ 0xFFFFFFFF
        return Message(command, arg0, arg1, self._exact(length))

    def _exact(self, n: int) -> bytes:
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            assert chunk, "device closed the connection"
            buf += chunk
        return buf

    def connect(self, version: int, maxdata: int) -> Message:
        self.send(A_CNXN, version, maxdata, b"host::features=shell_v2,cmd\0")
        return self.recv()

    def run(self, service: str, local_id: int = 7) -> tuple[bytes, list[int]]:
        """OPEN a service, ack each WRTE, return (all data, sizes of the WRTEs)."""
        self.send(A_OPEN, local_id, 0, service.encode() + b"\0")
        ok = self.recv()
        assert ok.command == A_OKAY and ok.arg1 == local_id
        data, sizes = b"", []
        while True:
            msg = self.recv()
            if msg.command == A_CLSE:
                self.send(A_CLSE, local_id, msg.arg0)
                return data, sizes
            assert msg.command == A_WRTE and msg.arg1 == local_id
            data += msg.payload
            sizes.append(len(msg.payload))
            self.send(A_OKAY, local_id, msg.arg0)


@pytest.fixture
def sim(tmp_path):
    with SimDevice(register=False, root=str(tmp_path / "dev")) as device:
        yield device


def test_handshake_banner_and_version(sim):
    host = RawHost(sim.port)
    reply = host.connect(0x01000001, 1024 * 1024)
    assert reply.command == A_CNXN and reply.arg0 == A_VERSION and reply.arg1 == sim.config.max_payload
    banner = reply.payload.decode()
    assert banner.startswith("device::ro.product.name=sdk_gphone64_arm64;")
    assert "ro.product.model=sdk_gphone64_arm64;" in banner and "features=shell_v2,cmd" in banner
    assert "stat_v2" not in banner and "delayed_ack" not in banner
    old = RawHost(sim.port).connect(0x01000000, 4096)
    assert old.arg0 == 0x01000000  # min(host version, ours)


def test_writes_are_chunked_to_the_smaller_maxdata_and_acked_one_by_one(sim):
    sim.host_path("/data/local/tmp/blob").write_bytes(bytes(range(256)) * 1000)  # 256000 bytes
    host = RawHost(sim.port)
    host.connect(0x01000001, 4096)  # an old host: 4 KiB payloads
    data, sizes = host.run("shell:cat /data/local/tmp/blob")
    assert data == bytes(range(256)) * 1000
    assert max(sizes) == 4096 and len(sizes) >= 256000 // 4096
    big = RawHost(sim.port)
    big.connect(0x01000001, 1024 * 1024)  # the host allows 1 MiB but the device declared 256 KiB
    data, sizes = big.run("shell:cat /data/local/tmp/blob")
    assert len(data) == 256000 and max(sizes) <= sim.config.max_payload


def test_shell_v2_frames_and_exit_status(sim):
    host = RawHost(sim.port)
    host.connect(0x01000001, 256 * 1024)
    data, _ = host.run("shell,v2,raw:echo out; echo err >&2; exit 5")
    packets = []
    while data:
        kind, length = struct.unpack("<BI", data[:5])
        packets.append((kind, data[5:5 + length]))
        data = data[5 + length:]
    assert packets == [(1, b"out\n"), (2, b"err\n"), (3, b"\x05")]


def test_unknown_service_is_refused(sim):
    host = RawHost(sim.port)
    host.connect(0x01000001, 256 * 1024)
    host.send(A_OPEN, 9, 0, b"framebuffer:\0")
    reply = host.recv()
    assert (reply.command, reply.arg0, reply.arg1) == (A_CLSE, 0, 9)


def test_offline_device_withholds_cnxn(tmp_path):
    from nnlite_tui.simdevice.boot import BootTimings

    device = SimDevice(register=False, root=str(tmp_path / "dev"), boot=BootTimings(offline=30))
    device.start(wait_for="offline")
    try:
        host = RawHost(device.port)
        host.sock.settimeout(0.5)
        host.send(A_CNXN, 0x01000001, 4096, b"host::\0")
        with pytest.raises(socket.timeout):
            host.recv()
    finally:
        device.stop()
