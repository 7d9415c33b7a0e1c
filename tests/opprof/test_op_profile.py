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
    net = block["invoke_us"] - block["profiler_us"]
    if block["total_us"] is None:
        # The profiler's cost is calibrated on another model: on a busy host it can leave less than
        # the ops' own readings, and then the run's own time is absent, with why, not made up.
        assert net + block["sum_tolerance_us"] < block["ops_sum_us"] and "less than its ops'" in block["total_note"]
        assert block["unattributed_us"] is None
    else:
        assert block["total_us"] == pytest.approx(net, abs=0.01)
        assert block["unattributed_us"] == pytest.approx(block["total_us"] - block["ops_sum_us"], abs=0.01)


def test_missing_symbol_is_a_clear_error_not_a_crash(small_cnn, monkeypatch):
    with pytest.raises(op_profile.ProfilerUnavailable, match="lacks LiteRtNoSuchProfilerCall"):
        op_profile.load_library(required=op_profile.REQUIRED_SYMBOLS + ("LiteRtNoSuchProfilerCall",))
    monkeypatch.setattr(c_api, "REQUIRED_SYMBOLS", c_api.REQUIRED_SYMBOLS + ("LiteRtNoSuchProfilerCall",))
    result = benchmark_result(str(small_cnn), BenchSettings(runs=3, min_seconds=0, warmup=1, profile_ops="xnnpack"))
    assert result["valid"] and result["stats"]["count"] >= 3
    assert "LiteRtNoSuchProfilerCall" in result["ops"]["error"] and result["ops"]["ops"] == []


def test_benchmark_profiled_pass_gives_both_blocks_and_the_table_takes_measured_times(small_cnn):
    result = benchmark_result(str(small_cnn), BenchSettings(runs=3, min_seconds=0, warmup=1, profile_ops="both",
                                                            profile_runs=5))
    assert result["ops"]["kernel_mode"] == "xnnpack" and result["ops_builtin"]["kernel_mode"] == "builtin"
    assert result["ops"]["valid"] and result["ops_builtin"]["valid"]
    table = OpTable(kernel_mode="xnnpack")
    table.add_block(result["ops"])
    table.finish()
    prediction = table.predict(read_graph(str(small_cnn)))
    timed = [r for r in result["ops"]["ops"] if r["timing"] == "measured"]
    # The op configurations of its own profile: each measured one a table hit at its fastest run, the
    # others (below resolution, fused) without a time. One profile is too few to fit the run's time
    # outside its ops on, so there is no whole-run prediction, and it says so.
    assert {o.source for o in prediction.ops} <= {"table", "below-resolution", "fused"}
    assert prediction.ops_us == pytest.approx(sum(r["min_us"] for r in timed))
    assert prediction.total_us is None and "fewer than 3 profiles" in prediction.why_none


def test_unchecked_library_version_is_refused_with_its_name(monkeypatch):
    monkeypatch.delenv("NNLITE_PROFILE_ANY_LITERT", raising=False)
    monkeypatch.setattr(c_api, "library_version", lambda: "9.9.0")
    with pytest.raises(op_profile.ProfilerUnavailable, match="9.9.0 is not a version"):
        op_profile.load_library()


def test_profiler_snapshot_is_timed_from_the_events():
    from nnlite_tui.core.runtimes.litert.profile_events import DEFAULT_EVENT, Event, profiler_cost_us, snapshot_us

    def run(start):  # one run: buffer registration, Invoke (one op), buffer sync, as LiteRT records them
        return [Event(b"LiteRT::Run[buffer registration]", DEFAULT_EVENT, 12, 0, start),
                Event(b"Invoke", DEFAULT_EVENT, 40, 0, start + 12 + 9),
                Event(b"Conv", 8, 20, 0, 0),
                Event(b"LiteRT::Run[Buffer sync]", DEFAULT_EVENT, 9, 0, start + 12 + 9 + 40 + 10)]

    events = run(1000) + run(2000) + run(3000)
    assert snapshot_us(events) == 9  # the end of the event before Invoke to Invoke's start
    assert profiler_cost_us(snapshot_us(events), 3.0) == 12.0
    # Without the event just before Invoke in the same run there is nothing to time it by.
    assert snapshot_us([e for e in events if e.tag != b"LiteRT::Run[buffer registration]"]) is None


def test_collection_cost_is_measured_on_generated_op_chains(tmp_path):
    from nnlite_tui.core.runtimes.litert import profiler_calibration as calibration

    path = tmp_path / "chain.tflite"
    calibration.chain_model(str(path), 12)
    assert [op.type for op in read_graph(str(path)).ops] == ["ADD"] * 12
    profile = op_profile.profile_ops(str(path), runs=3, warmup=1)
    assert len(profile.ops) == 12 and all(op.kind == "delegate_op" for op in profile.ops)
    lib = op_profile.load_library()
    costs = op_profile.profiler_added_costs
    xnn, builtin = calibration.calibrate(lib, "xnnpack", 1, costs), calibration.calibrate(lib, "builtin", 1, costs)
    assert calibration.calibrate(lib, "xnnpack", 1, costs) is xnn  # once per process
    # XNNPACK hands every operator's name and time to the attached profiler even while it is idle;
    # builtin kernels' idle events return at once.
    assert xnn.collection_per_op_us > builtin.collection_per_op_us >= 0 and xnn.fixed_us >= 0
    # Recording includes the collection; a builtin event's storing (about 0.2 µs) is within the
    # host's noise, so only its sign is certain.
    assert xnn.per_op_us >= xnn.collection_per_op_us and builtin.per_op_us >= builtin.collection_per_op_us
    assert xnn.cost_us(100) == xnn.fixed_us + 100 * xnn.per_op_us


def test_each_delegate_partition_keeps_its_own_operators():
    from nnlite_tui.core.runtimes.litert.profile_events import DEFAULT_EVENT, Event, aggregate

    # XNNPACK took the graph in two partitions around a builtin node; each numbers its operators from 0.
    run = [Event(b"Invoke", DEFAULT_EVENT, 100, 0), Event(b"Convolution", 8, 40, 0), Event(b"Max Pooling", 8, 5, 1),
           Event(b"GATHER_ND", 2, 7, 3), Event(b"Fully Connected", 8, 30, 0), Event(b"Fully Connected", 8, 9, 1)]
    ops, invokes = aggregate(run + run)
    assert invokes == [100, 100]
    assert [(op.kind, op.partition, op.index, op.tag, op.samples_us) for op in ops] == [
        ("delegate_op", 0, 0, "Convolution", [40, 40]), ("delegate_op", 0, 1, "Max Pooling", [5, 5]),
        ("node", 0, 3, "GATHER_ND", [7, 7]), ("delegate_op", 1, 0, "Fully Connected", [30, 30]),
        ("delegate_op", 1, 1, "Fully Connected", [9, 9])]


def test_steady_runs_drop_preempted_ones():
    assert op_profile.steady_runs([100, 104, 900, 98, op_profile.MAX_EVENT_US + 1]) == [0, 1, 3]


def test_alignment_charges_split_ops_and_leaves_fused_ones_empty():
    from nnlite_tui.core.runtimes.litert.op_profile import ProfiledOp
    from nnlite_tui.core.runtimes.litert.ops_block import align
    from nnlite_tui.core.ops.graph import GraphOp

    graph = [GraphOp(i, t, [], []) for i, t in enumerate(["CONV_2D", "PAD", "CONV_2D", "ADD", "CONV_2D", "MEAN"])]
    xnn = [ProfiledOp(i, tag, "delegate_op") for i, tag in enumerate([
        "Convolution (NHWC, F32) IGEMM", "Convolution (NHWC, F32) IGEMM", "Add (ND)", "Clamp (NC)",
        "Fully Connected (NC, F32) GEMM", "Mean (ND) Reduce2"])]
    # PAD was fused into the next convolution; Clamp (the ADD's fused ReLU) is charged to the ADD;
    # a 1x1 convolution that XNNPACK ran as a GEMM still lands on its CONV_2D.
    assert align(xnn, graph) == [0, 2, 3, 3, 4, 5]


def test_a_crash_in_the_profiled_pass_keeps_the_timed_result(small_cnn, tmp_path, monkeypatch):
    """The benchmark process really dies (SIGSEGV) inside the profiled pass, after the timed runs."""
    import os
    import sys

    from nnlite_tui.core.devices.local import LocalDevice

    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(
        "import os, signal\n"
        "import nnlite_tui.core.runtimes.litert.profiled_pass as p\n"
        "p.profiled_pass = lambda *a, **k: os.kill(os.getpid(), signal.SIGSEGV)\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(hooks), *sys.path]))
    # The hook reaches the benchmark through PYTHONPATH, which the benchmark's sandbox does not pass in
    # (an exact list of variables): this test is about the crash, so the benchmark runs unsandboxed.
    monkeypatch.setenv("NNLITE_BENCH_SANDBOX", "0")
    result = LocalDevice(timeout_s=120).benchmark(
        Artifact(str(small_cnn)), BenchSettings(runs=3, min_seconds=0, warmup=1, profile_ops="xnnpack"), "r1")
    assert result["valid"] and result["stats"]["count"] >= 3
    assert "crashed" in result["ops"]["error"] and "SIGSEGV" in result["ops"]["error"]


def test_steady_runs_hold_when_most_runs_were_preempted():
    runs = [11525, 1012, 23429, 13160, 903, 25160, 17259, 4033, 33186, 13077, 12000]
    assert op_profile.steady_runs(runs) == [1, 4]


def test_op_times_are_written_as_read_and_an_op_that_reads_0_has_none():
    from nnlite_tui.core.runtimes.litert.op_profile import OpProfile, ProfiledOp
    from nnlite_tui.core.ops.graph import Graph, GraphOp

    graph = Graph(path="m.tflite", ops=[GraphOp(0, "CONV_2D", [], []), GraphOp(1, "RESHAPE", [], []),
                                        GraphOp(2, "GATHER_ND", [], []), GraphOp(3, "PAD", [], []),
                                        GraphOp(4, "CONV_2D", [], [])])
    # A convolution of 7.x µs reads 7 (XNNPACK rounds down); a reshape under a µs reads 0 in every run;
    # a builtin node's time is a difference of two µs clock readings; the PAD has no operator (XNNPACK
    # fused it into the convolution after it).
    ops = [ProfiledOp(0, "Convolution (NHWC, F32) IGEMM", "delegate_op", [7, 7, 8]),
           ProfiledOp(1, "Copy (NC, X32)", "delegate_op", [0, 0, 0]),
           ProfiledOp(2, "GATHER_ND", "node", [3, 3, 3]),
           ProfiledOp(3, "Convolution (NHWC, F32) IGEMM", "delegate_op", [5, 4, 5])]
    profile = OpProfile(kernel_mode="xnnpack", runs=3, threads=1, wall_us=30.0, invoke_us=24.0, invoke_median_us=24.0,
                        profiler_us=1.0, snapshot_us=0.5, collection_us=0.5, runs_kept=3, ops=ops,
                        library="libLiteRt.so", library_version="2.3.0")
    block = build_ops_block(graph, profile)
    rows = {row["index"]: row for row in block["ops"]}
    assert (rows[0]["avg_us"], rows[0]["median_us"], rows[0]["min_us"]) == (pytest.approx(22 / 3, abs=1e-3), 7, 7)
    assert rows[1]["timing"] == "below_resolution" and rows[1]["avg_us"] is None and rows[1]["upper_us"] == 1.0
    assert rows[1]["share"] is None and rows[1]["resolved_runs"] == 0
    assert rows[2]["avg_us"] == 3.0 and rows[2]["kernels"] == ["builtin"]
    assert rows[3]["timing"] == "fused" and rows[3]["avg_us"] is None and rows[3]["events"] == 0
    assert rows[4]["min_us"] == 4 and rows[4]["resolved_runs"] == 3
    assert block["ops_sum_us"] == pytest.approx(22 / 3 + 3 + 14 / 3, abs=1e-3)
    assert block["total_us"] == 23.0 and block["unattributed_us"] == pytest.approx(23 - 15, abs=1e-3)
    assert block["timings"] == {"measured": 3, "below_resolution": 1, "fused": 1}
    assert block["rounding_bound_us"] == 4 and block["below_resolution_upper_us"] == 1.0
    assert block["valid"] and block["schema_version"] == 4
