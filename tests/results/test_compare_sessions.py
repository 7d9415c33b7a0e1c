"""Verdicts across sessions on hand-made cases: the host's move, the between-session spread, the history."""

from __future__ import annotations

import json
import math
import os

import pytest

from nnlite_tui.core.bench import reference_history as history
from nnlite_tui.core.bench import reference_record
from nnlite_tui.core.bench.reference import ReferenceClock
from nnlite_tui.core.bench.rounds import sessions_interval, t_interval
from nnlite_tui.core.report.compare import (FASTER, SLOWER, WITHIN_NOISE, across_sessions, compare_pair,
                                            compare_runs)
from nnlite_tui.core.report.compare_sessions import SINGLE_SESSION, TWO_SESSIONS, HostMove, host_moves, widen
from nnlite_tui.core.report.rows import ResultRow
from nnlite_tui.core.results import Report

BEFORE = [10.0e6, 10.1e6, 9.9e6]


def row(medians: list[float]) -> ResultRow:
    return ResultRow(model="m", family="f", task=None, device="host", device_label="host", backend="xnnpack",
                     precision="fp32", status="done", round_medians_ns=medians,
                     headline_median_ns=sorted(medians)[len(medians) // 2])


def reports(sd: float) -> tuple[Report, Report]:
    report = Report.model_validate({"model_name": "m", "benchmark": {
        "between_session": {"sd_log": sd, "sessions": 5, "source": "hand-made"}}})
    return report, report


def test_a_host_that_moved_1_18x_does_not_make_identical_models_slower():
    after = [m * 1.18 for m in BEFORE]
    alone = compare_pair(row(BEFORE), row(after), 0.10)
    assert alone.change == SLOWER  # one session's rounds alone would call it
    host = HostMove("host", {"compute": 1.02, "memory": 1.18}, {"compute": 0.01, "memory": 0.02})
    pair = across_sessions(alone, host, reports(0.02), 0.10)
    assert pair.change == WITHIN_NOISE and pair.sessions == TWO_SESSIONS
    assert pair.ci_within is not None and pair.ci[0] < pair.ci_within[0] and pair.ci[1] > pair.ci_within[1]
    assert host.factor == pytest.approx(1.18 * math.exp(0.02))
    assert "host 1.18x slower between these runs" in host.text()
    # the same move the other way does not make them faster either
    faster = across_sessions(compare_pair(row(BEFORE), row([m / 1.18 for m in BEFORE]), 0.10),
                             HostMove("host", {"memory": 1 / 1.18}, {"memory": 0.02}), reports(0.02), 0.10)
    assert faster.change == WITHIN_NOISE


def test_a_1_3x_slowdown_beyond_the_drift_is_slower_and_a_speedup_faster():
    host = HostMove("host", {"memory": 1.18}, {"memory": 0.02})
    slower = across_sessions(compare_pair(row(BEFORE), row([m * 1.18 * 1.3 for m in BEFORE]), 0.10), host,
                             reports(0.02), 0.10)
    assert slower.change == SLOWER
    faster = across_sessions(compare_pair(row(BEFORE), row([m * 1.18 / 2.0 for m in BEFORE]), 0.10), host,
                             reports(0.02), 0.10)
    assert faster.change == FASTER


def test_the_between_session_spread_widens_the_interval_on_the_log_scale():
    lo, hi = widen(1.0, (0.98, 1.02), 0.1, 0.1)
    half = math.hypot(math.log(1.02), 1.959963984540054 * math.sqrt(0.02))
    assert lo == pytest.approx(math.exp(-half), rel=1e-3) and hi == pytest.approx(math.exp(half), rel=1e-3)
    assert widen(1.0, (0.98, 1.02), 0.0, 0.0) == pytest.approx((0.98, 1.02))
    # no spread known for either side: the stated default for both
    assert widen(1.0, (1.0, 1.0), None, None)[1] == pytest.approx(math.exp(1.959963984540054 * 0.11 * math.sqrt(2)))


def test_the_report_interval_for_the_next_session():
    medians = [10.0, 10.5, 9.8]
    assert sessions_interval(medians, history.BetweenSession(0.0, 3, "x"))["low_ns"] == pytest.approx(
        t_interval(medians)[0])
    one = sessions_interval([10.0], history.BetweenSession(0.1, 3, "x"))
    assert one["low_ns"] == pytest.approx(10 * math.exp(-1.959963984540054 * 0.1))
    assert one["high_ns"] == pytest.approx(10 * math.exp(1.959963984540054 * 0.1))


def test_the_device_history_keeps_sessions_and_estimates_their_spread(tmp_path):
    path = history.history_path(tmp_path / "cache")
    assert path.parent == tmp_path
    assert history.between_session([]).sessions == 0  # the default, with its source
    assert "default" in history.between_session([]).source
    medians = [10.0, 12.0, 9.0, 11.0]
    for i, m in enumerate(medians):
        history.record_session(path, "host", f"s{i}", "run", started=i, updated=i,
                               references={"memory": {"median_ns": m * 1e6, "figures": 2},
                                           "compute": {"median_ns": 1e5, "figures": 2}})
        if i < 2:  # fewer than MIN_SESSIONS: still the default
            assert history.between_session(history.load(path)["host"]).sessions == 0
    history.record_session(path, "host", "s3", "run", started=3, updated=4,  # the same session again: replaced
                           references={"memory": {"median_ns": 11e6, "figures": 3}})
    sessions = history.load(path)["host"]
    assert [s["session"] for s in sessions] == ["s0", "s1", "s2", "s3"]
    est = history.between_session(sessions)
    logs = [math.log(m) for m in medians]
    mean = sum(logs) / 4
    assert est.sd_log == pytest.approx(math.sqrt(sum((x - mean) ** 2 for x in logs) / 3))
    assert est.sessions == 4 and "memory reference" in est.source  # the larger of the two references
    path.write_text("[1]")
    with pytest.raises(ValueError, match="device-history.json: not a device history"):
        history.load(path)


def _run_with_references(run, cache, figures: dict[str, list[float]], clock: ReferenceClock | None = None):
    (run / "reports").mkdir(parents=True)
    clock = clock or ReferenceClock(started=0.0)
    for name, values in figures.items():
        for i, v in enumerate(values):
            clock.figure(name, 1000.0 + i, v)
    reference_record.keep(run, cache, "host", "run", clock)
    return clock


def test_compare_reads_both_runs_references(tmp_path):
    cache = tmp_path / "cache"
    _run_with_references(tmp_path / "a", cache, {"memory": [10e6, 10.1e6], "compute": [1e5, 1e5]})
    _run_with_references(tmp_path / "b", cache, {"memory": [11.8e6, 11.9e6], "compute": [1e5, 1.01e5]})
    move = host_moves(tmp_path / "a", tmp_path / "b")["host"]
    assert move.ratios["memory"] == pytest.approx(11.85 / 10.05) and not move.same_session
    assert move.noise["memory"] > 0
    # a copy of a run holds the same session: nothing moved between them
    clock = _run_with_references(tmp_path / "c", cache, {"memory": [10e6]})
    (tmp_path / "d" / "reports").mkdir(parents=True)
    (tmp_path / "d" / "references.json").write_text((tmp_path / "c" / "references.json").read_text())
    assert host_moves(tmp_path / "c", tmp_path / "d")["host"].same_session
    assert clock.session_id in json.loads((tmp_path / "c" / "references.json").read_text())["devices"]["host"]
    same = compare_runs(tmp_path / "c", tmp_path / "d")
    assert same.hosts["host"].same_session and not same.pairs
    # a run of an earlier release has no references.json
    (tmp_path / "old" / "reports").mkdir(parents=True)
    assert host_moves(tmp_path / "old", tmp_path / "a") is None
    assert compare_runs(tmp_path / "old", tmp_path / "a").hosts is None
    assert SINGLE_SESSION == "single session"


def test_a_real_run_keeps_both_references_in_its_file_and_the_device_history(tmp_path):
    from .runs import FIXTURES, nnlite

    env = os.environ.copy()
    os.environ["NNLITE_REFERENCES"] = "compute,memory"
    try:
        proc = nnlite("run", str(FIXTURES / "good_models"), "--include", "tiny_conv", "--out", str(tmp_path / "run"),
                      "--cache-dir", str(tmp_path / "cache"), "--headless", "--runs", "5", "--min-seconds", "0.05")
    finally:
        os.environ.clear()
        os.environ.update(env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    refs = reference_record.run_references(tmp_path / "run")["host"]
    assert set(refs) == {"compute", "memory"}
    # the memory reference is memory-bound: 128 MiB per inference takes far longer than the 0.1 ms compute one
    # (beside the suite's other worker the compute one doubles; 10x still tells the two kinds apart)
    assert refs["memory"]["median_ns"] > 10 * refs["compute"]["median_ns"]
    sessions = history.load(history.history_path(tmp_path / "cache"))["host"]
    assert len(sessions) == 1 and set(sessions[0]["references"]) == {"compute", "memory"}
    report = json.loads(next((tmp_path / "run" / "reports").glob("tiny_conv__*.json")).read_text())["benchmark"]
    assert report["between_session"]["sessions"] == 0 and "default" in report["between_session"]["source"]
    low, high = report["interval_sessions"]["low_ns"], report["interval_sessions"]["high_ns"]
    assert low < report["interval"]["low_ns"] <= report["interval"]["high_ns"] < high
