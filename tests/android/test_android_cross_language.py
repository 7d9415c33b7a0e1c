"""The app's Kotlin core and nnlite_tui.core agree: same statistics, same benchmark loop."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nnlite_tui.core.bench import protocol
from nnlite_tui.core.runtimes.litert import interpreter as litert_interpreter
from nnlite_tui.core.bench.settings import BenchSettings
from nnlite_tui.core.bench.protocol import run_benchmark
from nnlite_tui.core.bench.stats import STAT_KEYS, summarize

SAMPLES_PATH = Path(__file__).resolve().parents[2] / "android-app" / "protocol" / "fixtures" / "sample-timings.json"


def test_kotlin_statistics_equal_python_on_the_same_samples(core_out):
    sets = json.loads(SAMPLES_PATH.read_text())["sets"]
    kotlin = json.loads((core_out / "stats.json").read_text())
    assert list(kotlin) == list(sets)
    for name, samples in sets.items():
        python = summarize(samples)
        assert list(kotlin[name]) == list(STAT_KEYS), name
        for key in STAT_KEYS:
            assert kotlin[name][key] == pytest.approx(python[key], rel=1e-9, abs=0), (name, key)
        # Both sum exactly (fsum) and interpolate with the same operations, so they agree bitwise.
        assert kotlin[name] == python, name


def test_kotlin_reports_carry_statistics_of_their_own_samples(kotlin_reports):
    valid = {name: r for name, r in kotlin_reports.items() if r["valid"]}
    assert len(valid) >= 3
    for name, report in valid.items():
        assert report["stats"] == summarize(report["samples_ns"]), name
        if report["native_samples_ns"] is not None:
            assert report["native_stats"] == summarize(report["native_samples_ns"]), name
        assert report["timed_seconds"] == pytest.approx(sum(report["samples_ns"]) / 1e9, rel=1e-12), name


class _ScriptedInterpreter:
    """Stands in for LiteRT so the Python loop can replay the Kotlin fixture's invoke times."""

    def __init__(self, clock: list[int], durations: list[int]):
        self.clock, self.durations = clock, list(durations)

    def allocate_tensors(self):
        pass

    def get_input_details(self):
        import numpy as np
        return [{"index": 0, "shape": [1, 4], "dtype": np.float32}]

    def get_output_details(self):
        return [{"index": 1, "shape": [1, 2]}]

    def set_tensor(self, index, value):
        pass

    def invoke(self):
        self.clock[0] += self.durations.pop(0)


def test_python_loop_replays_the_kotlin_loop_sample_for_sample(core_out, monkeypatch, tmp_path):
    model = tmp_path / "m.tflite"
    model.write_bytes(b"not read: the interpreter is scripted")
    loops = json.loads((core_out / "loops.json").read_text())
    assert len(loops) >= 5
    for name, case in loops.items():
        clock = [1_000_000]
        interp = _ScriptedInterpreter(clock, case["invoke_ns"])
        monkeypatch.setattr(litert_interpreter, "make_interpreter", lambda path, settings: interp)
        monkeypatch.setattr(protocol.time, "perf_counter_ns", lambda: clock[0])
        result = run_benchmark(str(model), BenchSettings(**case["settings"]))
        assert result["first_inference_ns"] == case["first_inference_ns"], name
        assert result["samples_ns"] == case["samples_ns"], name
        assert result["timed_seconds"] == case["timed_seconds"], name
        assert result["warmup_runs"] == case["warmup_runs"], name
        assert result["warmup_mean_ns"] == case["warmup_mean_ns"], name


class _TensorInfo:
    def __init__(self, sizes):
        self._sizes = sizes

    def sizes(self):
        return self._sizes

    def dtype(self):
        return 6  # ExecuTorch's ScalarType FLOAT


class _Meta:
    def num_inputs(self):
        return 1

    def num_outputs(self):
        return 1

    def input_tensor_meta(self, i):
        return _TensorInfo([1, 4])

    def output_tensor_meta(self, i):
        return _TensorInfo([1, 2])


class _ScriptedMethod:
    """Stands in for ExecuTorch's Method: execute takes the fixture's times, and copying the inputs in costs
    a millisecond of its own, which a timed sample must never contain."""

    SET_INPUTS_NS = 1_000_000

    def __init__(self, clock: list[int], durations: list[int]):
        self.clock, self.durations, self.calls = clock, list(durations), []

    def method_meta(self):
        return _Meta()

    def set_inputs(self, inputs):
        assert all(t is not None for t in inputs)
        self.calls.append("set_inputs")
        self.clock[0] += self.SET_INPUTS_NS

    def execute(self):
        self.calls.append("execute")
        self.clock[0] += self.durations.pop(0)


def test_executorch_s_loop_resets_inputs_outside_the_timed_interval_and_times_what_kotlin_times(
        core_out, monkeypatch, tmp_path):
    """Every inference is preceded by a copy of the inputs (the memory plan reuses them), yet the samples,
    warm-up and stopping rule are the Kotlin loop's, run for run: the copy is outside every timed interval."""
    from nnlite_tui.core.runtimes.executorch import session as et_session

    assert litert_interpreter.LiteRtSession.reset_inputs is None  # LiteRT's loop sets its inputs once
    model = tmp_path / "m.pte"
    model.write_bytes(b"not read: the method is scripted")
    for name, case in json.loads((core_out / "loops.json").read_text()).items():
        clock = [1_000_000]
        method = _ScriptedMethod(clock, case["invoke_ns"])
        monkeypatch.setattr(et_session, "load", lambda path, threads, etdump=False: (object(), method))
        monkeypatch.setattr(protocol.time, "perf_counter_ns", lambda: clock[0])
        result = run_benchmark(str(model), BenchSettings(**case["settings"]), runtime="executorch")
        assert result["first_inference_ns"] == case["first_inference_ns"], name
        assert result["samples_ns"] == case["samples_ns"], name
        assert result["warmup_runs"] == case["warmup_runs"] and result["warmup_mean_ns"] == case["warmup_mean_ns"], name
        assert method.calls == ["set_inputs", "execute"] * (len(method.calls) // 2), name
        assert result["timing"]["native_clock"] is None and result["native_samples_ns"] is None
