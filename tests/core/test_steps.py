"""The steps alone: a spec and fakes at the boundary in, a typed outcome out; no Pipeline, no store."""

from __future__ import annotations

import threading

from nnlite_tui.core.bench.settings import BenchSettings
from nnlite_tui.core.bench.step import bench_step
from nnlite_tui.core.convert.step import Attempt, convert_step
from nnlite_tui.core.devices.base import DeviceError
from nnlite_tui.core.events import DeviceState, ModelLog, RecordingReporter, StageFinished, StageStarted
from nnlite_tui.core.outcomes import (Benchmarked, BenchJob, Cancelled, ConversionResult, Converted, Failed, Retry,
                                      Skipped, StageError, combine_device_results)
from nnlite_tui.core.spec import ModelSpec

SPEC = ModelSpec(name="m1", kind="lemur", file="m1.py", sha256="0" * 64)


class ScriptedConverter:
    """Answers convert() with a given result dict, as core.convert.Converter does, and logs a line."""

    def __init__(self, result):
        self.result = result
        self.calls = 0

    def convert(self, spec, dest, log_path=None, cancel=None):
        self.calls += 1
        with open(log_path, "a") as f:
            f.write("exporting\n")
        return {"model": spec.name, "cached": False, **self.result}


def _convert(tmp_path, result, attempt=1, cancel=None):
    rec = RecordingReporter()
    outcome = convert_step(SPEC, ScriptedConverter(result), dest=tmp_path / "m1.tflite",
                           log_path=tmp_path / "logs" / "m1.log", cancel=cancel or threading.Event(),
                           emit=rec.emit, attempt=Attempt(attempt, 3, 2.0))
    return outcome, rec


def test_a_conversion_that_works_is_converted_with_its_typed_result(tmp_path):
    outcome, rec = _convert(tmp_path, {"ok": True, "artifact_path": str(tmp_path / "m1.tflite"), "max_abs_diff": 1e-7})
    assert isinstance(outcome, Converted)
    assert outcome.result.ok and outcome.result.artifact_path.endswith("m1.tflite")
    assert outcome.result.details["max_abs_diff"] == 1e-7
    assert [type(e) for e in rec.events if not isinstance(e, ModelLog)] == [StageStarted, StageFinished]
    assert any(isinstance(e, ModelLog) and e.line == "exporting" for e in rec.events)


def test_a_deterministic_failure_fails_at_once_with_one_error_shape(tmp_path):
    outcome, _ = _convert(tmp_path, {"ok": False, "stage": "export", "error_type": "Unsupported",
                                     "error_message": "aten.foo"})
    assert isinstance(outcome, Failed)
    assert outcome.error == StageError("export", "Unsupported", "aten.foo")
    assert outcome.error.to_dict() == {"stage": "export", "type": "Unsupported", "message": "aten.foo"}


def test_a_transient_failure_is_retried_with_back_off_until_the_last_attempt(tmp_path):
    crash = {"ok": False, "stage": "crash", "error_type": "WorkerCrash", "error_message": "signal SIGKILL"}
    outcome, _ = _convert(tmp_path, crash, attempt=2)
    assert isinstance(outcome, Retry) and outcome.after_s == 4.0
    outcome, _ = _convert(tmp_path, crash, attempt=3)
    assert isinstance(outcome, Failed) and outcome.error.stage == "crash"


def test_filtered_models_are_skipped_and_cancelled_ones_cancelled(tmp_path):
    outcome, _ = _convert(tmp_path, {"ok": False, "stage": "filtered", "error_type": "Filtered",
                                     "error_message": "too many parameters"})
    assert isinstance(outcome, Skipped) and outcome.error.type == "Filtered"
    cancel = threading.Event()
    cancel.set()
    outcome, _ = _convert(tmp_path, {"ok": False, "stage": "crash", "error_type": "X", "error_message": "y"},
                          cancel=cancel)
    assert isinstance(outcome, Cancelled)


class ScriptedDevice:
    """A Device whose benchmark answers with a given block or raises a given DeviceError."""

    kind = "phone"

    def __init__(self, answer):
        self.serial = "R58"
        self.answer = answer

    def prepare(self, reporter):
        pass

    def info(self):
        return {"serial": self.serial, "kind": self.kind, "model": "Pixel"}

    def snapshot(self):
        return {"max_temperature_c": 31.0, "memory": {"available_ram_kb": 1000}}

    def benchmark(self, artifact_path, settings, run_id, cancel=None, progress=None):
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer

    def recover(self, level, reporter):
        return True

    def pin_cpus(self, cpus):
        pass

    def ready_for_benchmark(self, cancel=None):
        pass

    def kill_children(self):
        pass

    def close(self):
        pass


JOB = BenchJob(SPEC, ConversionResult(model="m1", ok=True, artifact_path="m1.tflite"))
STATS = {"count": 5, "median_ns": 2_000_000, "p90_ns": 3_000_000, "mean_ns": 2_100_000}


def _bench(answer, attempt=1):
    rec = RecordingReporter()
    outcome = bench_step(JOB, ScriptedDevice(answer), settings=BenchSettings(), run_id="r", cancel=threading.Event(),
                         emit=rec.emit, attempt=Attempt(attempt, 3, 0.0))
    return outcome, rec


def test_a_measurement_is_benchmarked_with_the_device_around_it():
    outcome, rec = _bench({"valid": True, "stats": STATS, "log": "line one\n"})
    assert isinstance(outcome, Benchmarked)
    assert outcome.result.median_ms == 2.0 and outcome.result.error is None
    assert outcome.result.device_info["model"] == "Pixel" and outcome.result.before["max_temperature_c"] == 31.0
    assert "log" not in outcome.result.report_block()
    assert [e.state for e in rec.of(DeviceState)] == ["busy", "idle"]


def test_a_model_the_runtime_rejects_is_a_result_with_a_benchmark_error():
    outcome, _ = _bench({"valid": False, "error_stage": "load", "error_type": "RuntimeError",
                         "error_message": "unsupported op"})
    assert isinstance(outcome, Benchmarked) and not outcome.result.valid
    assert outcome.result.error == StageError("benchmark:load", "RuntimeError", "unsupported op")


def test_device_faults_retry_carrying_the_fault_then_fail_naming_the_device():
    fault = DeviceError("device offline", kind="offline")
    outcome, _ = _bench(fault, attempt=1)
    assert isinstance(outcome, Retry) and outcome.fault is fault and outcome.error.stage == "device:offline"
    outcome, _ = _bench(fault, attempt=3)
    assert isinstance(outcome, Failed) and outcome.fault is fault
    assert outcome.device_info["serial"] == "R58"
    outcome, _ = _bench(DeviceError("cancelled", kind="cancelled"))
    assert isinstance(outcome, Cancelled)


def test_device_results_combine_into_the_model_result():
    done = {"status": "done", "median_ms": 1.5, "error": None}
    failed = {"status": "failed", "error": {"stage": "device:offline", "type": "DeviceError", "message": "gone"}}
    assert combine_device_results(["a", "b"], {"a": done}, "a") is None
    both = combine_device_results(["a", "b"], {"a": done, "b": failed}, "b")
    assert both.status == "failed" and both.median_ms == 1.5 and both.error.stage == "device:offline"
    assert combine_device_results(["*"], {"*": done}, "*").status == "done"
