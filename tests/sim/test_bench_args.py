"""The simulated app parses intent extras exactly as the real app's BenchArgs (android-app core):
these cases mirror android-app/core/src/test/kotlin/org/nnlite/bench/core/BenchArgsTest.kt."""

from __future__ import annotations

import pytest

from nnlite_tui.simdevice.bench_args import ArgsError, JavaLong, parse

BASE = {"model_path": "/data/local/tmp/nnlite/m.tflite",
        "report_path": "/sdcard/Android/data/org.nnlite.bench/files/reports/r.json", "run_id": "r1"}


def bad(extras: dict) -> ArgsError:
    with pytest.raises(ArgsError) as err:
        parse(extras)
    return err.value


def test_defaults_are_the_protocols():
    r = parse(BASE)
    assert r.settings == {"warmup": 5, "runs": 50, "min_seconds": 1.0, "max_runs": 10_000, "max_seconds": 60.0,
                          "threads": 1, "backend": "xnnpack", "seed": 0, "warmup_seconds": 0.5,
                          "require_full_delegation": False}
    assert r.run_id == "r1"


def test_typed_extras_as_am_start_sends_them():
    r = parse({**BASE, "warmup": 2, "runs": 20, "min_seconds": 0.1, "max_runs": 100, "max_seconds": 5.0,
               "threads": 4, "backend": "gpu", "seed": JavaLong(7)})
    assert r.settings == {"warmup": 2, "runs": 20, "min_seconds": 0.1, "max_runs": 100, "max_seconds": 5.0,
                          "threads": 4, "backend": "gpu", "seed": 7, "warmup_seconds": 0.5,
                          "require_full_delegation": False}


def test_numbers_sent_as_strings_are_accepted():
    r = parse({**BASE, "runs": "20", "min_seconds": "0.5", "backend": "cpu"})
    assert (r.settings["runs"], r.settings["min_seconds"], r.settings["backend"]) == (20, 0.5, "cpu")


def test_missing_model_path_still_knows_the_report_path():
    e = bad({k: v for k, v in BASE.items() if k != "model_path"})
    assert "missing model_path" in str(e)
    assert e.report_path == BASE["report_path"] and e.values["model_path"] is None


def test_non_numeric_runs_is_named_and_left_null():
    e = bad({**BASE, "runs": "abc"})
    assert "runs must be an integer, got 'abc'" in str(e)
    assert e.values["runs"] is None and e.values["warmup"] == 5


def test_unknown_backend_and_null_extras():
    e = bad({**BASE, "backend": "tpu"})
    assert "unknown backend 'tpu' (one of cpu, xnnpack, gpu, nnapi)" in str(e) and e.values["backend"] == "tpu"
    assert "backend is null" in str(bad({**BASE, "backend": None}))
    assert "runs must be an integer, got null" in str(bad({**BASE, "runs": None}))


def test_typos_ranges_and_types():
    assert "unknown extra 'warmups'" in str(bad({**BASE, "warmups": 3}))
    assert "runs must be >= 1" in str(bad({**BASE, "runs": 0}))
    assert "warmup must be >= 0" in str(bad({**BASE, "warmup": -1}))
    assert "threads must be in 1..1024" in str(bad({**BASE, "threads": 0}))
    assert "max_runs 10 below runs 20" in str(bad({**BASE, "runs": 20, "max_runs": 10}))
    assert "min_seconds must be a finite number, got 'nan'" in str(bad({**BASE, "min_seconds": "nan"}))
    assert "runs must be an integer, got 2.5 (Float)" in str(bad({**BASE, "runs": 2.5}))
    assert "warmup must be an integer, got true (Boolean)" in str(bad({**BASE, "warmup": True}))
    assert parse({**BASE, "android.intent.extra.REFERRER": "x"}).run_id == "r1"  # platform extras pass


def test_without_report_path_the_error_cannot_be_reported_to_a_file():
    assert bad({k: v for k, v in BASE.items() if k != "report_path"}).report_path is None


def test_version_2_extras_and_their_errors_match_the_app():
    r = parse({**BASE, "warmup_seconds": 0.25, "require_full_delegation": True})
    assert (r.settings["warmup_seconds"], r.settings["require_full_delegation"]) == (0.25, True)
    assert parse({**BASE, "require_full_delegation": "false"}).settings["require_full_delegation"] is False
    e = bad({**BASE, "warmup_seconds": -1.0, "require_full_delegation": "yes"})
    # the same message as ProtocolV2Test's `bad v2 extras are args errors` in the app's core
    assert str(e) == "require_full_delegation must be true or false, got 'yes'; warmup_seconds must be >= 0, got -1.0"


def test_a_protocol_1_app_does_not_know_the_version_2_extras():
    with pytest.raises(ArgsError) as err:
        parse({**BASE, "warmup_seconds": 0.5, "require_full_delegation": True}, protocol=1)
    assert str(err.value) == "unknown extra 'require_full_delegation'; unknown extra 'warmup_seconds'"
    assert parse(BASE, protocol=1).settings["warmup_seconds"] == 0.0  # protocol 1 warmed up by count only


# Protocol 3: the runtime extras, with the messages and order of the app's BenchArgs (Runtime.kt, InputSpec).
BOTH = ("litert", "executorch")
PTE = {**BASE, "model_path": "/data/local/tmp/nnlite/m.pte", "runtime": "executorch"}


def bad3(extras: dict, available=BOTH) -> str:
    with pytest.raises(ArgsError) as err:
        parse(extras, available=available)
    return str(err.value)


def test_an_executorch_request_carries_its_input_shapes_and_dtypes():
    r = parse({**PTE, "input_shapes": "[[1,28,28,1],[1,16]]", "input_dtypes": '["float32","int64"]'}, available=BOTH)
    assert (r.runtime, r.inputs) == ("executorch", [([1, 28, 28, 1], "float32"), ([1, 16], "int64")])
    assert parse({**PTE, "input_shapes": "[[2,3]]"}, available=BOTH).inputs == [([2, 3], "float32")]
    assert parse(BASE, available=BOTH).runtime == "litert" and parse(BASE).inputs is None


def test_runtime_errors_name_what_is_wrong_as_the_app_does():
    assert bad3({**BASE, "runtime": "tflite"}) == "unknown runtime 'tflite' (one of litert, executorch)"
    assert bad3(PTE, available=("litert",)) == "runtime 'executorch' is not in this app build (it has litert)"
    assert bad3(PTE) == ("missing input_shapes (runtime executorch needs them: its Java API cannot read a program's "
                         "input shapes)")
    assert bad3({**PTE, "backend": "gpu", "input_shapes": "[[1]]"}) == (
        "backend 'gpu' is not available with runtime executorch (its program's delegates are fixed at export; "
        "it takes xnnpack)")
    assert bad3({**PTE, "input_shapes": "[[1,-2]]"}) == \
        "input_shapes must be a JSON array of arrays of integers >= 0, got '[[1,-2]]'"
    assert bad3({**PTE, "input_shapes": "[[1]]", "input_dtypes": "float32"}) == \
        "input_dtypes must be a JSON array of dtype names, got 'float32'"
    assert bad3({**PTE, "input_shapes": "[[1],[2]]", "input_dtypes": '["int8"]'}) == \
        "input_dtypes has 1 entries for 2 input_shapes"
    assert bad3({**PTE, "input_shapes": "[[1]]", "input_dtypes": '["q8"]'}) == (
        "unknown input dtype 'q8' (one of float32, int32, uint8, int64, bool, int16, int8, float16, float64, "
        "uint16, uint32)")
    assert bad3({**PTE, "input_shapes": "[[65536,65536]]"}) == "input 0 of shape [65536, 65536] needs more than 2 GiB"
    assert bad3({**BASE, "input_shapes": "[[1]]", "input_dtypes": '["int8"]'}) == (
        "input_shapes is for runtime executorch only (LiteRT reads the inputs from the model); "
        "input_dtypes is for runtime executorch only (LiteRT reads the inputs from the model)")


def test_an_app_before_protocol_3_refuses_the_runtime_extra():
    with pytest.raises(ArgsError) as err:
        parse({**BASE, "runtime": "executorch"}, protocol=2, available=BOTH)
    assert str(err.value) == "unknown extra 'runtime'"
