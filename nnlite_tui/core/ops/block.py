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

from statistics import median
from typing import Any

# 2: total_us is the Invoke time less the profiler's measured cost (invoke_us keeps the raw figure).
# 3: XNNPACK operator times carry the half µs their rounding down drops on average.
# 4: no added time: an op that reads 0 in every run is below resolution (no time, an upper bound);
#    each row says how it was timed; every block is checked (block_check.py) and says if it is valid.
SCHEMA_VERSION = 4
RESOLUTION_US = 1.0  # every op event's time is a whole number of µs
MEASURED, BELOW_RESOLUTION, FUSED = "measured", "below_resolution", "fused"
TIMINGS = (MEASURED, BELOW_RESOLUTION, FUSED)


def op_timing(runs: list[float], events: int) -> dict[str, Any]:
    """One op's timing fields from its time in each run (the sum of its events in that run)."""
    resolved = sum(1 for us in runs if us > 0)
    row: dict[str, Any] = {"events": events, "resolved_runs": resolved, "avg_us": None, "median_us": None,
                           "min_us": None}
    if not events or not runs:
        return {**row, "timing": FUSED}
    if not resolved:
        return {**row, "timing": BELOW_RESOLUTION, "upper_us": RESOLUTION_US * events}
    return {**row, "timing": MEASURED, "avg_us": round(sum(runs) / len(runs), 3),
            "median_us": round(float(median(runs)), 3), "min_us": round(float(min(runs)), 3)}


def measured(row: dict[str, Any]) -> bool:
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


def totals(rows: list[dict[str, Any]], total_us: float | None) -> dict[str, Any]:
    """The block's sums and each row's share, from its rows (measured ones only) and its total."""
    ops_sum = round(sum(r["avg_us"] for r in rows if measured(r)), 3)
    for r in rows:
        r["share"] = round(r["avg_us"] / total_us, 5) if measured(r) and total_us else None
    counts = {t: sum(1 for r in rows if r.get("timing") == t) for t in TIMINGS}
    events = sum(int(r.get("events") or 0) for r in rows)
    return {"total_us": total_us, "ops_sum_us": ops_sum,
            # The time the measured ops do not account for: the runtime's own per-run work, the ops
            # below resolution, and what each event's rounding down to whole µs drops.
            "unattributed_us": None if total_us is None else round(total_us - ops_sum, 3),
            "timings": counts,
            "below_resolution_upper_us": round(sum(r.get("upper_us") or 0.0 for r in rows), 3),
            # The ops' real time per run is within this of ops_sum_us (one resolution step per event).
            "rounding_bound_us": RESOLUTION_US * events,
            "resolution_us": RESOLUTION_US}
