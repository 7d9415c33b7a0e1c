"""android-app/protocol/report.schema.json holds for reports from both sides of the protocol:
the Kotlin core (the app's own report builder) and Python's bench.benchmark_result (what the host
and the device simulator produce), and refuses reports that break the contract."""

from __future__ import annotations

import copy
import platform
import time

import pytest

from nnlite_tui.core.bench import BenchSettings, benchmark_result

APP_KEYS = {"protocol_version", "app_version", "simulated", "started_at_ms", "finished_at_ms", "fallback_reason", "device"}
MEASURED = {"init_ns", "first_inference_ns", "stats", "samples_ns", "timed_seconds", "input_shapes", "input_dtypes",
            "output_shapes"}


def with_app_keys(result: dict, started_ms: int) -> dict:
    """Python's result block plus the keys the app adds, as the device simulator writes them."""
    uname = platform.uname()
    return {**result, "protocol_version": 1, "app_version": "0.1.0", "simulated": True,
            "started_at_ms": started_ms, "finished_at_ms": int(time.time() * 1000), "fallback_reason": None,
            "device": {"manufacturer": "nnlite", "model": "host", "brand": "nnlite", "device": uname.node,
                       "product": "host", "board": uname.machine, "hardware": uname.machine,
                       "soc_manufacturer": None, "soc_model": None, "abis": [uname.machine], "sdk_int": 35,
                       "release": uname.release, "build_id": uname.version, "fingerprint": uname.version}}


def errors(validator, report) -> list[str]:
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(report)]


@pytest.fixture(scope="module")
def python_valid_report(tiny_tflite) -> dict:
    started = int(time.time() * 1000)
    result = benchmark_result(str(tiny_tflite), BenchSettings(warmup=1, runs=5, min_seconds=0.0), "py-run-1")
    assert result["valid"], result
    return with_app_keys(result, started)


def test_python_report_on_a_real_tflite_validates(validator, python_valid_report):
    assert errors(validator, python_valid_report) == []
    assert python_valid_report["input_shapes"] == [[1, 3, 16, 16]]
    assert python_valid_report["input_dtypes"] == ["float32"]


def test_python_failure_report_validates(validator, tmp_path):
    result = benchmark_result(str(tmp_path / "absent.tflite"), BenchSettings(), "py-run-2")
    report = with_app_keys(result, int(time.time() * 1000))
    assert errors(validator, report) == []
    assert report["error_stage"] == "load" and not MEASURED & report.keys()


def test_every_kotlin_report_validates(validator, kotlin_reports):
    for name, report in kotlin_reports.items():
        assert errors(validator, report) == [], name
    stages = {r["error_stage"] for r in kotlin_reports.values()}
    assert {None, "args", "load", "invoke"} <= stages


def test_kotlin_and_python_reports_have_the_same_keys(kotlin_reports, python_valid_report):
    kotlin_valid = kotlin_reports["valid"]
    assert set(kotlin_valid) == set(python_valid_report)
    assert list(kotlin_valid["stats"]) == list(python_valid_report["stats"])
    python_block = set(python_valid_report) - APP_KEYS
    assert set(kotlin_valid) - APP_KEYS == python_block


def test_kotlin_fallback_reports_say_which_backend_ran(kotlin_reports):
    gpu = kotlin_reports["gpu-fallback"]
    assert (gpu["backend_requested"], gpu["backend_used"]) == ("gpu", "xnnpack")
    assert gpu["fallback_reason"].startswith("gpu -> xnnpack: load failed: ")
    assert kotlin_reports["valid"]["fallback_reason"] is None
    nnapi = kotlin_reports["nnapi-runtime-fallback"]
    assert (nnapi["backend_used"], nnapi["valid"]) == ("cpu", True)


def test_kotlin_args_reports_echo_what_was_sent(kotlin_reports):
    bad = kotlin_reports["args-error-bad-values"]
    assert (bad["valid"], bad["error_stage"], bad["runs"], bad["backend_requested"]) == (False, "args", None, "tpu")
    assert "runs must be an integer, got 'abc'" in bad["error_message"]
    missing = kotlin_reports["args-error-missing-model"]
    assert missing["model_path"] is None and "missing model_path" in missing["error_message"]


BREAKAGES = {
    "valid without stats": lambda r: r.pop("stats"),
    "valid with an error message": lambda r: r.update(error_message="boom"),
    "unknown backend used": lambda r: r.update(backend_used="tpu"),
    "stray top-level key": lambda r: r.update(notes="x"),
    "device without soc_model": lambda r: r["device"].pop("soc_model"),
    "float sample": lambda r: r["samples_ns"].__setitem__(0, 1.5),
    "stats key missing": lambda r: r["stats"].pop("p99_ns"),
    "wrong protocol version": lambda r: r.update(protocol_version=2),
    "invalid but measured": lambda r: r.update(valid=False, error_stage="invoke", error_type="E", error_message="m"),
    "invalid with an unknown stage": lambda r: (r.update(valid=False, error_stage="arguments", error_type="E",
                                                         error_message="m"), [r.pop(k) for k in MEASURED]),
}


@pytest.mark.parametrize("breakage", list(BREAKAGES))
def test_schema_refuses_a_broken_report(validator, kotlin_reports, breakage):
    report = copy.deepcopy(kotlin_reports["valid"])
    BREAKAGES[breakage](report)
    assert errors(validator, report), f"schema accepted: {breakage}"
