"""The host benchmark process loads an artifact that a process running model code wrote: it runs in a
sandbox of its own. Seen from outside, by the kernel's own records of the process that loads the
model: another network namespace, none of the user's secret-looking variables in its environment, no
view of the home directory or of the run's files; a garbage artifact fails that benchmark alone, and
a real one is still timed."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from nnlite_tui.core.bench.settings import BenchSettings
from nnlite_tui.core.devices.base import DeviceError
from nnlite_tui.core.devices.local import LocalDevice
from nnlite_tui.core.outcomes import Artifact
from nnlite_tui.simdevice.adb_server import TINY_MODEL
from tests.core.sandbox_helpers import SKIP_REASON, sandbox_here

QUICK = BenchSettings(warmup=1, runs=3, min_seconds=0, max_seconds=30)


@pytest.fixture(scope="module")
def tflite(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("hostbench") / "tiny.tflite"
    subprocess.run([sys.executable, "-c", TINY_MODEL, str(path)], check=True, capture_output=True, timeout=300,
                   env={**os.environ, "LITERT_TORCH_SHOW_PROGRESS": "n"})
    return str(path)


def _pid_of_benchmark(device: LocalDevice) -> int:
    """The process that will load the model: the deepest descendant of the process started (itself
    when nothing wraps it)."""
    import psutil

    proc = psutil.Process(device._spare.proc.pid)
    children = proc.children(recursive=True)
    return children[-1].pid if children else proc.pid


def test_the_benchmark_process_is_sandboxed(tmp_path, tflite, monkeypatch):
    if not sandbox_here():
        pytest.skip(SKIP_REASON)
    secret = tmp_path / "home" / ".secret"
    secret.parent.mkdir()
    secret.write_text("s3cr3t")
    monkeypatch.setenv("HOME", str(secret.parent))
    monkeypatch.setenv("TORCH_HUB_TOKEN", "s3cr3t-token")
    device = LocalDevice(prestart=True, timeout_s=120)
    try:
        device.ready_for_benchmark()
        pid = _pid_of_benchmark(device)
        assert os.readlink(f"/proc/{pid}/ns/net") != os.readlink("/proc/self/ns/net")
        with open(f"/proc/{pid}/environ", "rb") as f:
            assert b"s3cr3t-token" not in f.read()
        root = f"/proc/{pid}/root"
        assert not os.path.exists(root + str(secret)) and not os.path.exists(root + tflite)
        assert device.benchmark(Artifact(tflite), QUICK, "t")["valid"]
    finally:
        device.close()


def test_a_garbage_artifact_fails_its_benchmark_alone(tmp_path, tflite):
    garbage = tmp_path / "crafted.tflite"
    garbage.write_bytes(b"TFL3" + os.urandom(4096))
    device = LocalDevice(prestart=True, timeout_s=120)
    try:
        device.ready_for_benchmark()
        try:
            result = device.benchmark(Artifact(str(garbage)), QUICK, "t")
            assert not result.get("valid"), result
        except DeviceError as err:
            assert err.kind == "crash"
        device.ready_for_benchmark()
        assert device.benchmark(Artifact(tflite), QUICK, "t")["valid"]
    finally:
        device.close()
