"""Rounds: a unit timed in fresh processes, judged by the spread between them, resumed mid-rounds."""

from __future__ import annotations

import json
import math
import os
import signal
import statistics
import subprocess
import sys
import time

import pytest

from nnlite_tui.core.bench.rounds import ROUND_GAP_S, Round, judge, per_round, t_interval
from nnlite_tui.core.bench.settings import BenchSettings
from nnlite_tui.core.events import ReferenceTimed, RoundFinished
from nnlite_tui.core.report.compare import FASTER, SLOWER, WITHIN_NOISE, classify_rounds, rounds_ratio
from tests.conftest import FIXTURES
from tests.core.test_pipeline import make_cfg, reports, run


def _round(index: int, median: float, **kw) -> Round:
    return Round(index=index, started_at=float(index), seconds=1.0, median_ns=median, stats={"median_ns": median},
                 **kw)


def test_the_timed_budget_is_split_across_rounds_and_the_warmup_count_is_not():
    settings = BenchSettings(warmup=5, runs=50, min_seconds=1.0, max_runs=10_000, max_seconds=60, warmup_seconds=0.5)
    one = per_round(settings, 3)
    assert (one.runs, one.max_runs, one.warmup) == (17, 3334, 5)
    assert (one.min_seconds, one.max_seconds, one.warmup_seconds) == pytest.approx((1 / 3, 20.0, 0.5 / 3))
    assert per_round(settings, 1) == settings


def test_interval_is_students_t_on_the_log_medians():
    medians = [100.0, 110.0, 105.0]
    logs = [math.log(m) for m in medians]
    mean = sum(logs) / 3
    sd = math.sqrt(sum((x - mean) ** 2 for x in logs) / 2)
    half = 4.302652729911275 * sd / math.sqrt(3)  # t(0.975, 2 degrees of freedom), from a table
    low, high = t_interval(medians)
    assert (low, high) == pytest.approx((math.exp(mean - half), math.exp(mean + half)), rel=1e-9)
    assert t_interval([100.0]) is None


def test_stability_reasons_each_from_a_hand_made_case():
    assert judge([_round(1, 100), _round(2, 101), _round(3, 99)]).stable
    spread = judge([_round(1, 100), _round(2, 130), _round(3, 80)])
    assert not spread.stable and any("spread" in r for r in spread.reasons)
    outlier = judge([_round(1, 100), _round(2, 100), _round(3, 100), _round(4, 160)])
    assert any("round 4 is 60% off" in r for r in outlier.reasons)
    coarse = judge([_round(i, 5000, tick_ns=1000.0) for i in (1, 2, 3)])
    assert not coarse.stable and any("clock" in r for r in coarse.reasons)
    drift = judge([_round(1, 100, reference={"at": 1.0, "median_ns": 50}), _round(2, 100),
                   _round(3, 100, reference={"at": 9.0, "median_ns": 60})])
    assert any("reference model moved +20%" in r for r in drift.reasons)
    assert judge([_round(1, 100)]).rounds == 1 and judge([_round(1, 100)]).interval is None


def test_a_change_counts_only_beyond_the_band_and_with_the_rank_test():
    before = [100.0, 102.0, 99.0]
    ratio, ci, p = rounds_ratio(before, [130.0, 131.0, 128.0])
    assert ratio == pytest.approx(1.3, rel=0.02) and ci[0] > 1.1 and p == pytest.approx(0.05)
    assert classify_rounds(ci, p, 0.10) == SLOWER
    ratio, ci, p = rounds_ratio(before, [77.0, 76.0, 78.0])
    assert classify_rounds(ci, p, 0.10) == FASTER
    # Overlapping rounds: whatever the interval says, the rank test does not agree.
    ratio, ci, p = rounds_ratio(before, [101.0, 98.0, 140.0])
    assert p > 0.05 and classify_rounds(ci, p, 0.10) == WITHIN_NOISE
    # A real 3% change on quiet rounds is seen as a change, but it is inside the 10% band.
    ratio, ci, p = rounds_ratio(before, [103.0, 105.0, 102.0])
    assert classify_rounds(ci, p, 0.10) == WITHIN_NOISE


def test_rounds_are_apart_record_the_reference_and_leave_no_round_files(tmp_path, good_models):
    out = tmp_path / "run"
    outcome, rec = run(make_cfg(out, [good_models], include=("tiny_conv", "wide_conv"), rounds=3))
    assert outcome.counts.get("done") == 2
    ends = {}
    for e in rec.of(RoundFinished):
        ends.setdefault(e.model, []).append((e.round, e.ts))
    for model, seen in ends.items():
        # Three rounds, more (up to --max-rounds) when the rounds disagreed on this busy machine.
        assert [r for r, _ in seen] == list(range(1, len(seen) + 1)) and 3 <= len(seen) <= 5, (model, seen)
        # A round ends at least the gap plus its own length after the unit's previous round ended.
        assert all(b - a >= ROUND_GAP_S for (_, a), (_, b) in zip(seen, seen[1:])), (model, seen)
    references = rec.of(ReferenceTimed)
    assert references and references[0].median_ms > 0
    for name, report in reports(out).items():
        bench = report["benchmark"]
        medians = [r["median_ns"] for r in bench["rounds"]]
        n = len(medians)
        assert [r["index"] for r in bench["rounds"]] == list(range(1, n + 1))
        assert report["duration"] == round(statistics.median(medians))
        low, high = bench["interval"]["low_ns"], bench["interval"]["high_ns"]
        assert low <= math.exp(sum(map(math.log, medians)) / n) <= high
        assert bench["stability"]["verdict"] in ("stable", "unstable")
        assert all(r["reference"]["median_ns"] == pytest.approx(references[0].median_ms * 1e6)
                   for r in bench["rounds"][:1])
        assert bench["settings"]["rounds"] == 3 and bench["settings"]["per_round"]["runs"] == 7
    assert not any((out / "rounds").rglob("*.json"))


def test_kill_9_between_rounds_keeps_the_finished_rounds(tmp_path):
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "nnlite_tui", "run", str(FIXTURES / "good_models"), "--include", "tiny_conv",
           "--out", str(out), "--headless", "--rounds", "3", "--runs", "6", "--min-seconds", "6", "--warmup", "1",
           "--workers", "1"]
    env = {**os.environ, "NNLITE_ROUND_GAP_S": "1.0"}  # the product's gap: the kill lands between rounds
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                            env=env)
    first = out / "rounds" / "tiny_conv__host__xnnpack" / "1.json"
    deadline = time.monotonic() + 300
    while not first.exists():
        assert proc.poll() is None and time.monotonic() < deadline, "round 1 did not finish"
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)  # before round 2 has ended (rounds are ROUND_GAP_S apart)
    killed_at = time.time()
    proc.wait()
    kept = json.loads(first.read_text())
    assert not (out / "reports" / "tiny_conv__host__xnnpack.json").exists()
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    assert again.returncode == 0, again.stderr[-2000:]
    report = json.loads((out / "reports" / "tiny_conv__host__xnnpack.json").read_text())
    rounds = report["benchmark"]["rounds"]
    assert [r["index"] for r in rounds] == list(range(1, len(rounds) + 1)) and len(rounds) >= 3
    assert rounds[0]["started_at"] == kept["started_at"]  # the round timed before the kill, not a new one
    assert rounds[0]["median_ns"] == kept["block"]["stats"]["median_ns"]
    # Round 2 was timed by the second run. (Not "a second after round 1": max_runs can end a round of
    # a tiny model early, and a quick machine restarts the run in well under a second.)
    assert rounds[1]["started_at"] > killed_at


class ScriptedDevice:
    """A device whose benchmark answers with scripted round medians: the one way to make a unit's rounds
    disagree on purpose (a real device's drift cannot be ordered). Its reference figures stay put."""

    kind = "phone"

    def __init__(self, medians_ns: list[float]):
        self.serial = "scripted"
        self.medians = list(medians_ns)
        self.rounds = 0

    def _block(self, median: float) -> dict:
        from nnlite_tui.core.bench.stats import summarize

        samples = [median - 2, median, median + 2] * 10
        return {"valid": True, "stats": summarize(samples), "samples_ns": samples, "timed_seconds": 0.01,
                "backend_used": "xnnpack"}

    def benchmark(self, artifact, settings, run_id, cancel=None, progress=None):
        if artifact.path.endswith("reference.tflite"):
            return self._block(50_000.0)
        self.rounds += 1
        return self._block(self.medians.pop(0))

    def prepare(self, reporter):
        pass

    def info(self):
        return {"serial": self.serial, "kind": self.kind, "model": "scripted"}

    def snapshot(self):
        return {"max_temperature_c": None, "memory": {}}

    def ready_for_benchmark(self, cancel=None):
        pass

    def recover(self, level, reporter):
        return True

    def pin_cpus(self, cpus):
        pass

    def kill_children(self):
        pass

    def close(self):
        pass


def test_an_unstable_unit_gets_more_rounds_and_stays_marked_unstable(tmp_path, good_models):
    from nnlite_tui.core.convert.converter import Converter
    from nnlite_tui.core.events import ModelStatus, RecordingReporter
    from nnlite_tui.core.run.control import Control
    from nnlite_tui.core.run.pipeline import Pipeline
    from nnlite_tui.core.run.setup import open_run
    from nnlite_tui.core.sources.discover import discover

    out = tmp_path / "run"
    cfg = make_cfg(out, [good_models], include=("tiny_conv",), rounds=3, max_rounds=5)
    specs = discover(cfg.sources, include=cfg.include)
    store = open_run(cfg, specs)
    device = ScriptedDevice([100_000.0, 101_000.0, 160_000.0, 100_500.0, 161_000.0])
    pipeline = Pipeline(cfg, specs, store, Converter(cfg.convert, log_dir=out / "logs", n_workers=1), [device])
    rec = RecordingReporter()
    try:
        pipeline.run(rec, Control())
    finally:
        store.close()
    assert device.rounds == 5  # three, then one more at a time while unstable, up to --max-rounds
    assert [e.rounds for e in rec.of(RoundFinished)] == [3, 3, 4, 5, 5]
    report = reports(out)["tiny_conv"]
    stability = report["benchmark"]["stability"]
    assert stability["verdict"] == "unstable" and stability["rounds"] == 5
    assert any("off the median of the others" in r for r in stability["reasons"])
    assert report["duration"] == 101_000
    done = [e for e in rec.of(ModelStatus) if e.status == "done"]
    assert done and "unstable" in done[-1].flags


def test_a_stable_unit_gets_exactly_its_rounds(tmp_path, good_models):
    from nnlite_tui.core.convert.converter import Converter
    from nnlite_tui.core.events import RecordingReporter
    from nnlite_tui.core.run.control import Control
    from nnlite_tui.core.run.pipeline import Pipeline
    from nnlite_tui.core.run.setup import open_run
    from nnlite_tui.core.sources.discover import discover

    out = tmp_path / "run"
    cfg = make_cfg(out, [good_models], include=("tiny_conv",), rounds=3, max_rounds=5)
    specs = discover(cfg.sources, include=cfg.include)
    store = open_run(cfg, specs)
    device = ScriptedDevice([100_000.0, 101_000.0, 100_500.0, 1.0, 1.0])
    pipeline = Pipeline(cfg, specs, store, Converter(cfg.convert, log_dir=out / "logs", n_workers=1), [device])
    try:
        pipeline.run(RecordingReporter(), Control())
    finally:
        store.close()
    assert device.rounds == 3
    assert reports(out)["tiny_conv"]["benchmark"]["stability"]["verdict"] == "stable"
