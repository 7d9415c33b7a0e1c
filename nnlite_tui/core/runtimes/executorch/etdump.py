"""Per-op times of a .pte from ETDump, in the ops block every runtime writes (`benchmark.ops`).

The executorch wheel's runtime has the event tracer compiled in: a program loaded with
enable_etdump=True records, per run, the run's Method::execute, one event per instruction
(DELEGATE_CALL for an XNNPACK partition, OPERATOR_CALL and inside it native_call_<op> for a kernel of
ExecuTorch's own) and, before each DELEGATE_CALL, one event per XNNPACK operator the partition ran
("Convolution (NHWC, F32) IGEMM #3": the operator names LiteRT's XNNPACK profile gives). It runs
after the timed runs, in the same process and at the same thread count (the pool cannot change).

XNNPACK reports its operators' times in whole µs, rounded down, as under LiteRT: a row's figures are
those readings and nothing added (ops.block schema 4: an operator that reads 0 in every run is below
resolution, with an upper bound and no time). ExecuTorch's own events are nanosecond clock reads. XNNPACK's operators carry no debug handle, so a row is an operator as it ran, not a graph op:
rows have no graph tensors, FLOPs or cost key (the predictor, which needs them, skips such a block).
The whole run is Method::execute as ETDump times it, with XNNPACK's per-operator profiling on.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import median
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from nnlite_tui.core.bench.block import ProfiledBlocks
    from nnlite_tui.core.bench.settings import BenchSettings

from nnlite_tui.core.ops.block import RESOLUTION_US, SCHEMA_VERSION, op_timing, totals
from nnlite_tui.core.ops.block_check import mark_checked

_COUNTER = re.compile(r" #\d+$")


class ProfileError(RuntimeError):
    """The ETDump could not be recorded or read."""


@dataclass(frozen=True)
class Event:
    """One ETDump event of the timed runs: its name, what it is (_kind) and its µs in each run."""

    name: str
    kind: str
    samples_us: list[float]


def _kind(event: Any) -> str | None:
    if event.is_delegated_op:
        return "delegate_op"
    if event.name == "DELEGATE_CALL":
        return "partition"
    if event.name.startswith("native_call_"):
        return "kernel"  # the kernel itself, inside its OPERATOR_CALL (which is not counted again)
    if event.name == "Method::execute":
        return "run"
    return None


def record(path: str, runs: int, warmup: int, threads: int, seed: int,
           ranges: Sequence[Sequence[int] | None] = ()) -> list[Event]:
    """Run the program warmup + runs times with ETDump on; the Execute block's events, warm-up cut off.
    Its inputs are the timed runs' fill (bench/input_fill.py), integer inputs inside `ranges`."""
    from nnlite_tui.core.bench.input_fill import make_input
    from nnlite_tui.core.runtimes.executorch.session import ExecuTorchSession, load

    program, method = load(path, threads, etdump=True)
    session = ExecuTorchSession(program, method, path)
    inputs = session.inputs()
    if ranges and len(ranges) != len(inputs):
        raise ProfileError(f"{len(ranges)} input ranges given for a program of {len(inputs)} inputs")
    for i, detail in enumerate(inputs):
        session.set_input(detail, make_input(detail["shape"], detail["dtype"], seed, None, ranges[i] if ranges else None))
    for _ in range(warmup + runs):
        session.reset_inputs()  # before every run: the memory plan reuses input buffers (session.py)
        session.invoke()
    with tempfile.TemporaryDirectory(prefix="nnlite-etdump-") as tmp:
        etdump = os.path.join(tmp, "run.etdp")
        program.write_etdump_result_to_file(etdump, os.path.join(tmp, "debug.bin"))
        if not os.path.isfile(etdump):
            raise ProfileError("the runtime wrote no ETDump (a wheel built without the event tracer?)")
        from executorch.devtools import Inspector
        from executorch.devtools.inspector import TimeScale

        inspector = Inspector(etdump_path=etdump, source_time_scale=TimeScale.NS, target_time_scale=TimeScale.US)
    events: list[Event] = []
    for block in inspector.event_blocks:
        if block.name != "Execute":
            continue  # "Default": Program::load_method and Method::init, once
        for event in block.events:
            kind = _kind(event)
            if kind is None or event.perf_data is None:
                continue
            events.append(Event(event.name, kind, [float(v) for v in event.perf_data.raw[warmup:]]))
    return events


def ops_block(events: list[Event], runs: int, threads: int, backend: str | None,
              library_version: str) -> Mapping[str, object]:
    """The ops block from the recorded events: one row per XNNPACK operator and per kernel, in run
    order, each timed as every runtime's rows are (ops.block.op_timing), the block checked."""
    rows: list[dict[str, object]] = []  # core/ops' rows (ops.block.op_timing)
    partitions: list[dict[str, object]] = []
    run_us: list[float] = []
    partition = 0
    pending: list[dict[str, object]] = []  # XNNPACK's operators come before the DELEGATE_CALL that ran them
    for event in events:
        samples = event.samples_us
        if event.kind == "run":
            run_us = samples
            continue
        if event.kind == "partition":
            partitions.append({"partition": partition, "backend": backend,
                               "avg_us": round(sum(samples) / len(samples), 3) if samples else None,
                               "median_us": round(float(median(samples)), 3) if samples else None,
                               "operators": len(pending)})
            partition, pending = partition + 1, []
            continue
        delegated = event.kind == "delegate_op"
        row = {"index": len(rows), "type": _COUNTER.sub("", event.name) if delegated else
               event.name.removeprefix("native_call_"), "kind": event.kind,
               "partition": partition if delegated else None, "kernels": [event.name],
               **op_timing(samples, 1)}
        rows.append(row)
        if delegated:
            pending.append(row)
    if not run_us:
        raise ProfileError("the ETDump has no Method::execute events")
    total = round(sum(run_us) / len(run_us), 3)
    block = {"schema_version": SCHEMA_VERSION, "kernel_mode": "xnnpack", "source": "etdump", "threads": threads,
             "runs": runs, "runs_kept": len(run_us), **totals(rows, total),
             "invoke_us": total, "total_median_us": round(float(median(run_us)), 3),
             "profiler_us": None, "graph_ops_mapped": False, "partitions": partitions,
             "library": "executorch", "library_version": library_version, "ops": rows}
    # Only XNNPACK's operators are whole µs rounded down; ExecuTorch's kernel events are ns clock reads.
    block["rounding_bound_us"] = RESOLUTION_US * sum(1 for r in rows if r["kind"] == "delegate_op")
    return mark_checked(block)


def unavailable(mode: str | None, reason: str) -> Mapping[str, object]:
    return {"schema_version": SCHEMA_VERSION, "kernel_mode": mode, "error": reason, "ops": []}


def profiled_pass(path: str, settings: BenchSettings, ranges: Sequence[Sequence[int] | None] = ()) -> ProfiledBlocks:
    """{"ops": block} (and {"ops_builtin": ...} for "both"); a failure is the block's `error`."""
    from nnlite_tui.core.bench.settings import BenchmarkError
    from nnlite_tui.core.runtimes.executorch.program import ProgramError, read_program
    from nnlite_tui.core.versions import dist_version

    modes = ["xnnpack", "builtin"] if settings.profile_ops == "both" else [settings.profile_ops]
    blocks: list[Mapping[str, object]] = []
    for mode in modes:
        if mode == "builtin":
            blocks.append(unavailable(mode, "an ExecuTorch program's delegates are fixed at export: it has no builtin-"
                                            "kernel mode to profile (its XNNPACK profile is the xnnpack block)"))
            continue
        try:
            facts = read_program(path)
            events = record(path, settings.profile_runs, min(settings.warmup, 5), settings.threads, settings.seed,
                            ranges)
            blocks.append(ops_block(events, settings.profile_runs, settings.threads,
                                    facts.backends[0] if facts.backends else None, dist_version("executorch")))
        except (ProfileError, ProgramError, BenchmarkError, RuntimeError, ImportError) as exc:
            blocks.append(unavailable(mode, f"ETDump profile not available: {type(exc).__name__}: {exc}"[:500]))
    out: ProfiledBlocks = {"ops": blocks[0]}
    if len(blocks) > 1:  # "both": the builtin kernels' beside the XNNPACK one
        out["ops_builtin"] = blocks[1]
    return out
