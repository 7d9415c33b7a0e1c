"""The device shell, run directly (no adb): sh semantics the clients rely on, tools' real wording."""

from __future__ import annotations

import asyncio

import pytest

from nnlite_tui.simdevice.device import SimDevice
from nnlite_tui.simdevice.interp import Shell
from nnlite_tui.simdevice.shparse import ShellSyntaxError, parse


@pytest.fixture
def device(tmp_path):
    dev = SimDevice(root=str(tmp_path / "dev"), profile="emu-x86_64")
    dev.boot.phase = "ready"  # not started: just the filesystem, props and package manager
    return dev


def sh(device, line: str) -> tuple[int, str, list[tuple[int, str]]]:
    """Run a line; return (status, merged output, [(fd, text)] in production order)."""
    events: list[tuple[int, str]] = []
    status = asyncio.run(Shell(device).run(line, lambda fd, data: events.append((fd, data.decode()))))
    return status, "".join(t for _, t in events), events


@pytest.mark.parametrize("line, status, output", [
    ("false; echo $?", 0, "1\n"),
    ("true && echo yes || echo no", 0, "yes\n"),
    ("false && echo yes || echo no", 0, "no\n"),
    ("false || false; echo \"status=$?\"", 0, "status=1\n"),
    ("echo 'a  b' \"c $?\" d\\ e", 0, "a  b c 0 d e\n"),
    ("echo '$HOME' \"$HOME\" ${USER}", 0, "$HOME / shell\n"),
    ("exit 7; echo never", 7, ""),
    ("nosuch arg", 127, "/system/bin/sh: nosuch: inaccessible or not found\n"),
    ("echo hi | grep h | wc -l", 0, "1\n"),
    ("echo one # a comment", 0, "one\n"),
    ("/system/bin/echo abs; toybox echo box", 0, "abs\nbox\n"),
])
def test_sh_semantics(device, line, status, output):
    got_status, got_output, _ = sh(device, line)
    assert (got_status, got_output) == (status, output)


def test_v1_output_keeps_stdout_and_stderr_in_order(device):
    _, _, events = sh(device, "echo a; ls /nope; echo b X4EXIT:$?")
    assert events == [(1, "a\n"), (2, "ls: /nope: No such file or directory\n"), (1, "b X4EXIT:1\n")]


def test_redirections(device):
    assert sh(device, "echo one > /data/local/tmp/f; echo two >> /data/local/tmp/f; cat /data/local/tmp/f")[1] == \
        "one\ntwo\n"
    assert sh(device, "cat < /data/local/tmp/f | head -1")[1] == "one\n"
    assert sh(device, "ls /nope 2>/dev/null; echo $?")[1] == "1\n"
    assert sh(device, "ls /nope > /data/local/tmp/e 2>&1; cat /data/local/tmp/e")[1] == \
        "ls: /nope: No such file or directory\n"
    _, _, events = sh(device, "echo to-err >&2")
    assert events == [(2, "to-err\n")]
    assert sh(device, "rm '/data/local/tmp/f' </dev/null; ls /data/local/tmp/f")[0] == 1
    assert "Read-only file system" in sh(device, "echo x > /system/x")[1]


def test_files_and_globs(device):
    assert sh(device, "mkdir /data/local/tmp/a/b")[0] == 1
    assert sh(device, "mkdir -p /data/local/tmp/a/b && touch /data/local/tmp/a/x.tflite /data/local/tmp/a/y.tflite")[0] == 0
    assert sh(device, "ls /data/local/tmp/a")[1] == "b\nx.tflite\ny.tflite\n"
    assert sh(device, "echo /data/local/tmp/a/*.tflite")[1] == "/data/local/tmp/a/x.tflite /data/local/tmp/a/y.tflite\n"
    assert sh(device, "echo '/data/local/tmp/a/*.tflite'")[1] == "/data/local/tmp/a/*.tflite\n"
    assert sh(device, "rm /data/local/tmp/a/*.tflite; ls /data/local/tmp/a")[1] == "b\n"
    assert sh(device, "rm /data/local/tmp/a")[1] == "rm: /data/local/tmp/a: Is a directory\n"
    assert sh(device, "rm -rf /data/local/tmp/a /data/local/tmp/none; echo $?")[1] == "0\n"
    assert sh(device, "cd /data/local; pwd; ls")[1] == "/data/local\ntmp\n"
    assert sh(device, "ls -l /proc/meminfo")[1].startswith("-rw")
    assert sh(device, "echo /sys/class/thermal/thermal_zone*/type")[1] == \
        "/sys/class/thermal/thermal_zone0/type /sys/class/thermal/thermal_zone1/type\n"
    assert sh(device, "cat /sys/devices/system/cpu/cpu*/cpufreq/cpuinfo_max_freq")[1] == "2200000\n2200000\n"
    assert sh(device, "mkdir -p /data/local/tmp/m && chmod 755 /data/local/tmp/m && ls -l /data/local/tmp")[1] \
        .startswith("drwxr-xr-x")
    assert sh(device, "chmod 7x /data/local/tmp/m")[0] == 1


def test_props_and_hardware_texts(device):
    assert sh(device, "getprop ro.product.cpu.abi")[1] == "x86_64\n"
    assert sh(device, "getprop no.such.prop fallback")[1] == "fallback\n"
    assert sh(device, "setprop debug.nnlite 1 && getprop debug.nnlite")[1] == "1\n"
    assert sh(device, "setprop ro.build.id X")[0] == 1
    assert "[ro.kernel.qemu]: [1]" in sh(device, "getprop")[1]
    cpuinfo = sh(device, "cat /proc/cpuinfo")[1]
    assert "vendor_id\t: GenuineIntel" in cpuinfo and cpuinfo.count("processor\t:") == 2
    assert sh(device, "ls /sys/class/thermal")[1] == "thermal_zone0\nthermal_zone1\n"
    assert sh(device, "uname -m")[1] == "x86_64\n" and sh(device, "nproc")[1] == "2\n"
    assert len(sh(device, "cat /proc/loadavg")[1].split()) == 5
    assert sh(device, "pidof org.nnlite.bench")[0] == 1  # not running
    battery = sh(device, "dumpsys battery")[1]
    assert battery.startswith("Current Battery Service state:\n") and "  level: 100\n" in battery


def test_arm_profile_cpuinfo(tmp_path):
    dev = SimDevice(root=str(tmp_path / "arm"), profile="emu-arm64")
    text = dev.fs.read_bytes("/proc/cpuinfo").decode()
    assert "CPU implementer\t: 0x41" in text and "Features\t: fp asimd" in text and "Hardware\t: ranchu" in text


def test_unsupported_constructs_fail_loudly(device):
    status, output, _ = sh(device, "while true; do sleep 1; done")
    assert status == 2 and "'while' is not supported by the simulated shell" in output
    status, output, _ = sh(device, "echo $(getprop sys.boot_completed)")
    assert status == 2 and "command substitution is not supported" in output
    assert sh(device, "echo '$(x) `' \\$(y)")[1] == "$(x) ` $(y)\n"  # quoted or escaped: plain text


@pytest.mark.parametrize("bad", ["echo 'open", "&& echo x", "echo x &&", "echo >"])
def test_syntax_errors(device, bad):
    with pytest.raises(ShellSyntaxError):
        parse(bad)
    status, output, _ = sh(device, bad)
    assert status == 2 and output.startswith("/system/bin/sh: ")
