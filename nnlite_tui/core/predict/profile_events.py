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


class Event(NamedTuple):
    tag: bytes
    event_type: int
    elapsed_time_us: int
    event_metadata1: int


@dataclass
class ProfiledOp:
    index: int  # node index (builtin) or the delegate's operator index (xnnpack)
    tag: str  # builtin op name ("CONV_2D") or XNNPACK operator ("Convolution (NHWC, F32) IGEMM")
    kind: str  # "node" or "delegate_op"
    samples_us: list[int] = field(default_factory=list)

    @property
    def avg_us(self) -> float:
        return sum(self.samples_us) / len(self.samples_us) if self.samples_us else 0.0

    @property
    def min_us(self) -> float:
        return float(min(self.samples_us)) if self.samples_us else 0.0


def aggregate(events: list[Event]) -> tuple[list[ProfiledOp], list[int]]:
    """Per node (or delegate operator) one sample per run, in first-seen order (the run order), and
    each run's total from the runtime's "Invoke" event, which opens the run's events."""
    ops: dict[tuple[str, int], ProfiledOp] = {}
    invokes: list[int] = []
    for ev in events:
        if ev.tag == b"Invoke" and ev.event_type == DEFAULT_EVENT:
            invokes.append(int(ev.elapsed_time_us))
            continue
        if ev.event_type == OPERATOR_INVOKE_EVENT:
            kind = "node"
        elif ev.event_type in (DELEGATE_OPERATOR_INVOKE_EVENT, DELEGATE_PROFILED_OPERATOR_INVOKE_EVENT):
            kind = "delegate_op"
        else:
            continue
        if not invokes:
            continue  # an op event before any run began: not from the profiled runs
        key = (kind, int(ev.event_metadata1))
        tag = (ev.tag or b"").decode(errors="replace")
        op = ops.setdefault(key, ProfiledOp(index=int(ev.event_metadata1), tag=tag, kind=kind))
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
