"""Every adbutils call the project uses, through the real adb server, against the simulator."""

from __future__ import annotations

import io
import os
import socket
import time

import adbutils
import pytest

from nnlite_tui.simdevice.adb_server import AdbServer, bundled_adb_path, process_gone


def test_device_listing(sim_device, adb_client):
    infos = {i.serial: i for i in adb_client.list(extended=True)}
    info = infos[sim_device.serial]
    assert info.state == "device"
    assert info.tags["model"] == "sdk_gphone64_arm64" and info.tags["product"] == "sdk_gphone64_arm64"
    assert sim_device.serial in [d.serial for d in adb_client.device_list()]


def test_shell_with_timeout_and_getprop(sim_device, adb_client):
    d = adb_client.device(sim_device.serial)
    assert d.shell("getprop ro.product.cpu.abi", timeout=5) == "arm64-v8a"
    assert d.shell(["echo", "a b", "$HOME"], timeout=5) == "a b $HOME"  # list args are shlex-quoted
    assert d.getprop("ro.build.version.sdk") == "34" and d.prop.model == "sdk_gphone64_arm64"
    assert d.getprop("ro.kernel.qemu") == "1" and d.getprop("ro.build.characteristics") == "emulator"
    with pytest.raises(adbutils.AdbTimeout):
        d.shell("sleep 5", timeout=0.5)


def test_shell2_exit_codes_v1_and_v2(sim_device, adb_client):
    d = adb_client.device(sim_device.serial)
    r = d.shell2("false")
    assert r.returncode == 1 and r.output == ""
    r = d.shell2("ls /nope; echo after")  # v1 interleaves stderr with stdout in order
    assert r.returncode == 0 and r.output == "ls: /nope: No such file or directory\nafter\n"
    r = d.shell2("echo out; echo err >&2; exit 4", v2=True)
    assert (r.returncode, r.stdout, r.stderr) == (4, "out\n", "err\n")
    r = d.shell2("nosuch", v2=True)
    assert r.returncode == 127 and "inaccessible or not found" in r.stderr


@pytest.mark.filterwarnings("ignore:push is deprecated")
def test_sync_push_pull_stat_list(sim_device, adb_client, tmp_path):
    d = adb_client.device(sim_device.serial)
    payload = os.urandom(3 * 1024 * 1024 + 17)  # more than one WRTE and one sync chunk
    assert d.sync.push(io.BytesIO(payload), "/data/local/tmp/nnlite/p.bin", check=True) == len(payload)
    assert sim_device.host_path("/data/local/tmp/nnlite/p.bin").read_bytes() == payload
    info = d.sync.stat("/data/local/tmp/nnlite/p.bin")
    assert info.size == len(payload) and info.mode & 0o100000
    assert d.sync.stat("/data/local/tmp/none").mtime is None
    assert "p.bin" in [f.path for f in d.sync.list("/data/local/tmp/nnlite")]
    assert d.sync.pull("/data/local/tmp/nnlite/p.bin", tmp_path / "p.bin") == len(payload)
    assert (tmp_path / "p.bin").read_bytes() == payload
    with pytest.raises(adbutils.AdbError, match="does not exist"):
        d.sync.read_bytes("/data/local/tmp/none")
    local = tmp_path / "small.txt"
    local.write_text("hello")
    d.push(str(local), "/sdcard/Download/small.txt")  # the deprecated alias of sync.push
    assert d.sync.read_text("/storage/emulated/0/Download/small.txt") == "hello"  # /sdcard is an alias


def test_pull_of_generated_proc_and_sys_files(sim_device, adb_client):
    d = adb_client.device(sim_device.serial)
    meminfo = d.sync.read_text("/proc/meminfo")
    assert meminfo.startswith("MemTotal:") and "MemAvailable:" in meminfo
    assert d.shell("cat /sys/class/thermal/thermal_zone0/type") == "cpu-0-0-usr"
    assert int(d.shell("cat /sys/class/thermal/thermal_zone0/temp")) > 20000
    assert int(d.shell("cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq")) > 0
    assert "CPU implementer" in d.shell("cat /proc/cpuinfo")
    battery = d.battery()
    assert battery.level == 100 and battery.temperature == pytest.approx(25.0, abs=10)


def test_install_list_and_app_info(sim_device, adb_client, test_apk):
    d = adb_client.device(sim_device.serial)
    d.install(str(test_apk), nolaunch=True, silent=True)  # push to /data/local/tmp + pm install + rm
    assert "org.nnlite.bench" in d.list_packages(["-3"])
    info = d.app_info("org.nnlite.bench")
    assert (info.version_code, info.version_name) == (1, "0.1.0")
    assert d.shell("pm path org.nnlite.bench").startswith("package:/data/app/")
    assert d.shell("ls /data/local/tmp") == ""  # adbutils removed the pushed apk


def test_connect_and_disconnect_a_tcp_device(sim_device_factory, adb_client):
    sim = sim_device_factory(register=False, wait=None)
    addr = f"127.0.0.1:{sim.port}"
    assert adb_client.connect(addr, timeout=10) == f"connected to {addr}"
    deadline = time.monotonic() + 10
    while {i.serial: i.state for i in adb_client.list()}.get(addr) != "device":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert adb_client.device(addr).shell("echo ok") == "ok"
    assert "disconnected" in adb_client.disconnect(addr)


def test_server_kill_stops_a_private_server():
    server = AdbServer(bundled_adb_path()).start()
    client = server.client()
    assert client.server_version() >= 39
    assert server.pid is not None
    client.server_kill()
    assert process_gone(server.pid, timeout=10)
    # (not through adbutils: its connect would start a new server via `adb start-server`)
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", server.port), timeout=2).close()


def test_emulator_console_avd_name_and_kill(sim_device_factory, adb_server):
    sim = sim_device_factory(avd_name="pixel_sim")
    # port-1 may be taken (by the adb server or any other socket): then this device has no console
    while sim.console_port is None or sim.console_port == adb_server.port:
        sim = sim_device_factory(avd_name="pixel_sim")
    out = adb_server.run("-s", sim.serial, "emu", "avd", "name")
    assert "pixel_sim" in out.stdout, out
    adb_server.run("-s", sim.serial, "emu", "kill")
    adb_server.wait_state(sim.serial, None, timeout=10)
    sim._thread.join(5)
    assert not sim._thread.is_alive() and sim.stop_reason == "killed via the emulator console"
    with pytest.raises(RuntimeError, match="is not running .killed via the emulator console"):
        sim.drop()


def test_device_comes_back_after_the_adb_server_restarts(sim_device_factory):
    server = AdbServer(bundled_adb_path()).start()
    sim = sim_device_factory(server=server)
    try:
        server.kill()
        server.start()  # same port: the sim notices it lost the server and registers again
        server.wait_state(sim.serial, "device", timeout=15)
        assert server.client().device(sim.serial).shell("echo back") == "back"
    finally:
        server.kill()
