"""`nnlite sim-device` as a user runs it: a process that registers, serves, and stops on Ctrl-C."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from nnlite_tui.simdevice.adb_server import free_port


def test_sim_device_command(adb_server, test_apk):
    port = free_port()
    serial = f"emulator-{port - 1}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "nnlite_tui", "sim-device", "--port", str(port), "--adb-port", str(adb_server.port),
         "--profile", "emu-x86_64", "--serial-name", "SIMX1", "--boot-seconds", "0.5",
         "--faults", "install_fail=INSTALL_FAILED_INSUFFICIENT_STORAGE", "-v"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        adb_server.wait_state(serial, "device", timeout=30)
        s = ("-s", serial)
        assert adb_server.run(*s, "shell", "getprop ro.serialno").stdout.strip() == "SIMX1"
        assert adb_server.run(*s, "shell", "getprop ro.product.cpu.abi").stdout.strip() == "x86_64"
        deadline = time.monotonic() + 10
        while adb_server.run(*s, "shell", "pm path android").returncode != 0:  # package manager up
            assert time.monotonic() < deadline
            time.sleep(0.1)
        out = adb_server.run(*s, "install", str(test_apk))
        assert out.returncode == 1 and "INSTALL_FAILED_INSUFFICIENT_STORAGE" in out.stderr + out.stdout
        proc.send_signal(signal.SIGTERM)  # what a supervisor sends; Ctrl-C (SIGINT) takes the same path
        _, err = proc.communicate(timeout=15)
        assert proc.returncode == 0
        assert f"listening on 127.0.0.1:{port}" in err and serial in err and "sim-device stopped" in err
        root = re.search(r"\(files in (\S+)\)", err).group(1)
        assert not Path(root).exists()  # the sandbox went with it
        adb_server.wait_state(serial, None, timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_bad_fault_spec_is_a_usage_error():
    out = subprocess.run([sys.executable, "-m", "nnlite_tui", "sim-device", "--faults", "explode=1"],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 2 and "unknown fault 'explode'" in out.stderr

