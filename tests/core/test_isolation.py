"""Host measurement isolation: conversion workers are really stopped while a host benchmark runs."""

from __future__ import annotations

import time

from nnlite_tui.core.convert.options import ConvertOptions
from nnlite_tui.core.convert.converter import Converter
from nnlite_tui.core.convert.pool import PauseGate
from nnlite_tui.core.bench.isolation import HostIsolation


def _state(pid: int) -> str:
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0]


def _wait_until(condition, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"{what}: not within {seconds} s"
        time.sleep(0.02)


def test_pause_stops_and_continues_the_workers(tmp_path):
    conv = Converter(ConvertOptions(cache_dir=tmp_path / "cache"), n_workers=1)
    try:
        conv.prestart()
        _wait_until(conv.worker_pids, 120, "the conversion worker started")
        (pid,) = conv.worker_pids()
        iso = HostIsolation(conv, threads=1, method="pause")
        assert iso.describe()["method"] == "pause"
        with iso.benchmarking():
            assert conv.gate.paused
            _wait_until(lambda: _state(pid) == "T", 10, "the worker stopped (state T)")
        assert not conv.gate.paused
        _wait_until(lambda: _state(pid) != "T", 10, "the worker continued")
    finally:
        conv.close()


def test_paused_time_is_not_counted_against_a_timeout():
    gate = PauseGate()
    start = gate.total()
    gate.set(True)
    time.sleep(0.3)
    gate.set(False)
    assert 0.25 < gate.total() - start < 1.0
    gate.set(False)  # resuming twice changes nothing
    assert gate.total() - start < 1.0
