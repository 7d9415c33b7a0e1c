"""The pipeline end to end on the host device: real conversions, real interpreter, real store file."""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from nnlite_tui.core.bench.settings import BenchSettings
from nnlite_tui.core.run.config import ConfigMismatch, RunConfig
from nnlite_tui.core.run.control import Control, ControlChannel
from nnlite_tui.core.convert.options import ConvertOptions
from nnlite_tui.core.events import ModelStatus, Recovery, RecordingReporter, RunControl, StageStarted
from nnlite_tui.core.run.setup import build_pipeline
from nnlite_tui.core.store import load_snapshot
from tests.conftest import REPO

FAST = BenchSettings(warmup=2, runs=20, min_seconds=0.05)


def make_cfg(out: Path, sources: list[Path], **kw) -> RunConfig:
    opts = kw.pop("convert", ConvertOptions(workers=1, timeout_s=30))
    return RunConfig(sources=[str(s) for s in sources], out=out, bench=kw.pop("bench", FAST), convert=opts,
                     backoff_s=0.1, cooldown_s=0.1, **kw)


def run(cfg: RunConfig, control: Control | None = None):
    rec = RecordingReporter()
    pipeline = build_pipeline(cfg)
    try:
        outcome = pipeline.run(rec, control or Control())
    finally:
        pipeline.store.close()
    return outcome, rec


def statuses(out: Path) -> dict[str, str]:
    _, records = load_snapshot(out)
    return {r["name"]: r["status"] for r in records}


def reports(out: Path) -> dict[str, dict]:
    return {json.loads(p.read_text())["model_name"]: json.loads(p.read_text())
            for p in (out / "reports").glob("*.json")}


def test_run_writes_truthful_reports_and_resume_does_nothing(tmp_path, good_models, bad_models):
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    for f in [good_models / "tiny_conv.py", good_models / "wide_conv.py", bad_models / "uses_topk.py",
              bad_models / "ctor_raises.py"]:
        shutil.copy(f, mixed)
    out = tmp_path / "run"
    outcome, rec = run(make_cfg(out, [mixed]))
    assert not outcome.stopped
    assert statuses(out) == {"ctor_raises": "failed", "tiny_conv": "done", "uses_topk": "failed", "wide_conv": "done"}
    reps = reports(out)
    assert set(reps) == {"ctor_raises", "tiny_conv", "uses_topk", "wide_conv"}
    good, bad = reps["tiny_conv"], reps["uses_topk"]
    assert good["valid"] is True and good["error_message"] is None
    assert good["iterations"] >= 20 and good["unit"] == "ns"
    rounds = [r["median_ns"] for r in good["benchmark"]["rounds"]]
    # Three rounds (more when they disagreed), the duration their median.
    assert 3 <= len(rounds) <= 5 and good["duration"] == round(statistics.median(rounds))
    assert good["iterations"] == good["benchmark"]["stats"]["count"] == sum(
        r["stats"]["count"] for r in good["benchmark"]["rounds"])
    assert (good["in_dim_0"], good["in_dim_1"], good["in_dim_2"], good["in_dim_3"]) == (1, 32, 32, 3)
    assert bad["valid"] is False and bad["duration"] is None
    assert bad["error_message"].startswith("validate: ValueError: ") and "STABLEHLO_SORT" in bad["error_message"]
    assert reps["ctor_raises"]["error"]["stage"] == "instantiate"
    # The run's events say what happened, in order, per model.
    done = [e.model for e in rec.of(ModelStatus) if e.status == "done"]
    assert sorted(done) == ["tiny_conv", "wide_conv"]
    # A rerun of a finished run converts and measures nothing.
    outcome2, rec2 = run(make_cfg(out, [mixed]))
    assert rec2.of(StageStarted) == []
    assert reports(out)["tiny_conv"]["created_at"] == good["created_at"]


def test_resume_with_other_settings_is_refused_unless_forced(tmp_path, good_models):
    out = tmp_path / "run"
    run(make_cfg(out, [good_models], include=("tiny_conv",)))
    with pytest.raises(ConfigMismatch, match="--runs: stored 20, given 30"):
        build_pipeline(make_cfg(out, [good_models], include=("tiny_conv",),
                                bench=BenchSettings(warmup=2, runs=30, min_seconds=0.05)))
    pipeline = build_pipeline(make_cfg(out, [good_models], include=("tiny_conv",), force_config=True,
                                       bench=BenchSettings(warmup=2, runs=30, min_seconds=0.05)))
    pipeline.store.close()
    pipeline.shutdown()


def test_model_that_crashes_its_worker_every_time_fails_after_the_cap(tmp_path, bad_models, good_models):
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(bad_models / "crashes_worker.py", src)
    shutil.copy(good_models / "tiny_conv.py", src)
    out = tmp_path / "run"
    outcome, rec = run(make_cfg(out, [src], max_attempts=2))
    assert statuses(out) == {"crashes_worker": "failed", "tiny_conv": "done"}
    _, records = load_snapshot(out)
    crash = next(r for r in records if r["name"] == "crashes_worker")
    assert crash["attempts"] == 2
    assert crash["error"]["stage"] == "crash"
    retries = [e for e in rec.of(Recovery) if e.action == "retry" and e.target == "crashes_worker"]
    assert len(retries) == 1
    assert reports(out)["crashes_worker"]["valid"] is False


def test_skip_by_name(tmp_path, good_models):
    out = tmp_path / "run"
    control = Control()
    control.skip("wide_conv")
    run(make_cfg(out, [good_models]), control)
    assert statuses(out) == {"tiny_conv": "done", "wide_conv": "skipped"}
    assert "wide_conv" not in reports(out)


class WatchedControl(Control):
    """A real Control that counts the times the pipeline asked to go on and was held by the pause."""

    def __init__(self) -> None:
        super().__init__()
        self.held = 0

    def wait_while_paused(self, timeout: float | None = None) -> bool:
        running = super().wait_while_paused(timeout)
        self.held += not running
        return running


def test_pause_holds_the_run_and_resume_finishes_it(tmp_path, good_models):
    out = tmp_path / "run"
    control = WatchedControl()
    control.pause()
    rec = RecordingReporter()
    pipeline = build_pipeline(make_cfg(out, [good_models], include=("tiny_conv",)))
    thread = threading.Thread(target=pipeline.run, args=(rec, control))
    thread.start()
    deadline = time.monotonic() + 120
    while control.held < 2:  # the conversion loop came to the pause twice and was held each time
        assert thread.is_alive() and time.monotonic() < deadline, "the run never reached the pause"
        time.sleep(0.02)
    assert rec.of(StageStarted) == []
    control.resume()
    thread.join(120)
    pipeline.store.close()
    assert not thread.is_alive()
    assert statuses(out) == {"tiny_conv": "done"}


def test_control_file_from_another_process_stops_the_run(tmp_path, good_models):
    out = tmp_path / "run"
    control = Control()
    rec = RecordingReporter()
    pipeline = build_pipeline(make_cfg(out, [good_models]))
    thread = threading.Thread(target=pipeline.run, args=(rec, control))
    thread.start()
    deadline = time.monotonic() + 120
    while not rec.of(StageStarted):
        assert time.monotonic() < deadline, "no stage started within 120 s"
        time.sleep(0.05)
    ControlChannel(out).send("stop_now")
    thread.join(60)
    pipeline.store.close()
    assert not thread.is_alive()
    assert [e.action for e in rec.of(RunControl)][:1] == ["stop_now"]
    assert "converting" not in statuses(out).values()


def test_reports_hold_measured_values_not_placeholders(tmp_path, good_models):
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(good_models / "tiny_conv.py", src)
    shutil.copy(REPO / "sample_models" / "mnist_lenet.py", src)
    out = tmp_path / "run"
    run(make_cfg(out, [src]))
    reps = reports(out)
    a, b = reps["tiny_conv"], reps["mnist_lenet"]
    assert a["valid"] and b["valid"]
    assert a["duration"] != b["duration"]
    assert (a["in_dim_1"], a["in_dim_3"]) == (32, 3) and (b["in_dim_1"], b["in_dim_3"]) == (28, 1)
    assert a["model"]["sha256"] != b["model"]["sha256"]
    assert a["conversion"]["artifact_sha256"] != b["conversion"]["artifact_sha256"]
    assert a["conversion"]["validation"]["strength"] == "strong"
    assert "hugetlb=1" in a["benchmark"]["huge_pages"]["glibc_tunables"]
    import os
    import platform

    assert platform.release() in a["os_version"]
    assert a["device_analytics"]["cpu_info"]["cpu_cores"] == os.cpu_count()
    total_kb = int(next(line.split()[1] for line in open("/proc/meminfo") if line.startswith("MemTotal")))
    assert a["total_ram_kb"] == total_kb
    assert 0 < a["available_ram_kb"] <= total_kb
    assert a["benchmark"]["samples_ns"] and len(set(a["benchmark"]["samples_ns"])) > 1


INDEPENDENT = """
import sys, time, statistics, numpy as np
from ai_edge_litert.interpreter import Interpreter
it = Interpreter(model_path=sys.argv[1], num_threads=1)
it.allocate_tensors()
d = it.get_input_details()[0]
it.set_tensor(d["index"], np.random.default_rng(1).standard_normal(d["shape"]).astype(np.float32))
for _ in range(20):
    it.invoke()
samples = []
for _ in range(400):
    t0 = time.perf_counter_ns(); it.invoke(); samples.append(time.perf_counter_ns() - t0)
print(statistics.median(samples))
"""


def test_report_median_agrees_with_an_independent_measurement(tmp_path, good_models):
    out = tmp_path / "run"
    run(make_cfg(out, [good_models], include=("wide_conv",), keep_artifacts="all",
                 bench=BenchSettings(warmup=20, runs=400, min_seconds=0.5)))
    report = reports(out)["wide_conv"]
    ours = report["benchmark"]["stats"]["median_ns"]
    cpus = report["benchmark"]["cpu_affinity"]
    tflite = out / "artifacts" / "wide_conv.tflite"
    cmd = [sys.executable, "-c", INDEPENDENT, str(tflite)]
    if cpus:
        cmd = ["taskset", "-c", ",".join(map(str, cpus)), *cmd] if shutil.which("taskset") else cmd
    theirs = [float(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout) for _ in range(3)]
    best = min(theirs, key=lambda t: abs(t - ours))
    assert abs(ours - best) / best < 0.15, (ours, theirs)


def test_a_resumed_model_is_not_benchmarked_again_where_it_already_finished(tmp_path, good_models):
    from nnlite_tui.core.convert.converter import Converter
    from nnlite_tui.core.devices.local import LocalDevice
    from nnlite_tui.core.run.pipeline import Pipeline
    from nnlite_tui.core.run.setup import open_run
    from nnlite_tui.core.sources.discover import discover

    out = tmp_path / "run"
    cfg = make_cfg(out, [good_models], include=("tiny_conv",))
    specs = discover(cfg.sources, include=cfg.include)
    store = open_run(cfg, specs)
    # A kill came after the model finished on "host" and before "host-b" measured it.
    done_report = out / "reports" / "tiny_conv__host__xnnpack.json"
    done_report.parent.mkdir(parents=True)
    done_report.write_text('{"written": "before the kill"}')
    store.add_models([{"name": "tiny_conv", "spec": specs[0].to_dict()}])
    store.transition("tiny_conv", "benchmarking", attempts=1, devices={"host": {
        "status": "done", "attempts": 1, "report": str(done_report), "median_ms": 1.0, "device": "host"}})
    pipeline = Pipeline(cfg, specs, store, Converter(cfg.convert, log_dir=out / "logs", n_workers=1),
                        [LocalDevice("host"), LocalDevice("host-b")])
    rec = RecordingReporter()
    try:
        pipeline.run(rec, Control())
    finally:
        store.close()
    assert done_report.read_text() == '{"written": "before the kill"}'
    benchmarked = [e.device for e in rec.of(StageStarted) if e.stage == "benchmark"]
    assert set(benchmarked) == {"host-b"} and cfg.rounds <= len(benchmarked) <= cfg.max_rounds
    assert statuses(out) == {"tiny_conv": "done"}
    assert (out / "reports" / "tiny_conv__host-b__xnnpack.json").exists()
