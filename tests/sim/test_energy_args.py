"""The energy extras on both sides of the protocol (PROTOCOL.md sections 3 and 9f): what the host sends
(only to a protocol-3 app, only when asked), what it refuses up front, and how the simulated app parses
them, with the app's words."""

from __future__ import annotations

from dataclasses import replace

import pytest

from nnlite_tui.core.bench.settings import BenchSettings
from nnlite_tui.core.devices import adb_energy, adb_extras
from nnlite_tui.core.devices.adb_report import Timeouts
from nnlite_tui.simdevice.bench_args import ArgsError, parse

BASE = {"model_path": "/data/local/tmp/m.tflite", "report_path": "/sdcard/r.json", "run_id": "r1"}


def test_the_host_sends_the_energy_extras_only_when_asked_and_only_to_protocol_3():
    s = BenchSettings(energy=True, energy_seconds=4.0)
    extras = adb_extras.launch_extras("m", "r", "id", s, protocol=3)
    assert extras[-6:] == ["--ez", "energy", "true", "--ef", "energy_seconds", "4.0"]
    assert "energy" not in adb_extras.launch_extras("m", "r", "id", s, protocol=2)
    assert "energy" not in adb_extras.launch_extras("m", "r", "id", BenchSettings(), protocol=3)
    assert adb_extras.settings_errors(replace(s, energy_seconds=0.5)) == ["energy_seconds must be in 1..600, got 0.5"]
    plain = Timeouts(report_base_s=60.0).report_deadline(BenchSettings())
    assert Timeouts(report_base_s=60.0).report_deadline(s) == pytest.approx(plain + 1.0 + 2 * 4.0)


def test_the_simulated_app_parses_the_energy_extras_as_the_app():
    assert parse({**BASE, "energy": True, "energy_seconds": 4.0}).energy_seconds == 4.0
    assert parse({**BASE, "energy": "true"}).energy_seconds == 10.0  # the app's default window
    assert parse({**BASE, "energy": False, "energy_seconds": 4.0}).energy_seconds is None
    with pytest.raises(ArgsError) as err:
        parse({**BASE, "energy": "yes", "energy_seconds": 0.5})
    assert str(err.value) == "energy must be true or false, got 'yes'; energy_seconds must be in 1.0..600.0, got 0.5"
    with pytest.raises(ArgsError, match="unknown extra 'energy'"):
        parse({**BASE, "energy": True}, protocol=2)


def test_an_app_that_predates_energy_is_recognised_by_its_args_report():
    refused = {"error_stage": "args", "error_message": "unknown extra 'energy'; unknown extra 'energy_seconds'"}
    assert adb_energy.refuses_energy_extras(refused)
    assert not adb_energy.refuses_energy_extras({"error_stage": "args", "error_message": "missing model_path"})
