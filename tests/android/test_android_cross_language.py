"""The app's Kotlin core and nnlite_tui.core agree: same statistics, same benchmark loop."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nnlite_tui.core import bench
from nnlite_tui.core.bench import BenchSettings, run_benchmark
from nnlite_tui.core.stats import STAT_KEYS, summarize

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
        monkeypatch.setattr(bench, "_make_interpreter", lambda path, settings: interp)
        monkeypatch.setattr(bench.time, "perf_counter_ns", lambda: clock[0])
        result = run_benchmark(str(model), BenchSettings(**case["settings"]))
        assert result["first_inference_ns"] == case["first_inference_ns"], name
        assert result["samples_ns"] == case["samples_ns"], name
        assert result["timed_seconds"] == case["timed_seconds"], name
        assert result["warmup_runs"] == case["warmup_runs"], name
        assert result["warmup_mean_ns"] == case["warmup_mean_ns"], name
