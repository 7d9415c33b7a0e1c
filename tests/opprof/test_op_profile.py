"""Per-op profiling through LiteRT's C API, the ops block, the benchmark's profiled pass, the predictor."""

from __future__ import annotations

import pytest

from nnlite_tui.core.runtimes.litert import c_api, op_profile
from nnlite_tui.core.bench.settings import BenchSettings
from nnlite_tui.core.bench.protocol import benchmark_result
from nnlite_tui.core.runtimes.litert.ops_block import build_ops_block
from nnlite_tui.core.ops.predictor import OpTable
from nnlite_tui.core.runtimes.litert.graph import read_graph
from nnlite_tui.core.outcomes import Artifact


def test_graph_has_cost_parameters_and_work(small_cnn):
    graph = read_graph(str(small_cnn))
    convs = [op for op in graph.ops if op.type == "CONV_2D"]
    assert [c.params["cout"] for c in convs] == [16, 32]
    assert convs[0].params["kernel"] == "3x3" and convs[0].params["stride"] == "1x1"
    assert convs[0].flops == 2 * 32 * 32 * 16 * 3 * 3 * 3
    assert graph.flops > sum(c.flops for c in convs) - 1 and graph.bytes_moved > 0


@pytest.mark.parametrize("mode,kind", [("xnnpack", "delegate_op"), ("builtin", "node")])
def test_profile_reports_every_op(small_cnn, mode, kind):
    profile = op_profile.profile_ops(str(small_cnn), kernel_mode=mode, runs=5, warmup=1)
    assert 1 <= profile.runs_kept <= 5
    assert profile.ops and all(op.kind == kind and len(op.samples_us) == profile.runs_kept for op in profile.ops)
    assert profile.invoke_us > 0
    block = build_ops_block(read_graph(str(small_cnn)), profile)
    graph_types = [op.type for op in read_graph(str(small_cnn)).ops]
    assert [row["type"] for row in block["ops"]] == graph_types
    conv_rows = [row for row in block["ops"] if row["type"] == "CONV_2D"]
    assert all(row["timing"] == "measured" and row["median_us"] > 0 and row["kernels"] for row in conv_rows)
    if mode == "builtin":
        assert conv_rows[0]["kernels"] == ["builtin"]
    else:
        assert conv_rows[0]["kernels"][0].startswith("Convolution")
    # The ops run inside the runs' Invoke events: their sum cannot pass Invoke by more than Invoke's own
    # whole-µs reading and, for builtin node events (differences of two µs readings), one µs each.
    nodes = sum(1 for op in profile.ops if op.kind == "node")
    assert 0 < block["ops_sum_us"] <= block["invoke_us"] + 1 + nodes
    # Every op's time comes from its own events' readings, nothing added: the raw samples' means add
    # up to the ops' sum, and each builtin node (joined by index) has its own samples' figures.
    assert block["ops_sum_us"] == pytest.approx(sum(op.avg_us for op in profile.ops), abs=0.001 * len(profile.ops))
    raw = {op.index: op.samples_us for op in profile.ops} if mode == "builtin" else None
    for row in block["ops"]:
        if raw is not None:
            samples = raw[row["index"]]
            assert row["resolved_runs"] == sum(1 for us in samples if us > 0)
            assert (row["avg_us"] is None) == (not any(samples))
    assert block["valid"] is True and "invalid_reasons" not in block
    # The total is the runtime's Invoke time less the profiler's own, measured cost inside it.
    assert profile.profiler_us is not None and 0 < profile.snapshot_us <= profile.profiler_us < profile.invoke_us
    assert profile.profiler_us == pytest.approx(profile.snapshot_us + profile.collection_us)
    assert block["total_us"] == pytest.approx(block["invoke_us"] - block["profiler_us"], abs=0.01)
    assert block["unattributed_us"] == pytest.approx(block["total_us"] - block["ops_sum_us"], abs=0.01)
