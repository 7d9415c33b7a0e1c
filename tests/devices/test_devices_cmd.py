"""`nnlite devices`: the host, two simulators with their facts, and what to do about AVDs."""

from __future__ import annotations

import json

from click.testing import CliRunner

from nnlite_tui.cli import main


def test_devices_lists_host_and_two_simulators(sim_device_factory, monkeypatch):
    monkeypatch.delenv("ANDROID_HOME", raising=False)
    monkeypatch.delenv("ANDROID_SDK_ROOT", raising=False)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    a = sim_device_factory(profile="emu-arm64")
    b = sim_device_factory(profile="emu-x86_64")
    out = CliRunner().invoke(main, ["devices"])
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    assert lines[0].split() == ["SERIAL", "KIND", "STATE", "MODEL", "ANDROID", "ABI"]
    rows = {line.split()[0]: line.split() for line in lines[1:4]}
    assert rows["host"][:3] == ["host", "host", "device"]
    assert rows[a.serial] == [a.serial, "emulator", "device", "sdk_gphone64_arm64", "14", "(SDK", "34)", "arm64-v8a"]
    assert rows[b.serial] == [b.serial, "emulator", "device", "sdk_gphone64_x86_64", "13", "(SDK", "33)", "x86_64"]
    assert "AVDs: no Android SDK found (set ANDROID_HOME)" in out.stdout
    data = json.loads(CliRunner().invoke(main, ["devices", "--json"]).stdout)
    assert [r["serial"] for r in data["devices"]][0] == "host" and data["avds"] is None
    assert {r["serial"]: r["emulator"] for r in data["devices"][1:]} == {a.serial: True, b.serial: True}


def test_devices_shows_a_booting_device_as_booting(sim_device_factory, fake_sdk):
    sim = sim_device_factory(boot_seconds=30.0, wait="device")
    out = CliRunner().invoke(main, ["devices"])
    row = next(line.split() for line in out.stdout.splitlines() if line.startswith(sim.serial))
    assert row[:3] == [sim.serial, "emulator", "booting"]
    assert "AVDs: Pixel_API_34" in out.stdout
