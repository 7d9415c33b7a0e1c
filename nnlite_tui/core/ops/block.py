"""The report's per-op block (`benchmark.ops`), the same for every runtime: its schema version and
how one op's timing is written from the events that timed it.

An op's figures are measured or absent. Each op event is read in whole µs (RESOLUTION_US): XNNPACK
reports each operator's time rounded down, builtin node events are differences of two µs clock
readings. An op whose events read 0 in every run took less than its events' resolution: it has no
time, only `upper_us`. An op no event timed (XNNPACK fused it into a neighbour, whose event carries
its work) has neither. Whatever the timed ops do not account for stays in the block's
`unattributed_us`. A producer that spreads that time over untimed ops writes it to `estimated_us`
with `estimate` saying how, never to the measured fields.

Row fields: `timing` ("measured", "below_resolution" or "fused"), `avg_us`, `median_us`, `min_us`
(per run, null unless measured), `resolved_runs` (the runs in which its events read above 0),
`events` (how many events timed it per run), `upper_us` (below resolution: it took less than this
per run), `share` (avg_us / the block's total_us, null when either is absent); optionally
`estimated_us` with `estimate`.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping, Sequence
from statistics import median
from typing import TypedDict

from typing_extensions import NotRequired

# 2: total_us is the Invoke time less the profiler's measured cost (invoke_us keeps the raw figure).
# 3: XNNPACK operator times carry the half µs their rounding down drops on average.
# 4: no added time: an op that reads 0 in every run is below resolution (no time, an upper bound);
#    each row says how it was timed; every block is checked (block_check.py) and says if it is valid.
SCHEMA_VERSION = 4
RESOLUTION_US = 1.0  # every op event's time is a whole number of µs
MEASURED, BELOW_RESOLUTION, FUSED = "measured", "below_resolution", "fused"
TIMINGS = (MEASURED, BELOW_RESOLUTION, FUSED)


class OpTiming(TypedDict):
    """An op row's timing fields (the module's docstring), in the order a row holds them."""

    events: int
    resolved_runs: int
    avg_us: float | None
    median_us: float | None
    min_us: float | None
    timing: str
    upper_us: NotRequired[float]


class TensorJson(TypedDict, total=False):
    shape: list[int]
    dtype: str
    constant: bool


class OpRow(TypedDict, total=False):
    """One op of a checked block as its readers see it (a runtime writes other keys beside these)."""

    index: int
    type: str
    key: str  # the graph op's key (ops/graph.py): what the predictor's table is keyed on
    kernels: list[str]  # the events that timed it: "builtin" for a node event, else the delegate's operator
    params: dict[str, str | int | float | None]
    flops: int
    bytes_moved: int
    inputs: list[TensorJson]
    outputs: list[TensorJson]
    events: int | None
    resolved_runs: int | None
    avg_us: float | None
    median_us: float | None
    min_us: float | None
    timing: str
    upper_us: float
    share: float | None
    estimated_us: float
    estimate: str


class OpsBlockJson(TypedDict, total=False):
    """An ops block in the current schema, checked (block_versions.read_block), as its readers see it."""

    schema_version: int
    kernel_mode: str
    error: str
    valid: bool
    invalid_reasons: list[str]
    ops: list[OpRow]
    graph_ops_mapped: bool  # false: its rows are not the graph's ops (ExecuTorch's ETDump)
    flops: float
    total_us: float | None
    ops_sum_us: float
    unattributed_us: float | None
    upgraded_from: int


class OpsTotals(TypedDict):
    """A block's sums over its rows (totals)."""

    total_us: float | None
    ops_sum_us: float
    unattributed_us: float | None
    timings: dict[str, int]
    below_resolution_upper_us: float
    rounding_bound_us: float
    resolution_us: float


def op_timing(runs: list[float], events: int) -> OpTiming:
    """One op's timing fields from its time in each run (the sum of its events in that run)."""
    resolved = sum(1 for us in runs if us > 0)
    if not events or not runs:
        return OpTiming(events=events, resolved_runs=resolved, avg_us=None, median_us=None, min_us=None, timing=FUSED)
    if not resolved:
        return OpTiming(events=events, resolved_runs=resolved, avg_us=None, median_us=None, min_us=None,
                        timing=BELOW_RESOLUTION, upper_us=RESOLUTION_US * events)
    return OpTiming(events=events, resolved_runs=resolved, avg_us=round(sum(runs) / len(runs), 3),
                    median_us=round(float(median(runs)), 3), min_us=round(float(min(runs)), 3), timing=MEASURED)


def avg_us(row: Mapping[str, object]) -> float | None:
    """A measured row's avg_us (as written: an int stays an int), else None."""
    value = row.get("avg_us")
    return value if measured(row) and isinstance(value, (int, float)) else None


def measured(row: Mapping[str, object]) -> bool:
    return row.get("timing") == MEASURED and row.get("avg_us") is not None


def resolved_total(total_us: float, profiler_us: float | None, ops_sum_us: float = 0.0,
                   tolerance_us: float = 0.0) -> tuple[float | None, str | None]:
    """The run's own time: the runtime's total per run less the profiler's measured cost inside it,
    or None and why. None when that cost is as large as the total (a run of ops far under a µs each,
    where the profiler's per-event work is all the profiled run is made of), or when it leaves less
    than the ops' own measured sum (`ops_sum_us`, beyond the rounding `tolerance_us`): the cost is
    calibrated on another model and on a busy host it can come out too large; the ops' readings are
    this run's own, the total would not be."""
    net = total_us - (profiler_us or 0.0)
    if net > 0 and net + tolerance_us >= ops_sum_us:
        return round(net, 3), None
    if profiler_us is None:
        return None, f"the profiled run's total is {total_us:.1f} µs"
    if net > 0:
        return None, (f"the profiler's measured cost ({profiler_us:.1f} µs) leaves {net:.1f} µs of the profiled "
                      f"run's {total_us:.1f} µs, less than its ops' measured sum ({ops_sum_us:.1f} µs): the "
                      f"cost's calibration is off on this run, so the run's own time is not resolved")
    return None, (f"the profiler's measured cost ({profiler_us:.1f} µs) is not below the profiled run's "
                  f"{total_us:.1f} µs: the run's own time is below what this profile resolves")


def totals(rows: Sequence[MutableMapping[str, object]], total_us: float | None) -> OpsTotals:
    """The block's sums and each row's share, from its rows (measured ones only) and its total."""
    ops_sum = round(sum(us for r in rows if (us := avg_us(r)) is not None), 3)
    for r in rows:
        us = avg_us(r)
        r["share"] = round(us / total_us, 5) if us is not None and total_us else None
    counts = {t: sum(1 for r in rows if r.get("timing") == t) for t in TIMINGS}
    events = sum(_count(r.get("events")) for r in rows)
    return {"total_us": total_us, "ops_sum_us": ops_sum,
            # The time the measured ops do not account for: the runtime's own per-run work, the ops
            # below resolution, and what each event's rounding down to whole µs drops.
            "unattributed_us": None if total_us is None else round(total_us - ops_sum, 3),
            "timings": counts,
            "below_resolution_upper_us": round(sum(_upper(r.get("upper_us")) for r in rows), 3),
            # The ops' real time per run is within this of ops_sum_us (one resolution step per event).
            "rounding_bound_us": RESOLUTION_US * events,
            "resolution_us": RESOLUTION_US}


def _count(value: object) -> int:
    return int(value) if isinstance(value, (int, float, str)) and value else 0


def _upper(value: object) -> float:
    return value if isinstance(value, (int, float)) and value else 0.0
