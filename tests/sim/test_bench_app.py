"""The simulated benchmark app: launch protocol, real LiteRT benchmark, atomic protocol report."""

from __future__ import annotations

import json
import os
import signal
import importlib.metadata
import time
from pathlib import Path

import jsonschema
import pytest

from nnlite_tui.simdevice.app import COMPONENT, REPORTS_DIR

MODEL = "/data/local/tmp/nnlite/tiny.tflite"
FAST = ("--ei", "warmup", "2", "--ei", "runs", "10", "--ef", "min_seconds", "0.05", "--ef", "warmup_seconds", "0")
RESULT_KEYS = {"valid", "error_stage", "error_type", "error_message", "run_id", "model_path", "backend_requested",
               "backend_used", "threads", "warmup", "runs", "min_seconds", "seed", "init_ns",
               "first_inference_ns", "stats", "samples_ns", "timed_seconds", "input_shapes", "input_dtypes",
               "output_shapes", "warmup_seconds", "require_full_delegation", "timing", "native_stats",
               "native_samples_ns", "warmup_runs", "warmup_mean_ns", "delegation", "memory", "conditions"}
DEVICE_KEYS = {"manufacturer", "model", "brand", "device", "product", "board", "hardware", "soc_manufacturer",
               "soc_model", "abis", "sdk_int", "release", "build_id", "fingerprint"}


SCHEMA = Path(__file__).resolve().parents[2] / "android-app" / "protocol" / "report.schema.json"


@pytest.fixture(scope="module")
def validate():
    """The protocol's JSON Schema: every report the simulated app writes must pass it."""
    validator = jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text()))
    return validator.validate


@pytest.fixture
def bench(sim_device_factory, adb_client, test_apk, tiny_tflite):
    sim = sim_device_factory()
    d = adb_client.device(sim.serial)
    d.install(str(test_apk), nolaunch=True, silent=True)
    d.sync.push(tiny_tflite, MODEL)
    return sim, d


def start(d, report: str, run_id: str, *extras: str, model: str = MODEL) -> str:
    return d.shell(["am", "start", "-S", "-W", "-n", COMPONENT, "--es", "model_path", model,
                    "--es", "report_path", report, "--es", "run_id", run_id, *extras], timeout=30)


def wait_report(d, report: str, timeout: float = 30) -> dict:
    """Poll like the host does; every read must be whole JSON (the app renames a finished temp file)."""
    deadline = time.monotonic() + timeout
    while d.sync.stat(report).mtime is None:
        assert time.monotonic() < deadline, f"no report at {report}"
        time.sleep(0.05)
    return json.loads(d.sync.read_text(report))


def test_not_installed_prints_the_android_error(sim_device, adb_client):
    d = adb_client.device(sim_device.serial)
    r = d.shell2(["am", "start", "-W", "-n", COMPONENT, "--es", "run_id", "x"], v2=True)
    assert r.returncode == 0  # like ActivityManagerShellCommand: the text says it failed
    assert "Starting: Intent { cmp=org.nnlite.bench/.BenchActivity (has extras) }" in r.stdout
    assert "Error: Activity class {org.nnlite.bench/org.nnlite.bench.BenchActivity} does not exist." in r.stderr


def test_benchmark_report_follows_the_protocol(bench, validate):
    sim, d = bench
    report = f"{REPORTS_DIR}/run-1.json"
    out = start(d, report, "run-1", *FAST, "--ei", "threads", "2", "--ei", "seed", "7")
    assert "Status: ok" in out and "Activity: org.nnlite.bench/.BenchActivity" in out
    r = wait_report(d, report)
    validate(r)
    assert RESULT_KEYS <= set(r)
    assert r["valid"] is True and r["error_stage"] is None
    assert (r["run_id"], r["model_path"], r["threads"], r["warmup"], r["runs"], r["seed"]) == \
        ("run-1", MODEL, 2, 2, 10, 7)
    assert r["backend_requested"] == r["backend_used"] == "xnnpack"
    assert r["stats"]["count"] == len(r["samples_ns"]) >= 10 and r["stats"]["min_ns"] > 0
    assert r["input_shapes"] == [[1, 3, 16, 16]] and r["output_shapes"] == [[1, 2]]
    assert (r["protocol_version"], r["app_version"], r["simulated"]) == (3, "0.3.0", True)
    # Protocol 3: what ran, and what this (simulated) app build can run, with the host's library versions.
    assert (r["runtime"], r["runtime_version"]) == ("litert", importlib.metadata.version("ai-edge-litert"))
    assert r["capabilities"]["runtimes"] == {"litert": importlib.metadata.version("ai-edge-litert"),
                                             "executorch": importlib.metadata.version("executorch")}
    assert {"runtime", "input_shapes", "input_dtypes"} <= set(r["capabilities"]["extras"])
    assert r["started_at_ms"] <= r["finished_at_ms"] <= time.time() * 1000
    assert set(r["device"]) == DEVICE_KEYS
    assert r["device"]["model"] == d.getprop("ro.product.model")
    assert r["device"]["abis"] == ["arm64-v8a"] and r["device"]["sdk_int"] == 34
    assert d.sync.stat(report + ".tmp").mtime is None  # renamed, not left behind
    log = d.shell("logcat -d -s NNLiteBench")
    assert "I NNLiteBench: START run_id=run-1 model=/data/local/tmp/nnlite/tiny.tflite runtime=litert backend=xnnpack " \
           "threads=2 warmup=2 runs=10" in log
    assert f"I NNLiteBench: RESULT run_id=run-1 valid=true backend_used=xnnpack report={report}" in log


@pytest.mark.parametrize("backend", ["gpu", "nnapi"])
def test_delegates_fall_back_to_xnnpack_and_say_so(bench, validate, backend):
    _, d = bench
    report = f"{REPORTS_DIR}/{backend}.json"
    start(d, report, backend, *FAST, "--es", "backend", backend)
    r = wait_report(d, report)
    validate(r)
    assert r["valid"] and r["backend_requested"] == backend and r["backend_used"] == "xnnpack"
    assert r["fallback_reason"].startswith(f"{backend} -> xnnpack: load failed: "
                                           "org.nnlite.bench.DelegateUnavailableException: ")


def test_missing_model_is_an_invalid_report_with_the_device_path(bench, validate):
    sim, d = bench
    report = "/data/data/org.nnlite.bench/files/missing.json"  # the app's private dir works too
    start(d, report, "m", *FAST, model="/data/local/tmp/nnlite/nope.tflite")
    r = wait_report(d, report)
    validate(r)
    assert r["valid"] is False and r["error_stage"] == "load" and "init_ns" not in r
    assert "/data/local/tmp/nnlite/nope.tflite" in r["error_message"]
    assert str(sim.fs.root) not in json.dumps(r)  # no host path leaks into a report


def test_the_app_cannot_write_outside_its_own_directories(bench):
    _, d = bench
    report = "/data/local/tmp/nnlite/r.json"  # shell's directory: an app gets EACCES there
    start(d, report, "p", *FAST)
    deadline = time.monotonic() + 10
    while "REPORT_WRITE_FAILED" not in (log := d.shell("logcat -d -s NNLiteBench")):
        assert time.monotonic() < deadline
        time.sleep(0.1)
    assert f"REPORT_WRITE_FAILED report={report} type=java.io.FileNotFoundException " \
           f"message={report}: open failed: EACCES (Permission denied)" in log
    assert d.sync.stat(report).mtime is None


def test_bad_extras_are_an_args_report_listing_every_error(bench, validate):
    _, d = bench
    report = f"{REPORTS_DIR}/bad.json"
    start(d, report, "b", "--ei", "runs", "0", "--es", "threads", "two", "--ei", "warmups", "3")
    r = wait_report(d, report)
    validate(r)
    assert (r["valid"], r["error_stage"], r["error_type"]) == (False, "args", "org.nnlite.bench.core.ArgsException")
    assert r["error_message"] == "threads must be an integer, got 'two'; unknown extra 'warmups'; runs must be >= 1, got 0"
    assert (r["run_id"], r["runs"], r["threads"], r["backend_used"]) == ("b", 0, None, None)


def test_numbers_as_strings_and_longs_are_accepted(bench, validate):
    _, d = bench
    report = f"{REPORTS_DIR}/types.json"
    start(d, report, "t", "--es", "runs", "7", "--el", "seed", "3", "--ef", "min_seconds", "0.1", "--ef", "warmup", "1")
    r = wait_report(d, report)
    validate(r)
    assert r["valid"] and (r["runs"], r["seed"], r["min_seconds"], r["warmup"]) == (7, 3, 0.1, 1)


def test_no_report_path_means_no_report_and_a_log_line(bench):
    _, d = bench
    d.shell(["am", "start", "-S", "-W", "-n", COMPONENT, "--es", "model_path", MODEL, "--es", "run_id", "n"])
    deadline = time.monotonic() + 10
    while "no report written: report_path missing" not in (log := d.shell("logcat -d -s NNLiteBench")):
        assert time.monotonic() < deadline
        time.sleep(0.1)
    assert "E NNLiteBench: ERROR stage=args type=org.nnlite.bench.core.ArgsException message=missing report_path" in log


def test_force_stop_kills_a_running_benchmark(bench):
    sim, d = bench
    report = f"{REPORTS_DIR}/long.json"
    start(d, report, "long", "--ef", "min_seconds", "30", "--ef", "max_seconds", "30")
    deadline = time.monotonic() + 10
    while sim.app.proc is None or sim.app.proc.returncode is not None:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    pid = sim.app.proc.pid
    assert d.shell("am force-stop org.nnlite.bench; echo $?") == "0"
    deadline = time.monotonic() + 5
    while _alive(pid):
        assert time.monotonic() < deadline, "the benchmark process survived force-stop"
        time.sleep(0.05)
    assert d.sync.stat(report).mtime is None  # the process that writes reports is gone: none can come


def test_a_crashing_interpreter_process_does_not_kill_the_device(bench):
    sim, d = bench
    report = f"{REPORTS_DIR}/segv.json"
    start(d, report, "segv", "--ef", "min_seconds", "30", "--ef", "max_seconds", "30")
    deadline = time.monotonic() + 10
    while sim.app.proc is None or sim.app.proc.returncode is not None:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    os.kill(sim.app.proc.pid, signal.SIGSEGV)
    deadline = time.monotonic() + 10
    while "Fatal signal 11" not in d.shell("logcat -d"):
        assert time.monotonic() < deadline
        time.sleep(0.1)
    assert d.sync.stat(report).mtime is None
    assert d.shell("echo still serving") == "still serving"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as fh:  # a zombie is dead for our purpose
            return fh.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:  # reaped between the two checks
        return False


def test_an_unexpected_error_still_ends_in_an_internal_report(validate):
    from nnlite_tui.simdevice.app import device_block
    from nnlite_tui.simdevice.bench_args import parse
    from nnlite_tui.simdevice.bench_worker import internal_report
    from nnlite_tui.simdevice.profiles import get_profile

    job = {"app_version": "0.2.0", "started_at_ms": 1, "device": device_block(get_profile("emu-x86_64").props)}
    req = parse({"model_path": MODEL, "report_path": f"{REPORTS_DIR}/i.json", "run_id": "i"})
    r = internal_report(job, req, MemoryError("no memory left\nsecond line"))
    validate(r)
    assert (r["error_stage"], r["error_type"], r["error_message"]) == ("internal", "builtins.MemoryError",
                                                                      "no memory left")
