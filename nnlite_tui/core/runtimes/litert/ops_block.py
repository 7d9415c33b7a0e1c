"""The report's `ops` block: a profiled pass's timings joined to the graph's ops.

Builtin kernels report one event per graph node, so the join is by node index. XNNPACK reports its own
operators: mostly one per graph op, but it fuses some (a PAD into the next convolution) and splits
others (an ADD with a fused ReLU becomes Add + Clamp). They are joined to graph ops by an
order-preserving alignment on compatible kinds; an XNNPACK operator left over adds its time to the
graph op it follows, a graph op left over was fused and has no time of its own.

XNNPACK times its operators from consecutive nanosecond timestamps and reports each difference in
whole µs, rounded down (xnn_get_runtime_profiling_info): an operator under a µs reads 0 in every run.
Builtin node events are differences of two µs clock readings. Either way an op is written as read:
one that reads 0 in every run is below resolution (no time, an upper bound), and what the readings
leave out stays in the block's unattributed_us.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TypedDict

from nnlite_tui.core.runtimes.litert.op_profile import OpProfile
from nnlite_tui.core.runtimes.litert.profile_events import ProfiledOp
from nnlite_tui.core.ops.block import SCHEMA_VERSION, avg_us, op_timing, resolved_total, totals
from nnlite_tui.core.ops.block_check import mark_checked, sum_tolerance_us
from nnlite_tui.core.ops.graph import Graph, GraphOp

# XNNPACK operator name (the words before " (") -> the builtin op types it can implement.
_XNN_KINDS = {
    "convolution": {"CONV_2D", "DEPTHWISE_CONV_2D"},
    "deconvolution": {"TRANSPOSE_CONV"},
    # XNNPACK runs a 1x1, stride-1 convolution as a GEMM.
    "fully connected": {"FULLY_CONNECTED", "BATCH_MATMUL", "CONV_2D"},
    "batch matrix multiply": {"BATCH_MATMUL", "FULLY_CONNECTED"},
    "max pooling": {"MAX_POOL_2D"},
    "average pooling": {"AVERAGE_POOL_2D"},
    "global average pooling": {"MEAN", "AVERAGE_POOL_2D"},
    "mean": {"MEAN"},
    "sum": {"SUM"},
    "multiply": {"MUL"},
    "subtract": {"SUB"},
    "divide": {"DIV"},
    "static reshape": {"RESHAPE", "SQUEEZE", "EXPAND_DIMS"},
    "copy": {"RESHAPE", "SQUEEZE", "EXPAND_DIMS", "CONCATENATION"},
    "slice": {"SLICE", "STRIDED_SLICE", "SPLIT", "SPLIT_V"},
    "constant pad": {"PAD", "PADV2"},
    "clamp": {"RELU", "RELU6", "RELU_N1_TO_1", "RELU_0_TO_1"},
    "sigmoid": {"LOGISTIC"},
    "reciprocal square root": {"RSQRT"},
    "square root": {"SQRT"},
    "resize bilinear": {"RESIZE_BILINEAR"},
    "convert": {"QUANTIZE", "DEQUANTIZE"},
    "even split": {"SPLIT", "SPLIT_V"},
    "concatenate": {"CONCATENATION"},
    "leaky relu": {"LEAKY_RELU"},
}


def _norm(text: str) -> str:
    return re.sub(r"[^a-z]", "", text.lower())


def xnn_kind(tag: str) -> str:
    return tag.split(" (")[0].strip().lower()


def compatible(tag: str, op_type: str) -> bool:
    kind = xnn_kind(tag)
    if kind == "convolution" and "DWConv" in tag:
        return op_type == "DEPTHWISE_CONV_2D"  # (a depthwise op with one input channel runs as IGEMM)
    if op_type in _XNN_KINDS.get(kind, ()):
        return True
    return _norm(kind) == _norm(op_type) or _norm(kind).startswith(_norm(op_type))


def align(delegate_ops: list[ProfiledOp], graph_ops: list[GraphOp]) -> list[int | None]:
    """For each delegate op, the position in graph_ops it is charged to (None: before any graph op)."""
    n, m = len(delegate_ops), len(graph_ops)
    # score[i][j]: best matches aligning the first i delegate ops with the first j graph ops.
    score = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(1, n + 1):
        tag = delegate_ops[i - 1].tag
        row, prev = score[i], score[i - 1]
        for j in range(1, m + 1):
            best = max(prev[j], row[j - 1])
            if compatible(tag, graph_ops[j - 1].type):
                best = max(best, prev[j - 1] + 1)
            row[j] = best
    match: list[int | None] = [None] * n
    i, j = n, m
    while i > 0 and j > 0:
        if compatible(delegate_ops[i - 1].tag, graph_ops[j - 1].type) and score[i][j] == score[i - 1][j - 1] + 1:
            match[i - 1] = j - 1
            i, j = i - 1, j - 1
        elif score[i][j] == score[i - 1][j]:
            i -= 1
        else:
            j -= 1
    last: int | None = None
    for k in range(n):  # unmatched operators charge the graph op they follow
        if match[k] is None:
            match[k] = last
        last = match[k]
    return match


class _TensorCommon(TypedDict):
    shape: list[int]
    dtype: str


class TensorRow(_TensorCommon, total=False):
    """One of an op's tensors in its row (`inputs`, `outputs`)."""

    constant: bool  # only when it is (weights, a table)


def _tensors(op: GraphOp, which: str) -> list[TensorRow]:
    rows: list[TensorRow] = []
    for t in getattr(op, which):
        row: TensorRow = {"shape": t.shape, "dtype": t.dtype}
        if t.constant:
            row["constant"] = True
        rows.append(row)
    return rows


def build_ops_block(graph: Graph, profile: OpProfile) -> Mapping[str, object]:
    """Per graph op: type, tensors, cost parameters, FLOPs, bytes, how it was timed and its measured
    avg/median/min µs and share of the total (core/ops/block.py); the block checked (block_check.py)."""
    samples: dict[int, list[list[int]]] = {op.index: [] for op in graph.ops}
    delegate = [p for p in profile.ops if p.kind == "delegate_op"]
    nodes = [p for p in profile.ops if p.kind == "node" and p.index in samples]
    kernels: dict[int, list[str]] = {op.index: [] for op in graph.ops}
    for p in nodes:
        samples[p.index].append(p.samples_us)
        kernels[p.index].append("builtin")
    if delegate:
        # Graph ops that ran outside the delegate have node events; the rest are the delegate's.
        by_node = {p.index for p in nodes}
        candidates = [op for op in graph.ops if op.index not in by_node]
        for p, pos in zip(delegate, align(delegate, candidates)):
            target = candidates[pos].index if pos is not None else candidates[0].index if candidates else None
            if target is not None:
                samples[target].append(p.samples_us)
                kernels[target].append(p.tag)
    rows = []
    for op in graph.ops:
        runs = [float(sum(vals)) for vals in zip(*samples[op.index])] if samples[op.index] else []
        rows.append({
            "index": op.index, "type": op.type, "inputs": _tensors(op, "inputs"), "outputs": _tensors(op, "outputs"),
            "params": op.params, "flops": op.flops, "bytes_moved": op.bytes_moved, "key": op.key(),
            "kernels": kernels[op.index], **op_timing(runs, len(samples[op.index])),
        })
    # The run's total is the runtime's "Invoke" event less the profiler's own work inside it, measured
    # (op_profile); what is left beside the measured ops is the runtime's invoke overhead outside all
    # ops, the ops below resolution and what each event's rounding down drops. Means add up (the ops'
    # means sum to the mean run), so the sums and shares use them; the predictor reads min_us.
    ops_sum = sum(us for r in rows if (us := avg_us(r)) is not None)
    total, why = resolved_total(profile.invoke_us, profile.profiler_us, ops_sum, sum_tolerance_us({"ops": rows}))
    block = {"schema_version": SCHEMA_VERSION, "kernel_mode": profile.kernel_mode, "threads": profile.threads,
             "runs": profile.runs, "runs_kept": profile.runs_kept, **totals(rows, total),
             **({"total_note": why} if why else {}),
             "invoke_us": round(profile.invoke_us, 3), "total_median_us": round(profile.invoke_median_us, 3),
             "profiler_us": None if profile.profiler_us is None else round(profile.profiler_us, 3),
             "profiler_snapshot_us": profile.snapshot_us, "profiler_collection_us": round(profile.collection_us, 3),
             "wall_us": round(profile.wall_us, 3), "flops": graph.flops, "bytes_moved": graph.bytes_moved,
             "library": profile.library, "library_version": profile.library_version, "ops": rows}
    return mark_checked(block)
