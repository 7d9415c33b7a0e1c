"""Profiler events as plain Python values, grouped per run and per op (no C API here: op_profile
copies the events out of LiteRT and hands them over)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

# tflite::Profiler::EventType values (litert_profiler_event.h).
DEFAULT_EVENT = 1
OPERATOR_INVOKE_EVENT = 1 << 1
DELEGATE_OPERATOR_INVOKE_EVENT = 1 << 2
DELEGATE_PROFILED_OPERATOR_INVOKE_EVENT = 1 << 3
# An event still open when the profiler stopped has no end time: an absurd elapsed value.
MAX_EVENT_US = 3_600_000_000
STEADY_FACTOR = 1.25
# The event LiteRT's compiled model (2.3) records just before the interpreter's "Invoke" in every run.
REGISTRATION_TAG = b"LiteRT::Run[buffer registration]"


class Event(NamedTuple):
    tag: bytes
    event_type: int
    elapsed_time_us: int
    event_metadata1: int
    start_timestamp_us: int = 0  # set for events the runtime times itself (DEFAULT), 0 for XNNPACK's


@dataclass
class ProfiledOp:
    index: int  # node index (builtin) or the delegate's operator index (xnnpack)
    tag: str  # builtin op name ("CONV_2D") or XNNPACK operator ("Convolution (NHWC, F32) IGEMM")
    kind: str  # "node" or "delegate_op"
    samples_us: list[int] = field(default_factory=list)
    partition: int = 0  # delegate ops: which of the run's delegate partitions, in run order

    @property
    def avg_us(self) -> float:
        return sum(self.samples_us) / len(self.samples_us) if self.samples_us else 0.0

    @property
    def min_us(self) -> float:
        return float(min(self.samples_us)) if self.samples_us else 0.0


def aggregate(events: list[Event]) -> tuple[list[ProfiledOp], list[int]]:
    """Per node (or delegate operator) one sample per run, in first-seen order (the run order), and
    each run's total from the runtime's "Invoke" event, which opens the run's events.

    Each delegate partition (a graph XNNPACK split in two around an op it does not take) numbers its
    operators from 0, so an operator index that does not grow within a run starts the next partition."""
    ops: dict[tuple[str, int, int], ProfiledOp] = {}
    invokes: list[int] = []
    partition, last_index = 0, -1
    for ev in events:
        if ev.tag == b"Invoke" and ev.event_type == DEFAULT_EVENT:
            invokes.append(int(ev.elapsed_time_us))
            partition, last_index = 0, -1
            continue
        if ev.event_type == OPERATOR_INVOKE_EVENT:
            kind = "node"
        elif ev.event_type in (DELEGATE_OPERATOR_INVOKE_EVENT, DELEGATE_PROFILED_OPERATOR_INVOKE_EVENT):
            kind = "delegate_op"
        else:
            continue
        if not invokes:
            continue  # an op event before any run began: not from the profiled runs
        index = int(ev.event_metadata1)
        if kind == "delegate_op":
            if index <= last_index:
                partition += 1
            last_index = index
        key = (kind, partition if kind == "delegate_op" else 0, index)
        tag = (ev.tag or b"").decode(errors="replace")
        op = ops.setdefault(key, ProfiledOp(index=index, tag=tag, kind=kind,
                                            partition=partition if kind == "delegate_op" else 0))
        op.samples_us.extend([0] * (len(invokes) - 1 - len(op.samples_us)))  # align to the run
        if len(op.samples_us) < len(invokes):
            op.samples_us.append(int(ev.elapsed_time_us))
        else:
            op.samples_us[-1] += int(ev.elapsed_time_us)  # the same op twice in one run (a loop)
    for op in ops.values():
        op.samples_us.extend([0] * (len(invokes) - len(op.samples_us)))
    return list(ops.values()), invokes


def steady_runs(invokes: list[int]) -> list[int]:
    """Indexes of the runs not preempted: total within STEADY_FACTOR of the fastest run (and complete).

    On a shared host a run the scheduler interrupts gains milliseconds that belong to no op, and under
    heavy load most runs are hit, so the fastest run, not the median one, is the reference; dropping
    the others keeps the per-op means and the total on the same footing."""
    valid = [t for t in invokes if t < MAX_EVENT_US]
    if not valid:
        return []
    limit = min(valid) * STEADY_FACTOR
    return [i for i, t in enumerate(invokes) if t < MAX_EVENT_US and t <= limit]


def median(values: list[float]) -> float:
    """The median (0.0 for no values)."""
    ordered = sorted(values)
    mid = len(ordered) // 2
    if not ordered:
        return 0.0
    return float(ordered[mid]) if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def fastest_quarter(values: list[float]) -> float:
    count = max(1, len(values) // 4)
    return sum(sorted(values)[:count]) / count


def snapshot_us(events: list[Event]) -> float | None:
    """The profiler's cost of one memory snapshot, measured from the runs' own timestamps.

    LiteRT's profile buffer takes a memory snapshot (getrusage, /proc/self/status, mallinfo) when a
    DEFAULT event begins, after its start time is read, and again when it ends, after its end time is
    read. So the time from the end of the event just before "Invoke" in the same run (the compiled
    model's buffer registration) to the start of "Invoke" is one such snapshot (plus the few
    instructions between the two calls), and the same snapshot lies inside every "Invoke" event's
    elapsed time. None when no run has that event."""
    gaps: list[float] = []
    previous: Event | None = None
    for ev in events:
        if ev.event_type != DEFAULT_EVENT:
            continue
        if ev.tag == b"Invoke" and previous is not None and previous.tag == REGISTRATION_TAG \
                and previous.elapsed_time_us < MAX_EVENT_US:
            gap = ev.start_timestamp_us - (previous.start_timestamp_us + previous.elapsed_time_us)
            if gap >= 0:
                gaps.append(gap)
        previous = ev
    return median(gaps) if gaps else None


def profiler_cost_us(snapshot: float | None, collection_us: float) -> float | None:
    """The profiler's own time inside one run's "Invoke" event: the memory snapshot taken when
    "Invoke" begins (snapshot_us, from this pass's timestamps) and the per-op collection and storing
    of the events (profiler_calibration, for this pass's op events). None when the snapshot cannot
    be timed."""
    return None if snapshot is None else snapshot + collection_us
