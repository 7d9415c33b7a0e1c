"""android-app/protocol/report.schema.json holds for reports from both sides of the protocol:
the Kotlin core (the app's own report builder) and Python's bench.benchmark_result (what the host
and the device simulator produce), and refuses reports that break the contract."""

from __future__ import annotations

import copy
import platform
import time

import pytest

from nnlite_tui.core.bench.settings import BenchSettings
from nnlite_tui.core.bench.protocol import benchmark_result

APP_KEYS = {"protocol_version", "app_version", "simulated", "started_at_ms", "finished_at_ms", "fallback_reason", "device",
            "conditions", "capabilities"}
MEASURED = {"init_ns", "first_inference_ns", "stats", "samples_ns", "timed_seconds", "input_shapes", "input_dtypes",
            "input_fill",
            "output_shapes", "timing", "native_stats", "native_samples_ns", "warmup_runs", "warmup_mean_ns", "delegation",
            "memory"}
V2_KEYS = {"warmup_seconds", "require_full_delegation", "input_fill", "timing", "native_stats", "native_samples_ns", "warmup_runs",
           "warmup_mean_ns", "delegation", "memory", "conditions"}
V3_KEYS = {"runtime", "runtime_version", "capabilities", "energy"}


def with_app_keys(result: dict, started_ms: int) -> dict:
    """Python's result block plus the keys the app adds, as the device simulator writes them."""
    from nnlite_tui.simdevice.bench_worker import capabilities, conditions_block

    uname = platform.uname()
    snap = {"at_ms": started_ms, "thermal_status": 0, "thermal_status_name": "none", "thermal_headroom": 0.3,
            "battery_temperature_c": 25.0, "screen_interactive": True, "foreground": True, "power_save": False}
    if result["valid"]:
        result = {**result, "conditions": conditions_block(snap, snap)}
    return {**result, "protocol_version": 3, "app_version": "0.3.0", "simulated": True,
            "capabilities": capabilities({"protocol": 3}),
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
    "wrong protocol version": lambda r: r.update(protocol_version=4),
    "protocol 2 with protocol 3 keys": lambda r: r.update(protocol_version=2),
    "v3 without capabilities": lambda r: r.pop("capabilities"),
    "v3 without runtime_version": lambda r: r.pop("runtime_version"),
    "valid with an unknown runtime": lambda r: r.update(runtime="tvm"),
    "capabilities with an unknown runtime": lambda r: r["capabilities"]["runtimes"].update(tvm="1.0"),
    "protocol 1 with protocol 2 keys": lambda r: r.update(protocol_version=1),
    "v2 valid without native timing": lambda r: r.pop("native_stats"),
    "v2 valid without memory": lambda r: r.pop("memory"),
    "delegation with a negative node count": lambda r: r["delegation"].update(delegated_nodes=-1),
    "conditions from nowhere": lambda r: r["conditions"].update(source="guessed"),
    "thermal status out of range": lambda r: r["conditions"]["before"].update(thermal_status=9),
    "v2 without warmup_seconds": lambda r: r.pop("warmup_seconds"),
    "invalid but measured": lambda r: r.update(valid=False, error_stage="invoke", error_type="E", error_message="m"),
    "invalid with an unknown stage": lambda r: (r.update(valid=False, error_stage="arguments", error_type="E",
                                                         error_message="m"), [r.pop(k) for k in MEASURED]),
}


@pytest.mark.parametrize("breakage", list(BREAKAGES))
def test_schema_refuses_a_broken_report(validator, kotlin_reports, breakage):
    report = copy.deepcopy(kotlin_reports["valid"])
    BREAKAGES[breakage](report)
    assert errors(validator, report), f"schema accepted: {breakage}"


def test_a_protocol_1_report_from_the_previous_app_still_validates(validator, kotlin_reports):
    for name in ("valid", "load-error-missing-model", "args-error-bad-values"):
        report = {k: v for k, v in copy.deepcopy(kotlin_reports[name]).items() if k not in V2_KEYS | V3_KEYS}
        report.update(protocol_version=1, app_version="0.1.0")
        assert errors(validator, report) == [], name


def test_a_protocol_2_report_from_the_previous_app_still_validates(validator, kotlin_reports):
    for name in ("valid", "throttled", "load-error-missing-model", "args-error-bad-values"):
        report = {k: v for k, v in copy.deepcopy(kotlin_reports[name]).items() if k not in V3_KEYS}
        report.update(protocol_version=2, app_version="0.2.0")
        assert errors(validator, report) == [], name


EXECUTORCH_BREAKAGES = {
    "a native clock": lambda r: r["timing"].update(native_clock="Interpreter.getLastNativeInferenceDurationNanoseconds"),
    "native samples": lambda r: r.update(native_samples_ns=r["samples_ns"], native_stats=r["stats"]),
    "a gpu backend": lambda r: r.update(backend_requested="gpu", backend_used="gpu"),
    "delegation without backends": lambda r: r["delegation"].pop("backends"),
}


@pytest.mark.parametrize("breakage", list(EXECUTORCH_BREAKAGES))
def test_schema_refuses_a_broken_executorch_report(validator, kotlin_reports, breakage):
    report = copy.deepcopy(kotlin_reports["executorch-valid"])
    EXECUTORCH_BREAKAGES[breakage](report)
    assert errors(validator, report), f"schema accepted: {breakage}"


def test_kotlin_executorch_reports_carry_the_runtime_and_the_build_s_runtimes(kotlin_reports):
    et = kotlin_reports["executorch-valid"]
    assert (et["runtime"], et["runtime_version"], et["backend_used"]) == ("executorch", "1.5.1", "xnnpack")
    assert et["timing"] == {"stats_of": "wall", "wall_clock": "Module.forward", "native_clock": None}
    assert et["native_stats"] is None and et["delegation"]["backends"] == ["XnnpackBackend"]
    portable = kotlin_reports["executorch-portable-kernels"]
    assert portable["backend_used"] == "cpu" and "no XnnpackBackend delegate" in portable["fallback_reason"]
    assert kotlin_reports["valid"]["runtime"] == "litert"
    for name, report in kotlin_reports.items():  # every report, args failures included, announces the runtimes
        assert report["capabilities"]["runtimes"] == {"litert": "1.4.2", "executorch": "1.5.1"}, name
    unknown = kotlin_reports["args-error-unknown-runtime"]
    assert (unknown["runtime"], unknown["runtime_version"]) == ("tflite", None)
    assert "unknown runtime 'tflite'" in unknown["error_message"]


ENERGY_BREAKAGES = {
    "an energy figure on an invalid block": lambda e: e.update(valid=False, reason="r", reason_codes=["noisy_idle"]),
    "a valid block without its figure": lambda e: e.update(energy_per_inference_mj=None),
    "a charging phone's power": lambda e: e.update(valid=False, reason="r", reason_codes=["charging"], charging=True,
                                                   sign_convention=None, power_delta_mw=None, energy_per_inference_mj=None),
    "an unknown reason": lambda e: e.update(valid=False, reason="r", reason_codes=["guessed"], power_delta_mw=None,
                                            energy_per_inference_mj=None),
    "a window shorter than a second": lambda e: e.update(window_seconds=0.5),
    "a stray key": lambda e: e.update(joules=1.0),
}


@pytest.mark.parametrize("breakage", list(ENERGY_BREAKAGES))
def test_schema_refuses_a_broken_energy_block(validator, kotlin_reports, breakage):
    report = copy.deepcopy(kotlin_reports["energy-valid"])
    ENERGY_BREAKAGES[breakage](report["energy"])
    assert errors(validator, report), f"schema accepted: {breakage}"


def test_kotlin_energy_blocks_say_why_they_are_invalid(kotlin_reports):
    ok = kotlin_reports["energy-valid"]["energy"]
    assert ok["valid"] and ok["energy_per_inference_mj"] == 10.0 and ok["counter"] == "current_now"
    assert ok["load"]["inferences"] == 1000 and ok["idle"]["readings"] == len(ok["idle"]["samples"]["t_ns"]) == 251
    charging = kotlin_reports["energy-charging"]
    assert charging["valid"] and not charging["energy"]["valid"]  # the timing stands, the energy does not
    assert charging["energy"]["reason_codes"] == ["charging"] and charging["energy"]["energy_per_inference_mj"] is None
    constant = kotlin_reports["energy-constant-counters"]["energy"]
    assert constant["reason_codes"] == ["counter_constant"] and constant["power_idle_mw"] is None
    assert "energy" not in kotlin_reports["valid"]


def test_kotlin_v2_reports_say_what_ran_where_and_in_what_conditions(kotlin_reports):
    valid = kotlin_reports["valid"]
    assert valid["timing"]["native_clock"] == "Interpreter.getLastNativeInferenceDurationNanoseconds"
    assert valid["native_stats"]["count"] == valid["stats"]["count"] == len(valid["native_samples_ns"])
    assert valid["delegation"]["full"] is True and valid["conditions"]["throttled"] is False
    assert kotlin_reports["throttled"]["conditions"]["throttled"] is True
    bare = kotlin_reports["no-native-timing-no-thermal"]
    assert bare["native_stats"] is None and bare["timing"]["native_clock"] is None
    assert bare["conditions"]["throttled"] is None
    assert bare["conditions"]["sustained_performance"] == {"supported": None, "enabled": False}
    gpu = kotlin_reports["gpu-missing-native-library"]
    assert (gpu["valid"], gpu["backend_used"]) == (True, "xnnpack")
    assert gpu["fallback_reason"].startswith("gpu -> xnnpack: load failed: java.lang.UnsatisfiedLinkError: ")
    partial = kotlin_reports["partial-delegation-required-full"]
    assert (partial["valid"], partial["error_stage"]) == (False, "load")
    assert partial["error_message"] == "require_full_delegation: TfLiteGpuDelegateV2 took 12 of 15 nodes (2 partitions)"


@pytest.fixture(scope="module")
def python_executorch_report(tiny_pte) -> dict:
    started = int(time.time() * 1000)
    result = benchmark_result(str(tiny_pte), BenchSettings(warmup=1, runs=5, min_seconds=0.0), "py-et-1",
                              runtime="executorch")
    assert result["valid"], result
    return with_app_keys(result, started)


def test_python_executorch_report_follows_the_app_s_executorch_rules(validator, python_executorch_report,
                                                                      kotlin_reports):
    assert errors(validator, python_executorch_report) == []
    et = python_executorch_report
    assert (et["runtime"], et["backend_used"], et["timing"]["wall_clock"]) == ("executorch", "xnnpack", "Method.execute")
    assert et["delegation"]["source"] == "method metadata" and et["delegation"]["backends"] == ["XnnpackBackend"]
    assert set(kotlin_reports["executorch-valid"]) == set(et)
    assert set(kotlin_reports["executorch-valid"]["delegation"]) == set(et["delegation"])


def test_the_simulated_app_words_runtime_errors_as_the_app(kotlin_reports):
    from nnlite_tui.simdevice.bench_args import ArgsError, parse

    base = {"model_path": "/data/local/tmp/nnlite/tiny.tflite", "report_path": "/sdcard/r.json", "run_id": "x"}
    for name, extras in (("args-error-unknown-runtime", {"runtime": "tflite"}),
                         ("args-error-executorch-without-shapes", {"runtime": "executorch"})):
        with pytest.raises(ArgsError) as err:
            parse({**base, **extras}, available=("litert", "executorch"))
        assert str(err.value) == kotlin_reports[name]["error_message"], name
