"""The real adb command line (the wheel's adb 36, and Debian's adb 29 when installed) against the sim."""

from __future__ import annotations

import hashlib
import os
import shutil

import pytest

from nnlite_tui.simdevice.adb_server import AdbServer

DEBIAN_ADB = "/usr/bin/adb"


@pytest.fixture(scope="module", params=["wheel", "debian"])
def cli_server(request, adb_server):
    """The session server for the wheel's adb; a private server of Debian's adb for the other run."""
    if request.param == "wheel":
        yield adb_server
        return
    if not (os.path.exists(DEBIAN_ADB) and shutil.which("adb") == DEBIAN_ADB):
        pytest.skip("Debian's adb is not installed (apt-get install adb); the wheel's adb is tested")
    server = AdbServer(DEBIAN_ADB).start()
    try:
        yield server
    finally:
        server.kill()


@pytest.fixture
def sim(sim_device_factory, cli_server):
    return sim_device_factory(server=cli_server)


def test_devices_lists_the_emulator(sim, cli_server):
    out = cli_server.run("devices", "-l").stdout
    line = next(line for line in out.splitlines() if line.startswith(sim.serial))
    assert sim.serial == f"emulator-{sim.port - 1}"
    assert " device " in line and "model:sdk_gphone64_arm64" in line and "device:emu64a" in line


def test_shell_exit_codes_and_boot_completed(sim, cli_server):
    s = ("-s", sim.serial)
    assert cli_server.run(*s, "shell", "getprop", "sys.boot_completed").stdout.strip() == "1"
    assert cli_server.run(*s, "shell", "false; echo $?").stdout.strip() == "1"
    missing = cli_server.run(*s, "shell", "nosuch")
    assert missing.returncode == 127 and "nosuch: inaccessible or not found" in missing.stderr
    mixed = cli_server.run(*s, "shell", "echo out; echo err >&2; exit 3")
    assert (mixed.returncode, mixed.stdout, mixed.stderr) == (3, "out\n", "err\n")


def test_push_pull_20mb_round_trip(sim, cli_server, tmp_path):
    src, back = tmp_path / "big.bin", tmp_path / "back.bin"
    src.write_bytes(os.urandom(20 * 1024 * 1024))
    s = ("-s", sim.serial)
    assert cli_server.run(*s, "push", str(src), "/data/local/tmp/big.bin").returncode == 0
    assert cli_server.run(*s, "pull", "/data/local/tmp/big.bin", str(back)).returncode == 0
    assert hashlib.sha256(back.read_bytes()).digest() == hashlib.sha256(src.read_bytes()).digest()
    assert cli_server.run(*s, "shell", "sha256sum /data/local/tmp/big.bin").stdout.split()[0] == \
        hashlib.sha256(src.read_bytes()).hexdigest()


def test_install_streamed_then_listed(sim, cli_server, test_apk):
    s = ("-s", sim.serial)
    result = cli_server.run(*s, "install", str(test_apk))
    assert result.returncode == 0 and "Success" in result.stdout
    assert any(svc.startswith("exec:cmd package 'install' -S") for svc in sim.services_seen)
    assert "package:org.nnlite.bench" in cli_server.run(*s, "shell", "pm", "list", "packages").stdout.splitlines()


def test_install_by_push_when_device_lacks_cmd(sim_device_factory, cli_server, test_apk):
    sim = sim_device_factory(server=cli_server, features=())
    result = cli_server.run("-s", sim.serial, "install", str(test_apk))
    assert result.returncode == 0 and "Success" in result.stdout
    assert any(svc.startswith("shell:pm 'install'") for svc in sim.services_seen)
    assert sim.packages["org.nnlite.bench"].version_name == "0.1.0"
    # without shell_v2 the CLI uses shell: v1, which cannot carry the exit status
    assert cli_server.run("-s", sim.serial, "shell", "exit 3").returncode == 0
