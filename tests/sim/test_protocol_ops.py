"""The protocol's optional per-op profile (android-app/PROTOCOL.md section 9e) through a real adb
server: the host asks with the profile extras, the simulated app fills the `ops` block from the host
profiler after the timed runs, the host checks it against the schema and the mode it asked for; an
app that gives no profile, or does not know the extras, is answered with a block that says why."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from nnlite_tui.core.bench.settings import BenchSettings
from nnlite_tui.core.devices import adb_app, adb_extras
from nnlite_tui.core.outcomes import Artifact
from nnlite_tui.core.devices.adb_app import Timeouts
from nnlite_tui.core.devices.adb_link import Link
from nnlite_tui.core.devices.base import DeviceError
from nnlite_tui.core.ops.block import SCHEMA_VERSION
from nnlite_tui.core.ops.predictor import load_table
from nnlite_tui.core.runtimes.litert.graph import read_graph

SCHEMA = Path(__file__).resolve().parents[2] / "android-app" / "protocol" / "report.schema.json"
QUICK = dict(warmup=1, runs=5, min_seconds=0.1, max_seconds=10.0, warmup_seconds=0.2, profile_runs=5)
HOST_KEYS = ("log", "device_report_path", "launch_id", "cleanup_error", "protocol_missing_fields")


def host_run(sim, tiny_tflite, test_apk, **settings) -> dict:
    link = Link(sim.serial, shell_timeout_s=30)
    adb_app.ensure_app(link, str(test_apk), Timeouts())
    return adb_app.run_benchmark(link, Artifact(str(tiny_tflite)), BenchSettings(**{**QUICK, **settings}), "ops",
                                 Timeouts(report_s=90, poll_s=0.1))


def schema_errors(result: dict) -> list[str]:
    validator = jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text()))
    report = {k: v for k, v in result.items() if k not in HOST_KEYS}
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(report)]


def test_the_simulated_app_profiles_after_the_timed_runs(sim_device_factory, tiny_tflite, test_apk):
    sim = sim_device_factory()
    r = host_run(sim, tiny_tflite, test_apk, profile_ops="both")
    assert schema_errors(r) == []
    assert r["valid"] and r["stats"]["count"] >= 5
    graph = read_graph(str(tiny_tflite))
    for key, mode in (("ops", "xnnpack"), ("ops_builtin", "builtin")):
        block = r[key]
        assert "error" not in block and block["kernel_mode"] == mode and block["runs"] == 5
        assert [row["type"] for row in block["ops"]] == [op.type for op in graph.ops]
        # Checked on the host as pulled from the device, as the host checks its own blocks.
        assert block["valid"] is True, block.get("invalid_reasons")
        if block["total_us"] is not None:
            assert block["ops_sum_us"] <= block["total_us"] + block["sum_tolerance_us"]
            assert block["total_us"] == pytest.approx(block["invoke_us"] - block["profiler_us"], abs=0.01)
        else:  # the profiler's measured cost as large as the run: not a negative total
            assert block["profiler_us"] >= block["invoke_us"] and block["total_note"]
        assert all((row["avg_us"] is None) == (row["timing"] != "measured") for row in block["ops"])
    assert any(row["timing"] == "measured" and row["median_us"] > 0 for row in r["ops"]["ops"])


def test_without_the_request_there_is_no_block_and_no_extra(sim_device_factory, tiny_tflite, test_apk):
    assert "profile_ops" not in adb_extras.launch_extras("m", "r", "id", BenchSettings())
    sim = sim_device_factory()
    r = host_run(sim, tiny_tflite, test_apk)
    assert r["valid"] and "ops" not in r and "ops_builtin" not in r


def test_an_app_without_a_profiler_is_answered_with_the_reason(sim_device_factory, tiny_tflite, test_apk):
    # What the Android app does (section 9e): it takes the extras and writes no ops block.
    sim = sim_device_factory(app_ops="none")
    r = host_run(sim, tiny_tflite, test_apk, profile_ops="both")
    assert r["valid"] and sim.app.launches == 1 and schema_errors(r) == []
    for key, mode in (("ops", "xnnpack"), ("ops_builtin", "builtin")):
        assert r[key] == {"schema_version": SCHEMA_VERSION, "kernel_mode": mode, "error": adb_extras.no_app_profile(), "ops": []}


def test_a_block_the_host_did_not_ask_for_is_refused():
    settings = BenchSettings(profile_ops="xnnpack")
    with pytest.raises(DeviceError, match="kernel mode 'builtin', not the 'xnnpack'"):
        adb_extras.check_ops({"valid": True, "ops": {"kernel_mode": "builtin", "ops": []}}, settings, "s")
    with pytest.raises(DeviceError, match="nobody asked for"):
        adb_extras.check_ops({"valid": True, "ops": {"kernel_mode": "xnnpack", "ops": []}}, BenchSettings(), "s")


def test_a_pulled_block_is_checked_and_stored_marked_invalid_when_it_fails():
    settings = BenchSettings(profile_ops="xnnpack")
    rows = [{"index": 0, "type": "CONV_2D", "key": "k", "kernels": ["Convolution (NHWC, F32) IGEMM"], "events": 1,
             "timing": "measured", "resolved_runs": 5, "avg_us": 30.0, "median_us": 30.0, "min_us": 29.0},
            {"index": 1, "type": "RESHAPE", "key": "r", "kernels": ["Copy (NC, X32)"], "events": 1,
             "timing": "below_resolution", "resolved_runs": 0, "avg_us": 0.5, "median_us": 0.5, "min_us": 0.5}]
    block = {"schema_version": SCHEMA_VERSION, "kernel_mode": "xnnpack", "runs": 5, "runs_kept": 5, "total_us": 20.0,
             "ops_sum_us": 30.0, "unattributed_us": -10.0, "invoke_us": 30.0, "ops": rows}
    result = adb_extras.check_ops({"valid": True, "ops": block}, settings, "s")
    assert result["valid"] is True  # the timed result stands
    codes = [reason.split(":")[0] for reason in result["ops"]["invalid_reasons"]]
    assert result["ops"]["valid"] is False and codes == ["time_without_samples", "sum_exceeds_total"]
    # A schema 3 block (an older simulator or app build) is read as the current schema.
    old = {**block, "schema_version": 3, "total_us": 31.0, "ops_sum_us": 31.0, "unattributed_us": 0.0}
    old["ops"] = [{k: v for k, v in r.items() if k not in ("timing", "resolved_runs", "events")} for r in rows]
    old["ops"][0].update(avg_us=30.5, median_us=30.5, min_us=29.5)
    stored = adb_extras.check_ops({"valid": True, "ops": old}, settings, "s")["ops"]
    assert stored["valid"] and stored["upgraded_from"] == 3 and stored["ops_sum_us"] == 30.0
    assert [r["timing"] for r in stored["ops"]] == ["measured", "below_resolution"]


def test_an_app_that_does_not_know_the_extras_runs_again_without_them(sim_device_factory, tiny_tflite, test_apk):
    sim = sim_device_factory(app_ops="unknown")  # an app build from before the profile extras
    r = host_run(sim, tiny_tflite, test_apk, profile_ops="xnnpack")
    assert r["valid"] and sim.app.launches == 2 and schema_errors(r) == []
    assert r["ops"]["error"].startswith("the installed benchmark app does not take the profile_ops extra")


def test_a_bad_profile_request_is_refused_before_launching(sim_device_factory, tiny_tflite, test_apk):
    sim = sim_device_factory()
    with pytest.raises(DeviceError, match="profile_runs must be in 1"):
        host_run(sim, tiny_tflite, test_apk, profile_ops="xnnpack", profile_runs=0)
    assert sim.app.launches == 0


@pytest.mark.slow
def test_nnlite_run_stores_the_devices_ops_block_as_the_hosts(sim_device_factory, tmp_path):
    """`nnlite run --profile-ops` on a simulated device: the report's benchmark has the ops block where
    the host device puts its own, and `nnlite predict` can build its table from it."""
    repo = Path(__file__).resolve().parents[2]
    sim = sim_device_factory(with_app=True)
    env = {**{k: v for k, v in os.environ.items() if k != "NNLITE_APK"}, "PYTHONPATH": str(repo)}
    out = tmp_path / "run"
    run = subprocess.run([sys.executable, "-m", "nnlite_tui", "run", "sample_models", "--device", sim.serial,
                          "--out", str(out), "--include", "mnist_lenet", "--headless", "--runs", "5",
                          "--min-seconds", "0.2", "--warmup", "1", "--profile-ops", "--keep-artifacts", "all"],
                         cwd=repo, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    report = json.loads((out / "reports" / f"mnist_lenet__{sim.serial}__xnnpack.json").read_text())
    block = report["benchmark"]["ops"]
    assert report["valid"] and report["benchmark"]["simulated"] is True
    assert "error" not in block and block["kernel_mode"] == "xnnpack" and block["schema_version"] == SCHEMA_VERSION
    graph = read_graph(str(out / "artifacts" / "mnist_lenet.tflite"))
    assert [row["type"] for row in block["ops"]] == [op.type for op in graph.ops] and block["ops_sum_us"] > 0
    assert load_table([out]).models == 1
