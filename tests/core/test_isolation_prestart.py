"""The host's benchmark process is started ahead of its model: it has imported LiteRT before the
isolation pause begins, each model still gets its own fresh process, and a crash of that process is
reported as a crash and leaves the next model a working process."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from nnlite_tui.core.bench.settings import BenchSettings
from nnlite_tui.core.bench.step import bench_step
from nnlite_tui.core.convert.step import Attempt
from nnlite_tui.core.devices.base import DeviceError
from nnlite_tui.core.devices.local import LocalDevice
from nnlite_tui.core.events import RecordingReporter, StageFinished
from nnlite_tui.core.outcomes import Benchmarked, BenchJob, ConversionResult
from nnlite_tui.core.spec import ModelSpec
from nnlite_tui.simdevice.adb_server import TINY_MODEL
from nnlite_tui.core.outcomes import Artifact

QUICK = BenchSettings(warmup=1, runs=5, min_seconds=0, warmup_seconds=0)


@pytest.fixture(scope="module")
def tflite(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("prestart") / "tiny.tflite"
    subprocess.run([sys.executable, "-c", TINY_MODEL, str(path)], check=True, capture_output=True, timeout=300,
                   env={**os.environ, "LITERT_TORCH_SHOW_PROGRESS": "n"})
    return str(path)


@pytest.fixture
def device():
    dev = LocalDevice(prestart=True, timeout_s=120)
    yield dev
    dev.close()


def _maps(pid: int) -> str:
    with open(f"/proc/{pid}/maps") as f:
        return f.read()


def _wait_until(condition, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"{what}: not within {seconds} s"
        time.sleep(0.02)


def test_each_model_gets_a_fresh_process_that_imported_litert_ahead(device, tflite):
    device.prepare(RecordingReporter())
    device.ready_for_benchmark()
    first = device._spare.proc
    assert first.poll() is None  # started and waiting for its model
    assert "ai_edge_litert" in _maps(device._spare.benchmark_pid())  # the runtime's library is loaded before the model is due
    assert device.benchmark(Artifact(tflite), QUICK, "t")["valid"]
    assert first.wait(10) == 0  # it measured one model and exited
    device.ready_for_benchmark()
    second = device._spare.proc
    assert second.pid != first.pid and second.poll() is None
    result = device.benchmark(Artifact(tflite), QUICK, "t")
    assert result["valid"] and second.wait(10) == 0


def test_pinning_and_huge_pages_reach_the_prestarted_process(tflite):
    cpus = [sorted(os.sched_getaffinity(0))[-1]]
    dev = LocalDevice(prestart=True, cpus=cpus, timeout_s=120)
    try:
        dev.ready_for_benchmark()
        result = dev.benchmark(Artifact(tflite), QUICK, "t")
        assert result["cpu_affinity"] == cpus
        assert "glibc.malloc.hugetlb=1" in (result["huge_pages"]["glibc_tunables"] or "")
        dev.pin_cpus(None)  # the spare pinned to the old cores cannot serve: a new one replaces it
        dev.ready_for_benchmark()
        assert dev.benchmark(Artifact(tflite), QUICK, "t")["cpu_affinity"] == sorted(os.sched_getaffinity(0))
    finally:
        dev.close()


def test_a_crash_while_timing_is_reported_and_the_next_model_still_runs(device, tflite):
    errors: list[DeviceError] = []

    def run() -> None:
        try:
            device.benchmark(Artifact(tflite), BenchSettings(warmup=1, runs=5, min_seconds=60, max_seconds=60), "t")
        except DeviceError as err:
            errors.append(err)

    device.ready_for_benchmark()
    worker = threading.Thread(target=run)
    worker.start()
    _wait_until(lambda: device._proc is not None and ".tflite" in _maps(device._proc.benchmark_pid()), 60,
                "the benchmark process loaded the model")  # the artifact, or its copy in a sandbox's exchange
    os.kill(device._proc.benchmark_pid(), signal.SIGSEGV)  # what a crashing interpreter does to its process
    worker.join(30)
    assert not worker.is_alive()
    assert errors and errors[0].kind == "crash" and "SIGSEGV" in str(errors[0])
    assert device.benchmark(Artifact(tflite), QUICK, "t")["valid"]


def test_the_isolation_starts_after_the_process_is_ready(device, tflite):
    seen: list[bool] = []

    @contextlib.contextmanager
    def isolate():
        spare = device._spare
        seen.append(spare is not None and spare.ready.is_set() and "ai_edge_litert" in _maps(spare.benchmark_pid()))
        yield

    spec = ModelSpec(name="tiny", kind="lemur", file=None, sha256="0")
    job = BenchJob(spec=spec, conversion=ConversionResult(model="tiny", ok=True, artifact_path=tflite))
    reporter = RecordingReporter()
    outcome = bench_step(job, device, settings=QUICK, run_id="t", cancel=threading.Event(), emit=reporter.emit,
                         attempt=Attempt(1, 1, 0.0), isolate=isolate)
    assert isinstance(outcome, Benchmarked) and outcome.result.valid
    assert seen == [True]
    finished = [e for e in reporter.events if isinstance(e, StageFinished) and e.stage == "benchmark"]
    assert finished[0].isolated_s is not None and 0 < finished[0].isolated_s < finished[0].seconds


def test_a_waiting_process_ends_when_its_parent_goes_away():
    from nnlite_tui.core.devices.host_process import BenchProcess
    from nnlite_tui.core.devices.local import bench_env

    spare = BenchProcess(None, bench_env())
    spare.wait_ready(time.monotonic() + 120, None)
    spare.proc.stdin.close()  # what the parent's death does to the pipe
    assert spare.proc.wait(30) == 0
