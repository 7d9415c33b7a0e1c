"""Recovery escalation: cool down, reconnect, restart, and re-exec only when every device fails."""

from __future__ import annotations

import os

import pytest

from nnlite_tui.core.run.config import RunConfig
from nnlite_tui.core.run.control import Control
from nnlite_tui.core.convert.cache_files import place_file as _place
from nnlite_tui.core.devices.base import DeviceError
from nnlite_tui.core.events import RecordingReporter, Recovery
from nnlite_tui.core.run.recovery import RecoveryPolicy, ReexecRequested


class FlakyDevice:
    kind = "emulator"

    def __init__(self, serial):
        self.serial = serial
        self.recovers = []

    def recover(self, level, reporter):
        self.recovers.append(level)
        return True


def policy(tmp_path, serials, allow_reexec=True):
    rec = RecordingReporter()
    devices = {s: FlakyDevice(s) for s in serials}
    cfg = RunConfig(sources=[], out=tmp_path, cooldown_s=0.01, allow_reexec=allow_reexec)
    return RecoveryPolicy(cfg, rec, Control().stop_now, list(devices)), devices, rec


def test_levels_climb_and_a_success_resets_them(tmp_path):
    pol, devs, rec = policy(tmp_path, ["a"])
    err = DeviceError("offline", kind="offline")
    pol.device_fault(devs["a"], err)
    pol.device_fault(devs["a"], err)
    pol.device_fault(devs["a"], err)
    assert [e.action for e in rec.of(Recovery)][-2:] == ["reconnect", "restart"]
    assert devs["a"].recovers == [1, 2]
    assert any(e.action == "cool-down" for e in rec.of(Recovery))
    pol.device_ok(devs["a"])
    pol.device_fault(devs["a"], err)
    assert rec.of(Recovery)[-1].action == "cool-down"


def test_reexec_only_when_every_device_is_failing(tmp_path):
    pol, devs, rec = policy(tmp_path, ["a", "b"])
    err = DeviceError("hung", kind="timeout")
    for _ in range(5):
        pol.device_fault(devs["a"], err)  # b is healthy: a stays at restart
    assert not pol.reexec_requested
    for _ in range(3):
        pol.device_fault(devs["b"], err)
    with pytest.raises(ReexecRequested):
        pol.device_fault(devs["b"], err)
    assert pol.reexec_requested


def test_no_reexec_without_permission(tmp_path):
    pol, devs, rec = policy(tmp_path, ["a"], allow_reexec=False)
    for _ in range(6):
        pol.device_fault(devs["a"], DeviceError("x"))
    assert not pol.reexec_requested


def test_place_ignores_a_stale_temporary_link(tmp_path):
    src = tmp_path / "cache.tflite"
    src.write_bytes(b"model")
    dest = tmp_path / "out" / "m.tflite"
    dest.parent.mkdir()
    import threading

    stale = dest.with_name(f"{dest.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    os.link(src, stale)
    _place(src, dest)
    _place(src, dest)
    assert dest.read_bytes() == b"model"
