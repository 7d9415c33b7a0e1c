"""Pipeline events: frozen dataclasses, and the Reporter protocol that receives them.

The pipeline emits these from its worker threads; a Reporter turns them into console lines,
Textual messages or lines of RUN_DIR/events.jsonl. Every event round-trips through
`to_dict()` / `event_from_dict()` so that a console attached to a run owned by another
process can replay the run's events.jsonl.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Protocol

# Model statuses shown in the queue; the last three are terminal.
STATUSES = ("queued", "converting", "converted", "benchmarking", "done", "failed", "skipped")
TERMINAL = ("done", "failed", "skipped")


@dataclass(frozen=True)
class Event:
    ts: float = field(default_factory=time.time, kw_only=True)

    def to_dict(self) -> dict[str, object]:
        return {"type": type(self).__name__, **asdict(self)}


@dataclass(frozen=True)
class RunStarted(Event):
    run_dir: str
    models: tuple[str, ...]
    devices: tuple[str, ...]
    resumed: bool = False
    holds_conversions: bool = False  # conversions are stopped while a host benchmark times (--isolation pause)


@dataclass(frozen=True)
class ModelStatus(Event):
    """A model moved to another status (see STATUSES)."""

    model: str
    status: str
    attempt: int = 0
    device: str | None = None
    median_ms: float | None = None
    error: str | None = None  # "stage: Type: first line" for failed models
    flags: tuple[str, ...] = ()  # facts that qualify a result, e.g. "throttled" (the device throttled while timing)


@dataclass(frozen=True)
class StageStarted(Event):
    model: str
    stage: str
    device: str | None = None
    attempt: int = 1


@dataclass(frozen=True)
class StageFinished(Event):
    model: str
    stage: str
    ok: bool
    seconds: float
    device: str | None = None
    detail: str = ""
    # A conversion's {phase: {"s", "cpu_s"}} (core/convert/phases.py); None for other stages.
    phases: dict[str, dict[str, float]] | None = None
    isolated_s: float | None = None  # a host benchmark: how long other work was held back (--isolation)


@dataclass(frozen=True)
class RoundFinished(Event):
    """One round of a unit's benchmark on a device ended (bench/rounds.py)."""

    model: str
    device: str
    round: int
    rounds: int  # the rounds the unit is to get now (more when it was found unstable)
    median_ms: float | None  # None: the round's result was invalid
    seconds: float = 0.0


@dataclass(frozen=True)
class ReferenceTimed(Event):
    """A device timed the reference model (bench/reference.py): its drift over the run is on record."""

    serial: str
    median_ms: float | None  # None: the reference benchmark failed (`detail` says why)
    seconds: float  # what it cost, start-up included
    detail: str = ""
    memory_ms: float | None = None  # the memory-bound reference (bench/reference_memory.py), when it ran


@dataclass(frozen=True)
class ModelLog(Event):
    """One line of a model's conversion or benchmark log."""

    model: str
    stage: str
    line: str


@dataclass(frozen=True)
class DeviceState(Event):
    """A device's state: adb state, boot phase, the model in flight, and readings when known."""

    serial: str
    state: str  # "absent" | "offline" | "booting" | "device" | "busy" | "idle" | "lost"
    kind: str = "host"  # "host" | "phone" | "emulator" | "simulated"
    phase: str | None = None  # boot phase while booting
    boot_elapsed_s: float | None = None
    boot_completed: bool | None = None
    model: str | None = None
    temperature_c: float | None = None
    mem_available_kb: int | None = None
    detail: str = ""


@dataclass(frozen=True)
class Recovery(Event):
    """A failure or recovery action: retry, cool-down (with countdown), reconnect, restart, re-exec."""

    action: str
    target: str
    detail: str = ""
    severity: str = "warning"
    countdown_s: float | None = None


@dataclass(frozen=True)
class RunControl(Event):
    """The run was paused, resumed, asked to stop, or a model was skipped/retried by the operator."""

    action: str  # "pause" | "resume" | "skip" | "retry" | "stop_after_current" | "stop_now"
    model: str | None = None


@dataclass(frozen=True)
class ConversionCost(Event):
    """The ranking's estimate of a unit's conversion (CPU seconds on the host it was fitted on): the ETA's price."""

    model: str
    seconds: float


@dataclass(frozen=True)
class RunFinished(Event):
    counts: dict[str, int]
    seconds: float
    stopped: bool = False


EVENT_TYPES: dict[str, type[Event]] = {
    cls.__name__: cls
    for cls in (RunStarted, ModelStatus, StageStarted, StageFinished, RoundFinished, ReferenceTimed, ModelLog,
                DeviceState, Recovery, RunControl, ConversionCost, RunFinished)
}


def event_from_dict(data: Mapping[str, Any]) -> Event:
    """Rebuild an event written by to_dict(); unknown keys are ignored so newer files still load."""
    cls = EVENT_TYPES.get(data.get("type", ""))
    if cls is None:
        raise ValueError(f"unknown event type {data.get('type')!r}")
    names = {f.name for f in fields(cls)}
    kwargs = {k: v for k, v in data.items() if k in names}
    for key in ("models", "devices", "flags"):
        if key in kwargs and isinstance(kwargs[key], list):
            kwargs[key] = tuple(kwargs[key])
    return cls(**kwargs)


class Reporter(Protocol):
    def emit(self, event: Event) -> None: ...


class MultiReporter:
    """Fans one event out to several reporters (e.g. the TUI and events.jsonl)."""

    def __init__(self, *reporters: Reporter):
        self.reporters = list(reporters)

    def emit(self, event: Event) -> None:
        for reporter in self.reporters:
            reporter.emit(event)


class RecordingReporter:
    """Keeps every event; for tests and for summaries."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def emit(self, event: Event) -> None:
        self.events.append(event)

    def of(self, cls: type[Event]) -> list[Any]:
        return [e for e in self.events if isinstance(e, cls)]
