"""`nnlite compare` on real runs: matching, the bootstrap interval, what it flags and its exit code."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest

import math

from nnlite_tui.core.bench.rounds import DEFAULT_MAX_ROUNDS
from nnlite_tui.core.report.compare import (BROKEN, FASTER, SINGLE_ROUND, SLOWER, UNCERTAIN, UNCHANGED, WITHIN_NOISE,
                                            bootstrap_ratio_ci, classify, classify_rounds, compare_runs)
from .runs import derive_run, nnlite, scale


def scaled(factor: float, model: str = "tiny_conv"):
    """The same run with `model` made `factor` times slower in every round."""
    def edit(name: str, report: dict) -> None:
        if name.startswith(model + "__"):
            scale(report, factor)
    return edit


def single_round(name: str, report: dict) -> None:
    """A report as an earlier release wrote it: one round, no rounds block."""
    if not report["valid"]:
        return
    for key in ("rounds", "median_ns", "interval", "stability"):
        report["benchmark"].pop(key, None)
    report["duration"] = int(report["benchmark"]["stats"]["median_ns"])


def test_two_real_runs_match_every_model_and_give_an_interval_around_their_ratio(real_runs):
    run_a, run_b = real_runs
    cmp = compare_runs(run_a, run_b)
    by_model = {p.before.model: p for p in cmp.pairs}
    assert set(by_model) == {"tiny_conv", "wide_conv", "uses_topk"}
    assert by_model["uses_topk"].change == "failed"  # failed in both: a result, not a regression
    for name in ("tiny_conv", "wide_conv"):
        pair = by_model[name]
        before = [r["median_ns"] for r in _report(run_a, name)["benchmark"]["rounds"]]
        after = [r["median_ns"] for r in _report(run_b, name)["benchmark"]["rounds"]]
        # Three rounds, and up to DEFAULT_MAX_ROUNDS when a busy host made the unit unstable.
        assert 3 <= len(before) <= DEFAULT_MAX_ROUNDS and 3 <= len(after) <= DEFAULT_MAX_ROUNDS
        geo = math.exp(sum(map(math.log, after)) / len(after) - sum(map(math.log, before)) / len(before))
        assert pair.ratio == pytest.approx(geo) and pair.basis == "rounds"
        lo, hi = pair.ci
        assert 0 < lo <= pair.ratio <= hi
        assert pair.change == classify_rounds(pair.ci, pair.p_value, 0.10)
    assert not cmp.only_before and not cmp.only_after


def _report(run, model: str) -> dict:
    return json.loads(next((run / "reports").glob(f"{model}__*.json")).read_text())


def test_reports_of_an_earlier_release_are_compared_as_single_rounds(real_runs, tmp_path):
    run_a, run_b = real_runs
    old = derive_run(run_a, tmp_path / "old", single_round)
    cmp = compare_runs(old, run_b)
    tiny = next(p for p in cmp.pairs if p.before.model == "tiny_conv")
    assert tiny.basis == SINGLE_ROUND and tiny.change == classify(tiny.ci, 0.10)
    assert tiny.ratio == pytest.approx(tiny.after.median_ns / tiny.before.median_ns)
    assert "(single round)" in nnlite("compare", str(old), str(run_b)).stdout


def clear_factor(run, model: str = "tiny_conv") -> float:
    """A slow-down no spread of the run's own rounds can hide: 1.5 times the square of their widest
    ratio (a busy host spreads a tiny model's rounds by half or more, which hides a plain 1.5)."""
    rounds = [r["median_ns"] for r in _report(run, model)["benchmark"]["rounds"]]
    return 1.5 * (max(rounds) / min(rounds)) ** 2


def test_a_slower_copy_is_flagged_and_fails_only_with_the_flag(real_runs, tmp_path):
    _, run_b = real_runs
    factor = clear_factor(run_b)
    slower = derive_run(run_b, tmp_path / "slower", scaled(factor))
    cmp = compare_runs(run_b, slower)
    changes = {p.before.model: p.change for p in cmp.pairs}
    assert changes["tiny_conv"] == SLOWER
    assert changes["wide_conv"] == WITHIN_NOISE  # identical rounds: an interval around 1
    tiny = next(p for p in cmp.pairs if p.before.model == "tiny_conv")
    assert tiny.ci[0] > 1.1 and tiny.ratio == pytest.approx(factor, rel=1e-3)
    # Every round slower than every round before: the exact rank test's smallest p.
    n = len(_report(run_b, "tiny_conv")["benchmark"]["rounds"])
    assert tiny.p_value == pytest.approx(1 / math.comb(2 * n, n))

    plain = nnlite("compare", str(run_b), str(slower))
    assert plain.returncode == 0, plain.stderr
    strict = nnlite("compare", str(run_b), str(slower), "--fail-on-regression")
    assert strict.returncode == 6, strict.stdout + strict.stderr
    assert "tiny_conv (slower)" in strict.stderr
    first = [line for line in strict.stdout.splitlines() if "tiny_conv" in line][0]
    assert first.startswith("+") and "slower" in first
    assert "Welch's t on their logarithms" in strict.stdout and "Mann-Whitney" in strict.stdout
    assert "input differs" not in strict.stdout and "settings differ" not in strict.stdout


def test_a_different_input_shape_is_named(real_runs, tmp_path):
    _, run_b = real_runs

    def bigger_input(name: str, report: dict) -> None:
        if name.startswith("tiny_conv__"):
            report["conversion"]["artifact_input_shape"] = [1, 64, 64, 3]
            report["benchmark"]["settings"]["threads"] = 2

    after = derive_run(run_b, tmp_path / "after", bigger_input)
    proc = nnlite("compare", str(run_b), str(after))
    assert proc.returncode == 0, proc.stderr
    assert "input differs: tiny_conv [1, 32, 32, 3] -> [1, 64, 64, 3]" in proc.stdout
    assert "settings differ: threads 1 -> 1, 2" in proc.stdout


def test_faster_and_small_shifts_do_not_fail_and_a_wider_threshold_hides_a_change(real_runs, tmp_path):
    _, run_b = real_runs
    faster = derive_run(run_b, tmp_path / "faster", scaled(1 / clear_factor(run_b)))
    proc = nnlite("compare", str(run_b), str(faster), "--fail-on-regression")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert {p.before.model: p.change for p in compare_runs(run_b, faster).pairs}["tiny_conv"] == FASTER
    nudged = derive_run(run_b, tmp_path / "nudged", scaled(1.03))
    # a real 3% change, but within the threshold: never flagged
    assert {p.before.model: p.change for p in compare_runs(run_b, nudged).pairs}["tiny_conv"] == WITHIN_NOISE
    slower = derive_run(run_b, tmp_path / "slower", scaled(1.5))
    assert nnlite("compare", str(run_b), str(slower), "--threshold", "80", "--fail-on-regression").returncode == 0


def test_a_model_that_breaks_is_a_regression_and_missing_ones_are_listed(real_runs, tmp_path):
    _, run_b = real_runs

    def break_and_drop(name: str, report: dict) -> None:
        if name.startswith("tiny_conv__"):
            report.update(valid=False, error_message="benchmark:invoke: RuntimeError: boom")
            report["error"] = {"stage": "benchmark:invoke", "type": "RuntimeError", "message": "boom"}

    after = derive_run(run_b, tmp_path / "after", break_and_drop)
    (next((after / "reports").glob("wide_conv__*.json"))).unlink()
    cmp = compare_runs(run_b, after)
    assert {p.before.model: p.change for p in cmp.pairs}["tiny_conv"] == BROKEN
    assert [r.model for r in cmp.only_before] == ["wide_conv"] and not cmp.only_after
    proc = nnlite("compare", str(run_b), str(after), "--fail-on-regression")
    assert proc.returncode == 6
    assert "only in before (1):" in proc.stdout and "wide_conv" in proc.stdout.split("only in before")[1]


def test_csv_and_html_formats(real_runs, tmp_path):
    run_a, run_b = real_runs
    proc = nnlite("compare", str(run_a), str(run_b), "--format", "csv")
    assert proc.returncode == 0, proc.stderr
    rows = list(csv.DictReader(io.StringIO(proc.stdout)))
    assert {r["model"] for r in rows} == {"tiny_conv", "wide_conv", "uses_topk"}
    tiny = next(r for r in rows if r["model"] == "tiny_conv")
    # The CSV carries the ratio and its interval at one precision; from rounds the interval is centred
    # on the ratio (of geometric means) in log space, so it holds it.
    low, ratio, high = float(tiny["ci_low"]), float(tiny["ratio"]), float(tiny["ci_high"])
    rounds_a = len(_report(run_a, "tiny_conv")["benchmark"]["rounds"])
    assert low <= ratio <= high and tiny["basis"] == "rounds" and tiny["before_rounds"] == str(rounds_a)
    assert len(tiny["ratio"].split(".")[1]) == len(tiny["ci_low"].split(".")[1]) == 4
    assert next(r for r in rows if r["model"] == "uses_topk")["change"] == "failed"
    out = tmp_path / "cmp.html"
    assert nnlite("compare", str(run_a), str(run_b), "--format", "html", "-o", str(out)).returncode == 0
    page = out.read_text()
    assert '<div id="compare">' in page and "percentile bootstrap" in page
    data = json.loads(re.search(r'id="nnlite-data">(.*?)</script>', page).group(1))
    cols, strings = data["columns"], data["strings"]
    by_model = {m: i for i, m in enumerate(cols["model"])}
    i = by_model["tiny_conv"]  # the page's ratio and interval are the CSV's (both rounded, to 4 digits)
    assert [cols["ratio"][i], cols["low"][i], cols["high"][i]] == pytest.approx([ratio, low, high], rel=1e-3)
    assert strings[cols["change"][by_model["uses_topk"]]] == "failed"


def test_not_a_run_directory_is_a_usage_error(real_runs, tmp_path):
    proc = nnlite("compare", str(real_runs[0]), str(tmp_path))
    assert proc.returncode == 2 and "no reports/ folder and no state.json" in proc.stderr
    broken = derive_run(real_runs[0], tmp_path / "bad", lambda name, report: None)
    next((broken / "reports").glob("*.json")).write_text("{not json")
    proc = nnlite("compare", str(real_runs[0]), str(broken))
    assert proc.returncode == 2 and "unreadable report" in proc.stderr
    next((broken / "reports").glob("*.json")).write_text("[1, 2]")
    proc = nnlite("compare", str(real_runs[0]), str(broken))
    assert proc.returncode == 2 and "not an nnlite report" in proc.stderr


def test_interval_and_classification_on_known_samples():
    before = [100.0 + (i % 7) for i in range(200)]
    lo, hi = bootstrap_ratio_ci(before, [v * 2 for v in before])
    assert lo == pytest.approx(2.0, rel=0.05) and hi == pytest.approx(2.0, rel=0.05)
    assert bootstrap_ratio_ci(before, before) == bootstrap_ratio_ci(before, before)  # a fixed seed
    noisy = [100.0, 300.0] * 3  # six bimodal samples: the median could be almost anything
    lo, hi = bootstrap_ratio_ci(noisy, [v * 1.2 for v in noisy])
    assert lo < 1.1 < hi
    assert classify((lo, hi), 0.10) == UNCERTAIN
    assert classify((0.95, 1.04), 0.10) == UNCHANGED
    assert classify((1.11, 1.3), 0.10) == SLOWER and classify((0.5, 0.89), 0.10) == FASTER
    assert json.dumps(classify((0.9, 1.1), 0.10)) == '"unchanged"'
