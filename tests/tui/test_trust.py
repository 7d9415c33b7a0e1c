"""The detail screen's trust flags, on hand-made reports: what the HTML flags, the console flags."""

from nnlite_tui.core.results import parse_report
from nnlite_tui.tui.screens.detail import report_lines, summary
from nnlite_tui.tui.state import ModelRow
from nnlite_tui.tui.trust import trust_flags


def report(**blocks):
    return parse_report({"model_name": "m", "valid": True, "schema": "nnlite.report", "schema_version": 4, **blocks})


def flags(r):
    return {name: (text, level) for name, text, level in trust_flags(r)}


def test_one_round_with_a_wide_climbing_spread_and_weak_validation_is_flagged():
    climbing = [184e6 + i * 10e6 for i in range(74)]  # 184 ms up to 914 ms, upward all along
    r = report(benchmark={"samples_ns": climbing, "rounds": [{"index": 1, "median_ns": 550e6}]},
               conversion={"validation": {"strength": "weak: the output does not depend on the input"}})
    f = flags(r)
    assert f["validation"] == ("weak: the output does not depend on the input", "warn")
    text, level = f["stability"]
    assert level == "warn" and "samples spread 184-914 ms" in text and "upward drift" in text
    assert f["drift"] == ("not checked (one round)", "warn")
    assert f["throttling"] == ("not recorded", "warn") and f["compute check"] == ("not recorded", "warn")


def test_a_clean_multi_round_report_passes_every_flag():
    r = report(benchmark={"rounds": [{"index": i, "median_ns": 1e6} for i in (1, 2, 3)],
                          "stability": {"verdict": "stable", "reasons": []}},
               conversion={"validation": {"strength": "strong"}, "compute_check": {"verdict": "ok", "ratio": 1.0}},
               conditions={"throttled": False})
    assert all(level == "ok" for _, _, level in trust_flags(r))


def test_flags_come_before_the_numbers_and_a_failure_is_said_once(tmp_path):
    error = "benchmark: AdbError: device offline"
    r = parse_report({"model_name": "m", "valid": False, "error_message": "device offline"})
    text = report_lines(tmp_path / "m.json", r, error).plain
    assert text.splitlines()[1].startswith("valid") and "device offline" not in text and "input" not in text
    assert text.index("valid      ") < text.index("valid no")  # the flag before the figures
    row = ModelRow("m", 0, status="failed", error=error, stages={"benchmark": (False, 1.0, "device offline")})
    assert summary(row, "m").plain.count("device offline") == 1
