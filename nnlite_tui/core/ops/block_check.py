"""The checks every ops block passes, wherever it was made or read (the host's profiled pass, the
simulator, a block pulled from a device, a report read back): a block that fails one is kept, marked
`valid: false` with `invalid_reasons`, and no reader takes its times for measurements.

- Totals are not negative: `total_us`, `invoke_us`, `ops_sum_us`, `profiler_us`, and every op's figures.
- No time without samples: an op's avg/median/min are set only when its timing is "measured" and a
  run's event read it above 0; an estimate sits in `estimated_us` with `estimate` saying how, on an
  op that has no measured time.
- The sums hold: `ops_sum_us` is the measured ops' avg_us summed, `unattributed_us` is the total less
  it, and the ops' sum is not above the profiled total (`invoke_us` when the total is not resolved)
  by more than the rounding can put there: each builtin node event is a difference of two whole-µs
  clock readings (up to one µs over), and so is the total's own event; XNNPACK operators round down,
  so they add nothing over. The figures themselves are written to 3 decimals.

Each reason starts with a fixed code (`negative_total:`, `time_without_samples:`, ...) and names the op.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping, Sequence
from typing import TypeVar

from nnlite_tui.core.ops.block import MEASURED, RESOLUTION_US, SCHEMA_VERSION, TIMINGS

TIME_FIELDS = ("avg_us", "median_us", "min_us")
TOTAL_FIELDS = ("total_us", "invoke_us", "ops_sum_us", "profiler_us")
DECIMALS_SLACK = 0.0005  # each figure is rounded to 3 decimals
# A block as written or read: the checks read it by key, whatever made it (a runtime's dict, a file's JSON).
Block = Mapping[str, object]
Row = Mapping[str, object]
B = TypeVar("B", bound=MutableMapping[str, object])


def figure(data: Mapping[str, object], key: str) -> float | None:
    """A figure of a block or row: a number, or None when absent or null. Anything else is not a figure
    and fails as comparing it would (TypeError)."""
    value = data.get(key)
    if value is None or (isinstance(value, (int, float)) and not isinstance(value, bool)):
        return value
    raise TypeError(f"{key} is {value!r}, not a number")


def rows_of(block: Block) -> list[Row]:
    """The block's op rows (`ops`)."""
    rows = block.get("ops") or []
    return [r for r in rows if isinstance(r, Mapping)] if isinstance(rows, Sequence) else []


def kernels_of(row: Row) -> list[object]:
    kernels = row.get("kernels") or []
    return list(kernels) if isinstance(kernels, Sequence) and not isinstance(kernels, str) else []


def _label(row: Row) -> str:
    return f"op #{row.get('index')} ({row.get('type')})"


def sum_tolerance_us(block: Block) -> float:
    """How far rounding alone can put the ops' sum above the total (see the module's docstring)."""
    rows = rows_of(block)
    nodes = sum(1 for r in rows for k in kernels_of(r) if k == "builtin")
    return RESOLUTION_US * (1 + nodes) + DECIMALS_SLACK * (len(rows) + 2)


def _row_reasons(row: Row, upgraded: bool) -> list[str]:
    out = []
    for key in (*TIME_FIELDS, "upper_us", "estimated_us"):
        value = figure(row, key)
        if value is not None and value < 0:
            out.append(f"negative_time: {_label(row)} has {key} {value}")
    timed = [k for k in TIME_FIELDS if row.get(k) is not None]
    if row.get("timing") not in TIMINGS:
        out.append(f"unknown_timing: {_label(row)} has timing {row.get('timing')!r}, not one of {', '.join(TIMINGS)}")
    resolved = figure(row, "resolved_runs")
    # A row read from an older block has no run count; an avg_us above 0 shows a run read it.
    sampled = (resolved is None and upgraded and (figure(row, "avg_us") or 0) > 0) or (resolved or 0) > 0
    no_event = row.get("events") == 0 or row.get("kernels") == []
    if timed and (row.get("timing") != MEASURED or not sampled or no_event):
        out.append(f"time_without_samples: {_label(row)} has {timed[0]} {row[timed[0]]} but no run's event "
                   f"measured it (timing {row.get('timing')!r}, resolved_runs {resolved})")
    if row.get("timing") == MEASURED and row.get("avg_us") is None:
        out.append(f"measured_without_time: {_label(row)} is marked measured and has no avg_us")
    if row.get("estimated_us") is not None:
        if not row.get("estimate"):
            out.append(f"unmarked_estimate: {_label(row)} has estimated_us without `estimate` saying how")
        if timed:
            out.append(f"estimate_beside_measurement: {_label(row)} has both measured time and estimated_us")
    return out


def check_block(block: Block) -> list[str]:
    """The reasons `block` fails (empty: it passes). A block with `error` has no figures to check."""
    if block.get("error"):
        return []
    version = block.get("schema_version")
    if not isinstance(version, int) or version > SCHEMA_VERSION:
        return [f"unknown_schema: ops schema_version {version!r}; this nnlite-tui reads 1 to {SCHEMA_VERSION}"]
    rows = rows_of(block)
    if not rows:
        return ["no_ops: the block has neither ops nor an error"]
    upgraded = bool(block.get("upgraded_from"))
    reasons = [f"negative_total: {key} {value} µs < 0" for key in TOTAL_FIELDS
               if (value := figure(block, key)) is not None and value < 0]
    for row in rows:
        reasons += _row_reasons(row, upgraded)
    ops_sum = figure(block, "ops_sum_us")
    if ops_sum is None:
        return reasons + ["no_sum: the block has ops but no ops_sum_us"]
    summed = sum(avg for r in rows if r.get("timing") == MEASURED and (avg := figure(r, "avg_us")) is not None)
    if abs(summed - ops_sum) > DECIMALS_SLACK * (len(rows) + 1):
        reasons.append(f"sum_mismatch: ops_sum_us {ops_sum} is not the measured ops' avg_us summed ({summed:.3f})")
    total = figure(block, "total_us")
    reference, name = (total, "total_us") if total is not None else (figure(block, "invoke_us"), "invoke_us")
    tolerance = sum_tolerance_us(block)
    if reference is not None and ops_sum > reference + tolerance:
        reasons.append(f"sum_exceeds_total: the measured ops' sum {ops_sum} µs is above the profiled {name} "
                       f"{reference} µs by more than rounding can put there ({tolerance:.3f} µs)")
    unattributed = figure(block, "unattributed_us")
    if total is not None and (unattributed is None or abs(unattributed - (total - ops_sum)) > 3 * DECIMALS_SLACK):
        reasons.append(f"unattributed_mismatch: unattributed_us {unattributed} is not total_us less ops_sum_us "
                       f"({total - ops_sum:.3f})")
    if total is None and unattributed is not None:
        reasons.append(f"unattributed_mismatch: unattributed_us {unattributed} without a total_us")
    runs_kept = figure(block, "runs_kept")
    if runs_kept is not None and runs_kept < 1:
        reasons.append(f"no_runs: runs_kept {block['runs_kept']}: no run to take the ops' times from")
    return reasons


def mark_checked(block: B) -> B:
    """`block` with `valid` and, when it fails, `invalid_reasons` set from check_block (in place)."""
    if block.get("error"):
        return block
    reasons = check_block(block)
    block["valid"] = not reasons
    block["sum_tolerance_us"] = round(sum_tolerance_us(block), 4)
    if reasons:
        block["invalid_reasons"] = reasons
    else:
        block.pop("invalid_reasons", None)
    return block
