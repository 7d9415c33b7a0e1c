"""The predictor on hand-made profiles: measured times only, "no prediction" when nothing covers an
op, and the share of each prediction that came from the table, the fits and the run's remainder."""

from __future__ import annotations

import pytest

from nnlite_tui.core.ops.block_check import mark_checked
from nnlite_tui.core.ops.graph import Graph, GraphOp, Tensor
from nnlite_tui.core.ops.predictor import FITS, REMAINDER, TABLE, OpTable


def op(index: int, op_type: str, width: int, flops: int | None = None) -> GraphOp:
    t = Tensor([1, width], "float32", False)
    return GraphOp(index, op_type, [t], [t], {}, flops if flops is not None else 100 * width, 8 * width)


def row(graph_op: GraphOp, us: float | None) -> dict:
    timed = us is not None
    return {"index": graph_op.index, "type": graph_op.type, "key": graph_op.key(), "params": graph_op.params,
            "flops": graph_op.flops, "bytes_moved": graph_op.bytes_moved, "kernels": ["Op (NC)"], "events": 1,
            "timing": "measured" if timed else "below_resolution", "resolved_runs": 5 if timed else 0,
            "avg_us": us, "median_us": us, "min_us": us, **({} if timed else {"upper_us": 1.0})}


def block(rows: list[dict], unattributed: float) -> dict:
    ops_sum = round(sum(r["avg_us"] for r in rows if r["avg_us"] is not None), 3)
    total = ops_sum + unattributed
    return mark_checked({"schema_version": 4, "kernel_mode": "xnnpack", "runs": 5, "runs_kept": 5,
                         "total_us": total, "invoke_us": total + 10, "ops_sum_us": ops_sum,
                         "unattributed_us": round(unattributed, 3), "ops": rows})


def test_an_op_type_nothing_was_fitted_on_gets_no_prediction_not_zero():
    table = OpTable(kernel_mode="xnnpack")
    table.add_block(block([row(op(0, "CONV_2D", 16), 40.0), row(op(1, "ADD", 16), 2.0)], 3.0))
    table.finish()
    assert table.global_fit is None and not table.fits  # two measured configurations: nothing to fit on
    prediction = table.predict(Graph("m", [op(0, "CONV_2D", 16), op(1, "GELU", 16)]))
    gelu = prediction.ops[1]
    assert gelu.source == "none" and gelu.us is None
    assert prediction.total_us is None and prediction.ops_us is None and prediction.share(TABLE) is None
    assert prediction.missing == ["GELU"] and "no profile or fit for GELU" in prediction.why_none


def _three_profiles() -> OpTable:
    table = OpTable(kernel_mode="xnnpack")
    # CONV time = 0.01 µs per FLOP: 16 -> 16 µs, 32 -> 32 µs, 64 -> 64 µs; remainder 2 + 0.5 per op.
    for n, width in ((2, 16), (4, 32), (6, 64)):
        ops = [op(0, "CONV_2D", width)] + [op(i, "RESHAPE", width) for i in range(1, n)]
        rows = [row(ops[0], 0.01 * ops[0].flops)] + [row(o, None) for o in ops[1:]]
        table.add_block(block(rows, 2 + 0.5 * n), f"m{n}")
    return table.finish()


def test_fits_use_measured_times_only_and_the_remainder_is_fitted_on_the_runs():
    table = _three_profiles()
    assert table.fits["CONV_2D"].points == 3 and "RESHAPE" not in table.fits  # below resolution: no points
    # An invalid block (its ops add up to more than its run) is left out, and the table says why.
    bad = block([row(op(0, "CONV_2D", 128), 5000.0)], 1.0)
    bad["total_us"], bad["unattributed_us"] = 100.0, -4900.0
    assert not table.add_block(bad, "broken") and table.skipped[0].startswith("broken: sum_exceeds_total")
    graph = Graph("new", [op(0, "CONV_2D", 48), op(1, "RESHAPE", 16), op(2, "RESHAPE", 48)])
    prediction = table.predict(graph)
    conv, known_reshape, new_reshape = prediction.ops
    assert conv.source == "group-fit" and conv.us == pytest.approx(48.0, rel=1e-3)
    assert known_reshape.source == "below-resolution" and known_reshape.us is None and known_reshape.upper_us == 1.0
    # An unseen RESHAPE: its type was never measured, so only the fit over all types covers it.
    assert new_reshape.source == "global-fit"
    assert prediction.remainder_us == pytest.approx(2 + 0.5 * 3, rel=1e-3)
    shares = prediction.share(TABLE), prediction.share(*FITS), prediction.share(REMAINDER)
    assert shares[0] == 0 and sum(shares) == pytest.approx(1.0)
    assert prediction.total_us == pytest.approx(conv.us + new_reshape.us + prediction.remainder_us)


def test_a_configuration_measured_once_is_a_table_hit():
    table = _three_profiles()
    prediction = table.predict(Graph("seen", [op(0, "CONV_2D", 32), op(1, "RESHAPE", 32)]))
    assert [o.source for o in prediction.ops] == ["table", "below-resolution"]
    assert prediction.ops[0].us == pytest.approx(32.0)
    assert prediction.share(TABLE) == pytest.approx(32.0 / (32.0 + prediction.remainder_us))
