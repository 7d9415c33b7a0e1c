"""The ops block checks on hand-made blocks (one broken per check), and blocks of the previous ops
schema read back as the current one by every reader."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from nnlite_tui.core.ops.block import resolved_total
from nnlite_tui.core.ops.block_check import check_block, mark_checked
from nnlite_tui.core.ops.block_versions import read_block

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "runs" / "ops-schema3"


def _row(index, op_type, timing, avg=None, kernels=("Convolution (NHWC, F32) IGEMM",), resolved=3, **extra):
    times = {"avg_us": avg, "median_us": avg, "min_us": avg}
    return {"index": index, "type": op_type, "kernels": list(kernels), "events": len(kernels), "timing": timing,
            "resolved_runs": resolved, **times, **extra}


def good_block() -> dict:
    """A block as the host writes one: a builtin node read 0-1 µs over, two XNNPACK ops, one of them
    below resolution, and a fused PAD."""
    rows = [_row(0, "CONV_2D", "measured", 40.0), _row(1, "GATHER_ND", "measured", 3.0, kernels=("builtin",)),
            _row(2, "RESHAPE", "below_resolution", kernels=("Copy (NC, X32)",), resolved=0, upper_us=1.0),
            _row(3, "PAD", "fused", kernels=(), resolved=0)]
    return {"schema_version": 4, "kernel_mode": "xnnpack", "runs": 3, "runs_kept": 3, "total_us": 50.0,
            "ops_sum_us": 43.0, "unattributed_us": 7.0, "invoke_us": 60.0, "profiler_us": 10.0, "ops": rows}


def broken(change) -> dict:
    block = copy.deepcopy(good_block())
    change(block)
    return block


def test_a_well_formed_block_passes():
    assert check_block(good_block()) == []
    block = mark_checked(good_block())
    assert block["valid"] is True and "invalid_reasons" not in block
    # 1 µs for the total's own reading and 1 for the builtin node; XNNPACK readings round down.
    assert block["sum_tolerance_us"] == pytest.approx(2.003)
    # Up to that much over the total is rounding, and passes.
    within = broken(lambda b: (b["ops"][0].update(avg_us=48.9, median_us=48.9, min_us=48.9),
                               b.update(ops_sum_us=51.9, unattributed_us=-1.9)))
    assert check_block(within) == []


def _set(path, value):
    def change(block):
        target = block
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return change


def _sum_above_total(block):
    # 52.5 µs of ops in a 50 µs run: more than the 2 µs the total's and the node's readings allow
    block["ops"][0].update(avg_us=49.5, median_us=49.5, min_us=49.5)
    block["ops_sum_us"], block["unattributed_us"] = 52.5, -2.5


def _negative_total(block):
    block["total_us"], block["unattributed_us"] = -2.8, -45.8


@pytest.mark.parametrize("change,code,names", [
    (_sum_above_total, "sum_exceeds_total", "52.5"),
    (_negative_total, "negative_total", "total_us -2.8"),
    (_set(["ops", 0, "min_us"], -1.0), "negative_time", "op #0 (CONV_2D) has min_us -1.0"),
    # a below-resolution op given a time: what the half-µs addition did
    (_set(["ops", 2, "avg_us"], 0.5), "time_without_samples", "op #2 (RESHAPE)"),
    # a measured op no run read above 0
    (_set(["ops", 0, "resolved_runs"], 0), "time_without_samples", "op #0 (CONV_2D)"),
    # a fused op (no event) given a time
    (lambda b: b["ops"][3].update(timing="measured", avg_us=1.0, median_us=1.0, min_us=1.0, resolved_runs=3),
     "time_without_samples", "op #3 (PAD)"),
    (_set(["ops", 2, "estimated_us"], 0.4), "unmarked_estimate", "op #2 (RESHAPE)"),
    (lambda b: b["ops"][0].update(estimated_us=40.0, estimate="bytes share"), "estimate_beside_measurement", "op #0"),
    (_set(["ops_sum_us"], 40.0), "sum_mismatch", "43.000"),
    (_set(["unattributed_us"], 0.0), "unattributed_mismatch", "7.000"),
    (_set(["ops", 1, "timing"], "guessed"), "unknown_timing", "op #1 (GATHER_ND)"),
    (_set(["runs_kept"], 0), "no_runs", "runs_kept 0"),
    (_set(["schema_version"], 99), "unknown_schema", "99"),
])
def test_each_broken_check_marks_the_block_invalid_with_its_reason(change, code, names):
    block = mark_checked(broken(change))
    assert block["valid"] is False
    reasons = [r for r in block["invalid_reasons"] if r.startswith(code + ":")]
    assert reasons and names in reasons[0], block["invalid_reasons"]


def test_an_estimate_marked_as_one_on_an_untimed_op_passes():
    block = broken(lambda b: b["ops"][2].update(estimated_us=0.4, estimate="unattributed_us shared by bytes moved"))
    assert check_block(block) == []


def test_an_unresolved_total_is_checked_against_invoke():
    block = broken(lambda b: b.update(total_us=None, unattributed_us=None))
    assert check_block(block) == []
    block["ops_sum_us"] = 63.0
    block["ops"][0].update(avg_us=60.0, median_us=60.0, min_us=60.0)
    assert [r.split(":")[0] for r in check_block(block)] == ["sum_exceeds_total"]
    assert "invoke_us 60.0" in check_block(block)[0]


def test_a_profiler_cost_that_leaves_less_than_the_ops_readings_resolves_no_total():
    assert resolved_total(100.0, 30.0, 71.0, 2.0) == (70.0, None)  # within the rounding: kept
    total, why = resolved_total(100.0, 30.0, 80.0, 2.0)
    assert total is None and "leaves 70.0 µs" in why and "measured sum (80.0 µs)" in why
    total, why = resolved_total(20.0, 25.0, 10.0)
    assert total is None and "not below the profiled run's 20.0 µs" in why
    assert resolved_total(20.0, None) == (20.0, None)


def test_a_block_with_an_error_has_nothing_to_check():
    block = mark_checked({"schema_version": 4, "kernel_mode": "xnnpack", "error": "no profiler", "ops": []})
    assert "valid" not in block and check_block(block) == []


def _fixture_reports() -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((FIXTURE / "reports").glob("*.json"))]


def test_schema3_blocks_read_back_as_their_raw_readings():
    """Schema 3 added half a µs per XNNPACK operator; reading it as schema 4 takes exactly that off."""
    seen = 0
    for report in _fixture_reports():
        for key in ("ops", "ops_builtin"):
            old = report["benchmark"][key]
            assert old["schema_version"] == 3
            new = read_block(old)
            assert new["valid"] and new["upgraded_from"] == 3 and new["schema_version"] == 4
            for before, after in zip(old["ops"], new["ops"]):
                added = 0.5 * sum(1 for k in before["kernels"] if k != "builtin")
                if after["timing"] == "measured":
                    assert after["min_us"] == pytest.approx(before["min_us"] - added, abs=1e-3)
                    assert after["avg_us"] == pytest.approx(before["avg_us"] - added, abs=1e-3)
                else:  # every run read 0: schema 3 wrote exactly the half µs per operator
                    assert after["timing"] == "below_resolution" and before["avg_us"] == pytest.approx(added)
                    assert after["avg_us"] is None and after["upper_us"] == len(before["kernels"])
                    seen += 1
            assert new["ops_sum_us"] == pytest.approx(old["ops_sum_us"] - old["truncation_added_us"], abs=0.01)
            assert new["unattributed_us"] == pytest.approx(new["total_us"] - new["ops_sum_us"], abs=0.002)
    assert seen >= 3  # the fixture's XNNPACK blocks have ops below resolution (pools, reshape, small FCs)


def test_blocks_older_than_schema3_and_bare_lists_read_too():
    v1 = {"schema_version": 1, "kernel_mode": "xnnpack", "total_us": 30.0, "ops": [
        {"index": 0, "type": "CONV_2D", "key": "k0", "kernels": ["Convolution"], "avg_us": 20.0, "median_us": 20.0,
         "min_us": 19.0, "share": 0.67},
        {"index": 1, "type": "RESHAPE", "key": "k1", "kernels": ["Static Reshape (NC)"], "avg_us": 0.0,
         "median_us": 0.0, "min_us": 0.0, "share": 0.0},
        {"index": 2, "type": "PAD", "key": "k2", "kernels": [], "avg_us": 0.0, "median_us": 0.0, "min_us": 0.0}]}
    block = read_block(v1)
    assert [r["timing"] for r in block["ops"]] == ["measured", "below_resolution", "fused"]
    assert block["ops"][0]["avg_us"] == 20.0 and block["ops_sum_us"] == 20.0 and block["valid"]
    # A schema 2/3 block whose total came out negative (the profiler's cost above the run) reads with none.
    v3 = {**copy.deepcopy(v1), "schema_version": 3, "total_us": -2.8}
    v3["ops"][0]["avg_us"] = v3["ops"][0]["median_us"] = 20.5
    v3["ops"][1]["avg_us"] = v3["ops"][1]["median_us"] = v3["ops"][1]["min_us"] = 0.5
    assert read_block(v3)["total_us"] is None and read_block(v3)["valid"]
    assert "not below the profiled run" in read_block(v3)["total_note"]
