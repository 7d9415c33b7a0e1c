"""The wall's two parsers on crafted input, without a worker: the message frames (wire.py,
messages.py) and the artifact intake (intake.py). What a hostile worker can put in either."""

from __future__ import annotations

import hashlib
import os
import pickle
import socket
import struct
import threading
import time

import pytest

from nnlite_tui.core.convert import intake, messages, wire


def _frame(body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + body


def _read(data: bytes, limit: int = wire.MAX_FRAME):
    a, b = socket.socketpair()
    with a, b:
        a.sendall(data)
        a.shutdown(socket.SHUT_WR)
        return wire.receive(b, timeout=5, limit=limit)


class _RunsOnLoad:
    def __reduce__(self):
        return eval, ("__import__('os').getpid()",)


def test_a_pickle_frame_is_refused_as_data_never_loaded():
    blob = pickle.dumps(_RunsOnLoad())
    with pytest.raises(wire.ProtocolError, match="not a JSON message"):
        _read(struct.pack("!i", len(blob)) + blob)


def test_an_oversized_frame_is_refused_from_its_header_before_any_body_is_read():
    a, b = socket.socketpair()
    with a, b:
        a.sendall(struct.pack(">I", 2**31))  # the body never comes: refusing must not wait for it
        started = time.monotonic()
        with pytest.raises(wire.ProtocolError, match="over the"):
            wire.receive(b, timeout=5)
        assert time.monotonic() - started < 1


@pytest.mark.parametrize("body, says", [
    (b"[1, 2]", "where an object was expected"),
    (b"[" * 100_000 + b"]" * 100_000, "not a JSON message"),
    (b'{"ok": true, "stage": "done", "x": "' + b"\xff" + b'"}', "not a JSON message"),
])
def test_frames_that_are_not_one_json_object_are_refused(body, says):
    with pytest.raises(wire.ProtocolError, match=says):
        _read(_frame(body))


@pytest.mark.parametrize("forged, says", [
    ({"ok": True, "stage": "done", "artifact_sha256": "ab" * 32}, "only the runner measures"),
    ({"ok": True, "stage": "done", "model": "another-model", "key": "k"}, "only the runner measures"),
    ({"ok": True, "stage": "done", "valid": True}, "valid"),
    ({"ok": "yes", "stage": "done"}, "ok"),
    ({"ok": True, "stage": "done", "params": -1}, "params"),
    ({"ok": True, "stage": "done", "error_message": "x" * 30_000}, "error_message"),
    ({"ok": True, "stage": "done", "max_abs_diff": -1.0}, "max_abs_diff"),
    # without it the runner would have no compute check to judge again, and would skip the clean check
    ({"ok": True, "stage": "done", "max_abs_diff": 0.0}, "without its compute check"),
])
def test_a_forged_result_is_refused_field_by_field(forged, says):
    with pytest.raises(wire.ProtocolError, match=says):
        messages.result(forged)


def test_a_plain_result_passes_as_the_same_data():
    sent = {"ok": False, "stage": "export", "error_type": "RuntimeError", "error_message": "no",
            "construct": {"file": "m.py", "line": 3}, "sandbox_record": [{"event": "connect", "target": "x"}]}
    assert messages.result(wire.decode(wire.encode(sent)[4:])) == sent


# ----- the artifact a worker staged -----
@pytest.fixture
def staged(tmp_path):
    (tmp_path / "stage" / "out").mkdir(parents=True)
    return tmp_path / "stage"


def _take(staged, tmp_path):
    return intake.take(staged, intake.Path("out/m.tflite"), tmp_path / "taken.tflite")


def test_a_plain_file_is_copied_and_hashed_by_the_runner(staged, tmp_path):
    data = os.urandom(3 * intake.CHUNK + 5)
    (staged / "out" / "m.tflite").write_bytes(data)
    taken = _take(staged, tmp_path)
    assert (taken.bytes, taken.sha256) == (len(data), hashlib.sha256(data).hexdigest())
    assert (tmp_path / "taken.tflite").read_bytes() == data


@pytest.mark.parametrize("make, says", [
    (lambda p: p.symlink_to("/etc/passwd"), "not openable as a plain file"),
    (lambda p: p.mkdir(), "a directory"),
    (lambda p: os.link(p.parent.parent.parent / "elsewhere", p), "2 hard links"),
    (lambda p: os.truncate(p.open("wb").name, 64 * 2**30), "over the"),
    (lambda p: os.truncate(p.open("wb").name, 2**30), "sparse"),
])
def test_anything_but_a_plain_file_is_refused_and_nothing_is_left(staged, tmp_path, make, says):
    (tmp_path / "elsewhere").write_bytes(b"a host file")
    make(staged / "out" / "m.tflite")
    with pytest.raises(intake.Refused, match=says):
        _take(staged, tmp_path)
    assert not (tmp_path / "taken.tflite").exists()
    assert (tmp_path / "elsewhere").read_bytes() == b"a host file"


def test_a_link_in_place_of_the_staging_subdirectory_is_not_followed(staged, tmp_path):
    (tmp_path / "host").mkdir()
    (tmp_path / "host" / "m.tflite").write_bytes(b"host data")
    (staged / "out").rmdir()
    (staged / "out").symlink_to(tmp_path / "host")
    with pytest.raises(intake.Refused, match="not openable"):
        _take(staged, tmp_path)


def test_a_fifo_without_a_writer_does_not_block_the_runner(staged, tmp_path):
    os.mkfifo(staged / "out" / "m.tflite")
    outcome = []
    reader = threading.Thread(target=lambda: outcome.append(pytest.raises(intake.Refused, _take, staged, tmp_path)),
                              daemon=True)
    reader.start()
    reader.join(5)
    assert not reader.is_alive(), "the runner blocked opening a FIFO"
    assert "a FIFO" in str(outcome[0].value)
