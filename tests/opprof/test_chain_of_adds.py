"""The chain of 256 ADDs of 16 floats (the profiler calibration's model): every op far under a µs,
so every XNNPACK reading is 0 in a run nothing interrupted. Its block must carry no time that no
reading measured, and pass the checks."""

from __future__ import annotations

import pytest

from nnlite_tui.core.bench.protocol import benchmark_result
from nnlite_tui.core.bench.settings import BenchSettings
from nnlite_tui.core.ops.block_check import check_block
from nnlite_tui.core.runtimes.litert import op_profile
from nnlite_tui.core.runtimes.litert.graph import read_graph
from nnlite_tui.core.runtimes.litert.ops_block import build_ops_block
from nnlite_tui.core.runtimes.litert.profile_events import ProfiledOp
from nnlite_tui.core.runtimes.litert.profiler_calibration import chain_model

OPS = 256


@pytest.fixture(scope="module")
def chain(tmp_path_factory) -> str:
    path = str(tmp_path_factory.mktemp("chain") / f"chain{OPS}.tflite")
    chain_model(path, OPS)
    return path


def test_all_readings_zero_give_no_time_and_a_valid_block(chain):
    """The profile the issue measured: all 256 operators read 0 in all 20 runs."""
    ops = [ProfiledOp(i, "Add (ND)", "delegate_op", [0] * 20) for i in range(OPS)]
    profile = op_profile.OpProfile(kernel_mode="xnnpack", runs=20, threads=1, wall_us=120.0, invoke_us=46.1,
                                   invoke_median_us=46.0, profiler_us=47.5, snapshot_us=15.0, collection_us=32.5,
                                   runs_kept=20, ops=ops, library="libLiteRt.so", library_version="2.3.0")
    block = build_ops_block(read_graph(chain), profile)
    assert block["ops_sum_us"] == 0.0  # schema 3 wrote 128.0 here: 256 half µs
    assert all(r["timing"] == "below_resolution" and r["avg_us"] is None and r["min_us"] is None
               and r["upper_us"] == 1.0 and r["share"] is None for r in block["ops"])
    assert block["below_resolution_upper_us"] == OPS
    # The profiler's measured cost is above the Invoke time: the run's own time is not resolved, and
    # is not written as a negative total.
    assert block["total_us"] is None and block["unattributed_us"] is None and "not below" in block["total_note"]
    assert block["valid"] and check_block(block) == []


def test_the_real_chain_profile_carries_only_what_its_readings_measured(chain):
    profile = op_profile.profile_ops(chain, kernel_mode="xnnpack", runs=20, warmup=3)
    block = build_ops_block(read_graph(chain), profile)
    assert block["valid"], block.get("invalid_reasons")
    readings = {op.index: op.samples_us for op in profile.ops}
    assert len(readings) == OPS and len(block["ops"]) == OPS
    # XNNPACK runs the chain as one ADD operator per graph op, in order: op i's readings are operator i's.
    for row in block["ops"]:
        samples = readings[row["index"]]
        if any(samples):
            assert row["timing"] == "measured" and row["avg_us"] == pytest.approx(sum(samples) / len(samples), abs=1e-3)
        else:
            assert row["timing"] == "below_resolution" and row["avg_us"] is None
    assert block["ops_sum_us"] == pytest.approx(sum(sum(s) / len(s) for s in readings.values()), abs=0.01)
    # Most of 256 ops of 16 floats read 0 in every run, even on a busy host (a reading of 1 is the rare one).
    assert block["timings"]["below_resolution"] > OPS // 2


def test_the_host_benchmark_of_the_chain_writes_a_block_that_passes(chain):
    result = benchmark_result(chain, BenchSettings(runs=20, min_seconds=0, warmup=3, profile_ops="xnnpack"))
    block = result["ops"]
    assert result["valid"] and block["schema_version"] == 4
    assert block["valid"] and check_block(block) == [], block.get("invalid_reasons")
    assert block["total_us"] is None or block["total_us"] >= 0
    unmeasured = [r for r in block["ops"] if r["timing"] != "measured"]
    assert all(r["avg_us"] is None and r["median_us"] is None and r["min_us"] is None for r in unmeasured)
