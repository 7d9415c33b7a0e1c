"""Protocol version 2 end to end through a real adb server: the simulated app's v2 report (native
and wall timing, warm-up by time, conditions, memory, delegation), the throttle_after fault, the
screen the host wakes, the host's checks before launching, an app of protocol 1, and reinstalling
a rebuilt APK whose versionCode did not change."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from nnlite_tui.core.bench.settings import BenchSettings
from nnlite_tui.core.devices import adb_app
from nnlite_tui.core.outcomes import Artifact
from nnlite_tui.core.devices.adb_app import Timeouts
from nnlite_tui.core.devices.adb_extras import V2_FIELDS, V3_FIELDS, settings_errors
from nnlite_tui.core.devices.adb_link import Link
from nnlite_tui.core.devices.base import DeviceError

SCHEMA = Path(__file__).resolve().parents[2] / "android-app" / "protocol" / "report.schema.json"
QUICK = dict(warmup=1, runs=5, min_seconds=0.1, max_seconds=10.0, warmup_seconds=0.2)


@pytest.fixture(scope="module")
def validator():
    return jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text()))


def host_run(sim, tiny_tflite, test_apk, **settings) -> dict:
    link = Link(sim.serial, shell_timeout_s=30)
    adb_app.ensure_app(link, str(test_apk), Timeouts())
    return adb_app.run_benchmark(link, Artifact(str(tiny_tflite)), BenchSettings(**{**QUICK, **settings}), "v2",
                                 Timeouts(report_s=60, poll_s=0.1))


def errors(validator, result: dict) -> list[str]:
    report = {k: v for k, v in result.items() if k not in
              ("log", "device_report_path", "launch_id", "cleanup_error", "protocol_missing_fields")}
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(report)]


def test_a_v2_run_reports_native_and_wall_timing_conditions_memory_and_delegation(
        sim_device_factory, tiny_tflite, test_apk, validator):
    sim = sim_device_factory(screen_off=True)
    r = host_run(sim, tiny_tflite, test_apk)
    assert errors(validator, r) == []
    assert r["valid"] and r["protocol_version"] == 3 and r["protocol_missing_fields"] == []
    assert r["runtime"] == "litert" and set(r["capabilities"]["runtimes"]) == {"litert", "executorch"}
    # timing: stats are the wall time, native beside it, one native sample per wall sample
    assert r["timing"] == {"stats_of": "wall", "wall_clock": "Interpreter.invoke",
                           "native_clock": "InterpreterWrapper.Invoke"}
    assert len(r["native_samples_ns"]) == len(r["samples_ns"]) == r["native_stats"]["count"] >= 5
    assert all(0 < n <= w for n, w in zip(r["native_samples_ns"], r["samples_ns"]))
    # warm-up by count and by time: at least 1 run and 0.2 s
    assert r["warmup_runs"] >= 1 and r["warmup_runs"] * r["warmup_mean_ns"] >= 0.2e9
    # memory of the (host) process running the interpreter, before load, after load, after the runs
    mem = r["memory"]
    assert mem["source"] == "host"
    assert mem["after_load"]["vm_rss_kb"] > mem["before_load"]["vm_rss_kb"] > 0
    assert mem["after_runs"]["vm_hwm_kb"] >= mem["after_runs"]["vm_rss_kb"]
    # delegation: what Python's interpreter can tell, nothing invented
    d = r["delegation"]
    assert (d["source"], d["partitions"], d["delegated_nodes"], d["full"]) == ("interpreter graph", 1, None, None)
    assert d["total_nodes"] >= 2
    # conditions: simulated, before and after, the screen the host woke
    c = r["conditions"]
    assert c["source"] == "simulated" and c["throttled"] is False
    assert c["before"]["screen_interactive"] is True and c["before"]["foreground"] is True
    assert c["before"]["thermal_status"] == c["after"]["thermal_status"] == 0
    assert c["after"]["at_ms"] >= c["before"]["at_ms"]
    assert sim.screen.wakeups == 1 and sim.screen.locked is False


def test_throttle_after_shows_in_the_report(sim_device_factory, tiny_tflite, test_apk, validator):
    sim = sim_device_factory(faults="throttle_after=0.1s")
    r = host_run(sim, tiny_tflite, test_apk)
    assert errors(validator, r) == []
    c = r["conditions"]
    assert c["throttled"] is True
    assert (c["before"]["thermal_status_name"], c["after"]["thermal_status_name"]) == ("none", "severe")
    assert c["after"]["thermal_headroom"] > 1.0 > c["before"]["thermal_headroom"]
    d = Link(sim.serial).shell("cat /sys/class/thermal/thermal_zone0/temp")
    assert int(d) < 60_000  # the launch is over: the zones cool back


def test_require_full_delegation_fails_where_it_cannot_be_verified(sim_device_factory, tiny_tflite, test_apk,
                                                                   validator):
    sim = sim_device_factory()
    r = host_run(sim, tiny_tflite, test_apk, require_full_delegation=True)
    assert errors(validator, r) == []
    assert (r["valid"], r["error_stage"], r["error_type"]) == (False, "load", "BenchmarkError")
    assert r["error_message"].startswith("require_full_delegation: ")


@pytest.mark.parametrize("bad, message", [
    (dict(threads=2000), "threads must be in 1..1024, got 2000"),
    (dict(runs=2**31), "runs must be in 1..2147483647, got 2147483648"),
    (dict(max_seconds=float("inf")), "max_seconds must be a finite number, got inf"),
    (dict(warmup_seconds=float("nan")), None),
])
def test_the_host_refuses_out_of_range_settings_before_launching(sim_device_factory, tiny_tflite, test_apk, bad,
                                                                 message):
    if message is None:  # BenchSettings itself refuses NaN
        with pytest.raises(ValueError, match="warmup_seconds"):
            BenchSettings(**{**QUICK, **bad})
        return
    settings = BenchSettings(**{**QUICK, "max_runs": 2**31 + 5, **bad}) if "runs" in bad else \
        BenchSettings(**{**QUICK, **bad})
    assert any(message in e for e in settings_errors(settings))
    sim = sim_device_factory()
    link = Link(sim.serial, shell_timeout_s=30)
    with pytest.raises(DeviceError) as err:
        adb_app.run_benchmark(link, Artifact(str(tiny_tflite)), settings, "bad", Timeouts())
    assert err.value.kind == "settings" and not err.value.transient and message in str(err.value)
    assert sim.app.launches == 0


def test_a_protocol_1_app_still_works_and_the_result_says_what_it_lacks(sim_device_factory, tiny_tflite, test_apk,
                                                                        validator):
    sim = sim_device_factory(app_protocol=1)
    r = host_run(sim, tiny_tflite, test_apk)
    assert errors(validator, r) == []
    assert r["valid"] and r["protocol_version"] == 1 and r["app_version"] == "0.1.0"
    assert r["protocol_missing_fields"] == list(V2_FIELDS + V3_FIELDS)
    assert not set(V2_FIELDS) & set(r)
    assert sim.app.launches == 2  # the v2 extras were refused once, then the host spoke protocol 1
    link = Link(sim.serial, shell_timeout_s=30)
    again = adb_app.run_benchmark(link, Artifact(str(tiny_tflite)), BenchSettings(**QUICK), "v1b", Timeouts(report_s=60))
    assert again["protocol_version"] == 1 and sim.app.launches == 3  # remembered: no refused launch
    with pytest.raises(DeviceError, match="protocol 1, which cannot require full delegation"):
        adb_app.run_benchmark(link, Artifact(str(tiny_tflite)), BenchSettings(**QUICK, require_full_delegation=True), "v1c",
                              Timeouts())


def test_nnlite_report_reads_a_report_whose_benchmark_came_from_a_protocol_1_app(sim_device_factory, tiny_tflite,
                                                                               test_apk, tmp_path):
    from click.testing import CliRunner

    from nnlite_tui.commands.report_cmd import report
    from nnlite_tui.core.report.document import LEMUR_KEYS, SCHEMA

    sim = sim_device_factory(app_protocol=1)
    bench = host_run(sim, tiny_tflite, test_apk)
    assert bench["protocol_version"] == 1
    # A run directory's report as written on disk: LEMUR's keys on top, the app's result in `benchmark`.
    on_disk = {**{k: None for k in LEMUR_KEYS}, "model_name": "tiny", "valid": True, "unit": "ns",
               "duration": int(bench["stats"]["median_ns"]), "iterations": bench["stats"]["count"],
               "device_type": "sdk_gphone64_arm64", "schema": SCHEMA, "schema_version": 1,
               "model": {"name": "tiny", "task": "img-classification"}, "device": {"serial": sim.serial},
               "benchmark": {**bench, "settings": BenchSettings(**QUICK).to_dict()}}
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "tiny__emu__xnnpack.json").write_text(json.dumps(on_disk))
    out = CliRunner().invoke(report, [str(tmp_path), "--format", "jsonl"])
    assert out.exit_code == 0, out.output
    read = json.loads(out.output.splitlines()[0])
    assert read["benchmark"]["protocol_version"] == 1 and read["duration"] == on_disk["duration"]
    assert read["benchmark"]["protocol_missing_fields"] == list(V2_FIELDS + V3_FIELDS)
    out = CliRunner().invoke(report, [str(tmp_path), "--format", "lemur"])
    assert out.exit_code == 0 and "wrote 1 LEMUR report(s)" in out.output, out.output
    lemur = json.loads(next((tmp_path / "lemur").rglob("*.json")).read_text())
    assert (lemur["duration"], lemur["valid"]) == (on_disk["duration"], True)


def test_a_rebuilt_apk_with_the_same_version_code_is_reinstalled(sim_device_factory, test_apk, tmp_path):
    from nnlite_tui.simdevice.apk import build_test_apk

    sim = sim_device_factory()
    link = Link(sim.serial, shell_timeout_s=30)
    assert adb_app.ensure_app(link, str(test_apk), Timeouts())["action"] == "installed"
    assert adb_app.ensure_app(link, str(test_apk), Timeouts())["action"] == "up-to-date"
    rebuilt = build_test_apk(str(tmp_path / "rebuilt.apk"), version_code=1, version_name="0.1.0-rebuilt")
    done = adb_app.ensure_app(link, rebuilt, Timeouts())
    assert (done["action"], done["version_code"]) == ("reinstalled", 1)
    assert sim.packages["org.nnlite.bench"].version_name == "0.1.0-rebuilt"
    assert adb_app.ensure_app(link, rebuilt, Timeouts())["action"] == "up-to-date"
