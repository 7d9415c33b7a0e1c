"""Recovery level 2 restarts the adb server only when this process started it."""

from __future__ import annotations

from nnlite_tui.core.devices import adb_link
from nnlite_tui.core.events import RecordingReporter, Recovery
from nnlite_tui.simdevice.adb_server import AdbServer, _listener_pid, free_port, process_gone


def test_a_server_we_did_not_start_is_never_restarted(sim_device_factory, make_device, adb_server):
    sim = sim_device_factory()
    device = make_device(sim.serial)
    assert not adb_link.ensure_server()  # the fixture's server: already running, not ours
    rec = RecordingReporter()
    assert device.recover(2, rec) is True
    assert _listener_pid(adb_server.port) == adb_server.pid
    assert "restart-adb-server" not in [e.action for e in rec.of(Recovery)]


def test_a_server_we_started_is_restarted_and_the_device_comes_back(sim_device_factory, make_device, adb_server,
                                                                   monkeypatch):
    port = free_port()
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(port))
    assert adb_link.ensure_server() is True and adb_link.owns_server()
    ours = AdbServer(adb_server.adb, port=port, pid=_listener_pid(port))
    try:
        sim = sim_device_factory(server=ours)
        device = make_device(sim.serial)
        rec = RecordingReporter()
        assert device.recover(2, rec) is True
        assert ("restart-adb-server", sim.serial) in [(e.action, e.target) for e in rec.of(Recovery)]
        assert process_gone(ours.pid, timeout=5)
        new_pid = _listener_pid(port)
        assert new_pid is not None and new_pid != ours.pid
        assert ours.state(sim.serial) == "device"  # the device re-registered with the new server
        ours.pid = new_pid
        sim.stop()
    finally:
        adb_link.stop_owned_server()
        assert process_gone(ours.pid, timeout=10)
