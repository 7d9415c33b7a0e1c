"""Token inputs on the simulated device, through the real adb server: the host sends the artifact's
ranges in `input_ranges`, the simulated app fills each integer input inside its range and says so in
`input_fill` (android-app/PROTOCOL.md section 4), as the app's core does (InputFillTest)."""

from __future__ import annotations

import pytest

from nnlite_tui.core.bench.range_check import check_ranges
from nnlite_tui.core.bench.settings import BenchSettings
from nnlite_tui.core.devices import adb_app
from nnlite_tui.core.devices.adb_app import Timeouts
from nnlite_tui.core.devices.adb_link import Link
from nnlite_tui.core.outcomes import Artifact
from tests.conftest import FIXTURES

QUICK = dict(warmup=1, runs=3, min_seconds=0.0, max_seconds=10.0, warmup_seconds=0.0)


def run(sim, artifact: Artifact, test_apk) -> dict:
    link = Link(sim.serial, shell_timeout_s=30)
    adb_app.ensure_app(link, str(test_apk), Timeouts())
    return adb_app.run_benchmark(link, artifact, BenchSettings(**QUICK), "ranges", Timeouts(report_s=60, poll_s=0.1))


@pytest.fixture(scope="module")
def captioning(tmp_path_factory):
    """The vocabulary-50 captioning fixture converted once: (its conversion record, its artifact)."""
    pytest.importorskip("litert_torch")
    from nnlite_tui.core.convert.worker.job import convert_one
    from nnlite_tui.core.outcomes import ConversionResult
    from nnlite_tui.core.runtimes import get_runtime
    from nnlite_tui.core.sources.discover import discover

    spec = discover([f"{FIXTURES / 'tokens' / 'captioning_vocab50.py'}:make"])[0]
    path = tmp_path_factory.mktemp("cap") / "cap.tflite"
    converted = ConversionResult.from_converter({"model": spec.name, **convert_one(spec, str(path),
                                                                                    get_runtime("litert"))})
    return converted.details, converted.artifact


@pytest.mark.slow
def test_the_simulated_app_fills_token_ids_inside_the_range_it_is_told(sim_device_factory, test_apk, captioning):
    details, artifact = captioning
    assert artifact.input_ranges == (None, (0, 50))
    sim = sim_device_factory()
    result = check_ranges(run(sim, artifact, test_apk), details)
    assert result["valid"], result.get("error_message")
    fill = result["input_fill"][1]
    assert fill["range"] == [0, 50] and fill["min"] >= 0 and fill["max"] <= 49
    # Not told the range, the app's plain fill [0, 127) indexes past the 50-row table.
    untold = run(sim, Artifact(artifact.path), test_apk)
    assert not untold["valid"] and untold["error_stage"] == "invoke"
    assert "index out of bounds" in untold["error_message"]


def test_ranges_for_another_number_of_inputs_fail_the_run_as_the_app_does(sim_device_factory, test_apk, tiny_tflite):
    sim = sim_device_factory()
    result = run(sim, Artifact(str(tiny_tflite), "litert", ((0, 5), (0, 5))), test_apk)
    assert not result["valid"] and result["error_stage"] == "invoke"
    assert result["error_message"] == "2 input ranges given for a model of 1 inputs"  # Benchmark.kt's words


def test_the_simulated_app_parses_input_ranges_as_the_app_core():
    from nnlite_tui.simdevice.bench_args import ArgsError, parse

    base = {"model_path": "/m.tflite", "report_path": "/r.json", "run_id": "r"}
    assert parse({**base, "input_ranges": "[null, [0, 50]]"}).ranges == (None, (0, 50))
    assert parse(base).ranges == ()
    for text in ("[[5, 5]]", "[[0]]", "[[0, 1.5]]", "{}", "[0, 50]", "nope"):  # BenchArgsTest's cases
        with pytest.raises(ArgsError, match=r"^input_ranges must be a JSON array of null or \[low, high\] integer"):
            parse({**base, "input_ranges": text})
    with pytest.raises(ArgsError, match="unknown extra 'input_ranges'"):  # an app of protocol 2
        parse({**base, "input_ranges": "[null]"}, protocol=2)
