"""`nnlite compare BEFORE AFTER --remeasure` on two real runs: both sides timed again, resumed after kill -9."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time

import pytest

from nnlite_tui.core.report.remeasure_judge import FASTER, SLOWER, WITHIN_NOISE, judge_pairs, side_order

from .runs import REPO, derive_run, nnlite


def _lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_remeasure_times_both_sides_again_and_resumes_after_kill_9(real_runs, tmp_path):
    run_a, run_b = real_runs
    out = tmp_path / "rm"
    args = ["compare", str(run_a), str(run_b), "--remeasure", "--rounds", "2", "--min-seconds", "0.05",
            "--runs", "5", "--warmup", "1", "--out", str(out)]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    first = subprocess.Popen([sys.executable, "-m", "nnlite_tui", *args], cwd=REPO, env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 240
    while not _lines(out / "rounds.jsonl") and first.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    os.killpg(first.pid, signal.SIGKILL)  # the session's benchmark process goes with it
    first.wait()
    killed_at = len(_lines(out / "rounds.jsonl"))
    assert killed_at >= 1

    proc = nnlite(*args)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    records = _lines(out / "rounds.jsonl")
    slots = {(r["unit"], r["slot"]) for r in records}
    units = {r["unit"] for r in records}
    assert {u.split("|")[0] for u in units} == {"tiny_conv", "wide_conv"}  # valid in both runs (uses_topk is not)
    assert len(slots) == len(records) == 2 * 2 * len(units)  # nothing done twice, nothing lost by the kill
    for unit in units:  # ABBA in the drawn order
        mine = sorted((r for r in records if r["unit"] == unit), key=lambda r: r["slot"])
        assert [r["side"] for r in mine] == side_order(2, unit, 0)
    assert "re-measured side by side on host" in proc.stdout and "fewer than 5 pairs" in proc.stdout
    result = json.loads((out / "remeasure.json").read_text())
    assert result["remeasured"] is True and result["device"]["serial"] == "host"
    for unit in result["units"]:
        mine = [r for r in records if r["unit"].startswith(unit["model"] + "|")]
        a = [r["median_ns"] for r in sorted(mine, key=lambda r: r["pair"]) if r["side"] == "A"]
        b = [r["median_ns"] for r in sorted(mine, key=lambda r: r["pair"]) if r["side"] == "B"]
        expected = math.exp(sum(math.log(y / x) for x, y in zip(a, b)) / len(a))
        assert unit["ratio"] == pytest.approx(expected)
        assert unit["ci"][0] <= unit["ratio"] <= unit["ci"][1] and unit["change"] == WITHIN_NOISE


def test_remeasure_names_the_artifacts_it_cannot_find(real_runs, tmp_path):
    run_a, run_b = real_runs

    def elsewhere(name: str, report: dict) -> None:
        if report.get("valid"):
            report["conversion"]["key"] = "0" * 64
            report["conversion"]["artifact_sha256"] = "1" * 64

    moved = derive_run(run_b, tmp_path / "moved", elsewhere)
    proc = nnlite("compare", str(run_a), str(moved), "--remeasure", "--rounds", "2", "--out", str(tmp_path / "rm"))
    assert proc.returncode == 0, proc.stderr
    assert "missing artifact: tiny_conv: after: not in" in proc.stderr
    assert "nor in the conversion cache" in proc.stderr and "key 000000000000" in proc.stderr
    assert "missing artifact (not re-measured): wide_conv: after" in proc.stdout
    assert not (tmp_path / "rm" / "rounds.jsonl").exists()


def test_paired_verdicts_on_hand_made_rounds():
    before = [10.0, 10.4, 9.8, 10.1, 10.3, 9.9]
    drift = [1.0, 1.2, 0.9, 1.18, 1.05, 0.95]  # the device moves, both sides alike
    assert judge_pairs([b * d for b, d in zip(before, drift)],
                       [b * d * 1.01 for b, d in zip(before, drift)], 0.10).change == WITHIN_NOISE
    slower = judge_pairs([b * d for b, d in zip(before, drift)], [b * d * 1.3 for b, d in zip(before, drift)], 0.10)
    assert slower.change == SLOWER and slower.p_value == 1 / 64 and slower.ratio == pytest.approx(1.3)
    assert judge_pairs(before, [b / 1.3 for b in before], 0.10).change == FASTER
    # a 1.05x change is within the 10% band: never a verdict either way
    assert judge_pairs(before, [b * 1.05 for b in before], 0.10).change == WITHIN_NOISE
    assert judge_pairs(before[:4], [b * 1.3 for b in before[:4]], 0.10).change == WITHIN_NOISE  # 4 pairs: p >= 1/16
    orders = {tuple(side_order(2, f"unit{i}", 0)) for i in range(20)}
    assert orders == {("A", "B", "B", "A"), ("B", "A", "A", "B")}
