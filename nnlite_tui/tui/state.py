"""RunView: what the console knows about a run, folded from pipeline events.

Pure Python (no Textual) so it is shared by a local run and an attached one, and tested directly.
Every pane renders from this one view; the App only feeds it events.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from collections import Counter, OrderedDict, defaultdict, deque
from dataclasses import dataclass, field
from typing import Callable, Iterable

from nnlite_tui.core.events import (
    TERMINAL,
    DeviceState,
    Event,
    ModelLog,
    ModelStatus,
    Recovery,
    ReferenceTimed,
    RoundFinished,
    RunControl,
    RunFinished,
    RunStarted,
    StageFinished,
    StageStarted,
)
from nnlite_tui.core.progress import parse_phase_line
from nnlite_tui.core.run.eta import Eta, EtaEstimator
from nnlite_tui.tui.live_phases import LivePhases, follow
from nnlite_tui.tui.log_filter import LogFilter

IN_FLIGHT = ("converting", "benchmarking")
ACTIVE = ("converting", "converted", "benchmarking")  # worked on in this session (not just reported)
LOG_LINES_PER_MODEL = 500
LOGS_KEPT = 64  # models whose log lines stay in memory
LOG_FILE_TAIL_BYTES = 256 << 10
ECHO_SECONDS = 5.0
RATE_WINDOW = 200  # completions
COUNTDOWN_GRACE_S = 5.0  # a tick this late after the previous one's end still continues its line
REFERENCES_KEPT = 24  # reference figures per device for its trend
SLOW_FACTOR = 3.0  # a conversion in flight this many times longer than the median is named as slow
SLOW_MIN_S = 10.0  # ... and at least this long (a run of one-second conversions has no slow one at 3 s)
SLOW_AFTER = 3  # conversions finished before the median is worth comparing against
CONVERSIONS_KEPT = 1000  # the latest conversions' seconds, for that median


@dataclass
class ModelRow:
    name: str
    order: int
    status: str = "queued"
    attempt: int = 0
    device: str | None = None
    median_ms: float | None = None
    error: str | None = None
    flags: tuple[str, ...] = ()
    stage: str | None = None
    stages: dict[str, tuple[bool, float, str]] = field(default_factory=dict)
    updated: float = 0.0
    active: bool = False
    skip_asked: bool = False  # the operator asked to skip it; the runner has not yet


class RunView:
    """Models, devices, notable events and progress of one run."""

    def __init__(self, clock: Callable[[], float] = time.time):
        self.clock = clock
        self.run_dir: str | None = None
        self.models: dict[str, ModelRow] = {}
        self.devices: dict[str, DeviceState] = {}
        self.logs: OrderedDict[str, deque[str]] = OrderedDict()  # the LOGS_KEPT latest models' lines
        self.notable: deque[Event] = deque(maxlen=500)
        self.started_at: float | None = None
        self.last_event_ts = 0.0
        self.holds_conversions = False  # the runner stops conversions while a host benchmark times
        self.finished: RunFinished | None = None
        self.paused = False
        self.stopping = False
        self.runner_alive: bool | None = None  # attached: does a process still own the run?
        self.last_in_flight: str | None = None
        self.flying: dict[str, float] = {}  # models in flight -> when they got there
        self.entered: dict[str, float] = {}  # models in flight -> when they entered it (not a later stage)
        self.rate_since: float | None = None  # completions are counted from here
        self._completions: deque[float] = deque(maxlen=RATE_WINDOW)
        self._last_control: tuple[str, str | None, float] | None = None
        self.status_counts: Counter[str] = Counter()
        # Folding a stored snapshot: its failures are history (the queue shows them), not events.
        self.replaying = False
        self.log_filter = LogFilter()
        self.fresh_lines: defaultdict[str, list[str]] = defaultdict(list)  # shown lines not yet on screen
        self._countdowns: dict[tuple[str, str], Recovery] = {}  # the latest tick of each countdown
        # Each device's reference-model medians (ms) in time order: its drift over the run.
        self.references: defaultdict[str, deque[float]] = defaultdict(lambda: deque(maxlen=REFERENCES_KEPT))
        self._paused_at: float | None = None  # when the operator's pause in force began
        self._pauses: deque[tuple[float, float]] = deque(maxlen=1000)  # the operator's earlier pauses
        self.phases: dict[str, LivePhases] = {}  # units in flight -> the phases their job has reached
        self.conversion_s: deque[float] = deque(maxlen=CONVERSIONS_KEPT)  # finished, not from the cache
        self.estimator = EtaEstimator()
        self.eta_version = 0  # events folded into the estimator: its figure is recomputed after one
        self._eta_cache: tuple[tuple[int, int], Eta | None] | None = None

    # --- folding events ---
    def apply(self, event: Event) -> None:
        if event.ts > self.last_event_ts:
            self.last_event_ts = event.ts
        if not isinstance(event, (ModelLog, RoundFinished)):
            self.estimator.fold(event)
            self.eta_version += 1
        if isinstance(event, ModelLog):
            mark = parse_phase_line(event.line)
            if mark is not None and event.model in self.flying:
                follow(self.phases, event.model, event.stage, mark, event.ts)
            line = self.log_filter.keep(event.model, event.line)
            if line is not None:
                self._log_of(event.model).append(line)
                self.fresh_lines[event.model].append(line)
        elif isinstance(event, ModelStatus):
            self._on_status(event)
        elif isinstance(event, StageStarted):
            row = self.row(event.model)
            row.stage, row.updated = event.stage, event.ts
            self.last_in_flight = event.model
        elif isinstance(event, StageFinished):
            self.row(event.model).stages[event.stage] = (event.ok, event.seconds, event.detail)
            if event.stage == "convert" and event.ok and event.detail != "cached":
                self.conversion_s.append(event.seconds)
        elif isinstance(event, RoundFinished):
            median = "invalid" if event.median_ms is None else f"median {event.median_ms:.4g} ms"
            line = f"[nnlite] round {event.round} of {event.rounds} on {event.device}: {median}"
            self._log_of(event.model).append(line)
            self.fresh_lines[event.model].append(line)
        elif isinstance(event, ReferenceTimed):
            if event.median_ms is not None:
                self.references[event.serial].append(event.median_ms)
        elif isinstance(event, DeviceState):
            self.devices[event.serial] = event
            if event.state in ("lost", "offline"):
                self.notable.appendleft(event)
        elif isinstance(event, Recovery):
            self._on_recovery(event)
        elif isinstance(event, RunControl):
            self._on_control(event)
        elif isinstance(event, RunStarted):
            self._on_started(event)
        elif isinstance(event, RunFinished):
            self.finished = event
            self.notable.appendleft(event)

    def apply_all(self, events: Iterable[Event]) -> None:
        for event in events:
            self.apply(event)

    def _log_of(self, model: str) -> deque[str]:
        lines = self.logs.get(model)
        if lines is None:
            lines = self.logs[model] = deque(maxlen=LOG_LINES_PER_MODEL)
            if len(self.logs) > LOGS_KEPT:  # days of models would not fit in memory; their files stay
                self.logs.popitem(last=False)
        else:
            self.logs.move_to_end(model)
        return lines

    def log_lines(self, model: str) -> list[str]:
        """A model's latest log lines: from memory, else (not in flight) the end of RUN_DIR/logs/<model>.log."""
        if model in self.logs:
            return list(self.logs[model])
        if not self.run_dir or model in self.flying:
            # In flight, its stage's lines are on their way as events: read from the file as well, the
            # ones already written but not yet sent would show twice.
            return []
        try:
            with open(Path(self.run_dir, "logs", f"{model}.log"), "rb") as f:
                f.seek(0, 2)
                f.seek(max(0, f.tell() - LOG_FILE_TAIL_BYTES))
                text = f.read().decode("utf-8", errors="replace")
        except OSError:
            return []
        return self.log_filter.keep_all(model, text.splitlines())[-LOG_LINES_PER_MODEL:]

    def take_fresh_lines(self) -> dict[str, list[str]]:
        """Log lines kept since the last call, by model (for the log pane to append)."""
        fresh, self.fresh_lines = self.fresh_lines, defaultdict(list)
        return fresh

    def row(self, name: str) -> ModelRow:
        row = self.models.get(name)
        if row is None:
            row = self.models[name] = ModelRow(name, order=len(self.models))
            self.status_counts[row.status] += 1
        return row

    def _on_recovery(self, event: Recovery) -> None:
        """A countdown (cool-down) reports every few seconds: its ticks update one line in place."""
        if event.countdown_s is None:
            self.notable.appendleft(event)
            return
        key = (event.action, event.target)
        last = self._countdowns.get(key)
        self._countdowns[key] = event
        if last is not None and event.ts <= last.ts + (last.countdown_s or 0) + COUNTDOWN_GRACE_S:
            try:
                self.notable[self.notable.index(last)] = event
                return
            except ValueError:
                pass  # the earlier tick has left the bounded history: start a new line
        self.notable.appendleft(event)

    def _on_started(self, event: RunStarted) -> None:
        self.run_dir = event.run_dir
        self.holds_conversions = event.holds_conversions
        self.started_at = event.ts
        self.finished = None
        self.stopping = False
        self.paused = False  # a (re)started runner starts running
        self._end_pause(event.ts)
        for name in event.models:
            self.row(name)
        self.rate_since = event.ts
        self._completions.clear()
        self.notable.appendleft(event)

    def _on_status(self, event: ModelStatus) -> None:
        row = self.row(event.model)
        was_terminal = row.status in TERMINAL
        self.status_counts[row.status] -= 1
        self.status_counts[event.status] += 1
        row.status, row.attempt, row.updated = event.status, event.attempt, event.ts
        if event.device is not None:
            row.device = event.device
        if event.median_ms is not None:
            row.median_ms = event.median_ms
        row.error = event.error if event.status == "failed" else None
        if event.status in TERMINAL:
            row.skip_asked = False
        row.flags = event.flags
        if event.status in IN_FLIGHT:
            self.last_in_flight = event.model
            if event.model not in self.flying:
                self.entered[event.model] = event.ts
            self.flying[event.model] = event.ts
        else:
            self.flying.pop(event.model, None)
            self.entered.pop(event.model, None)
            self.phases.pop(event.model, None)
        if event.status in TERMINAL and not was_terminal and row.active:
            self._completions.append(event.ts)
        row.active = event.status in ACTIVE
        if event.status == "failed" and not self.replaying:
            self.notable.appendleft(event)

    def _on_control(self, event: RunControl) -> None:
        last, arrived = self._last_control, self.clock()
        self._last_control = (event.action, event.model, arrived)
        # A skip of "whatever is in flight" (model None) is shown with the models' names by the console.
        if (last is not None and arrived - last[2] < ECHO_SECONDS and last[0] == event.action
                and (last[1] == event.model or None in (last[1], event.model))):
            return  # the runner's echo of the operator's own command (or its second note of it), already shown
        if event.action in ("skip", "retry") and event.model:
            for name in event.model.split(", "):  # a skip of what is in flight names each model
                row = self.models.get(name)
                if row is not None:
                    row.skip_asked = event.action == "skip"
        if event.action == "pause":
            self.paused = True
            if self._paused_at is None:
                self._paused_at = event.ts
        elif event.action == "resume":
            self.paused = False
            self._end_pause(event.ts)
        elif event.action in ("stop_after_current", "stop_now"):
            self.stopping = True
            self.paused = False
            self._end_pause(event.ts)
        self.notable.appendleft(event)

    def _end_pause(self, ts: float) -> None:
        if self._paused_at is not None:
            self._pauses.append((self._paused_at, ts))
            self._paused_at = None

    def paused_within(self, start: float, end: float) -> float:
        """Seconds of [start, end] the run spent paused by the operator."""
        spans = list(self._pauses) + ([(self._paused_at, end)] if self._paused_at is not None else [])
        return sum(max(0.0, min(b, end) - max(a, start)) for a, b in spans)

    # --- derived figures ---
    def counts(self) -> Counter[str]:
        """Models by status (kept up to date as events fold in; do not modify)."""
        return self.status_counts

    def in_flight(self) -> list[str]:
        return sorted(self.flying, key=lambda name: self.models[name].order)

    def followed(self) -> str | None:
        """The model whose log to follow: the latest to go in flight that still is, else the last one.
        "Go in flight" is entering it, not a stage's start: with one unit converting and another
        benchmarking, following each stage's events switched between them several times a second."""
        if not self.flying:
            return self.last_in_flight
        return max(self.flying, key=lambda name: (self.entered.get(name, 0.0), self.models[name].order))

    def elapsed(self) -> float:
        """Seconds the run has been going: to its end, or (attached to a run no process owns any more)
        to its last event, not on with the clock of a run that is not running."""
        if self.started_at is None:
            return 0.0
        if self.finished:
            end = self.finished.ts
        elif self.runner_alive is False:
            end = self.last_event_ts
        else:
            end = self.clock()
        return max(0.0, end - self.started_at)

    def throughput_per_hour(self) -> float | None:
        """Models finished per hour: over this session, or over the last RATE_WINDOW completions
        once there are that many (the rate of a days-long run drifts). Models that were already
        finished when the runner (re)started do not count."""
        count = len(self._completions)
        if count == 0 or self.rate_since is None:
            return None
        since = self.rate_since
        if count == self._completions.maxlen:
            since, count = self._completions[0], count - 1
        end = self.finished.ts if self.finished else self.clock()
        span = end - since - self.paused_within(since, end)  # a pause is not the run going slower
        return count * 3600.0 / span if span >= 1.0 else None

    def eta(self) -> Eta | None:
        """Running time left (core/run/eta.py: what remains, priced by its measured cost); by count
        (units left at the rate seen) when no cost is known, e.g. a log of an older release."""
        if self.finished or self.runner_alive is False:
            return None
        now = self.clock()
        key = (self.eta_version, int(now))
        if self._eta_cache is not None and self._eta_cache[0] == key:
            return self._eta_cache[1]
        eta = self.estimator.estimate(now)
        if eta is None:
            rate = self.throughput_per_hour()
            if rate:
                counts = self.counts()
                left = (len(self.models) - sum(counts[s] for s in TERMINAL)) * 3600.0 / rate
                eta = Eta(left, left, left, basis="count")
        self._eta_cache = (key, eta)
        return eta

    def eta_seconds(self) -> float | None:
        eta = self.eta()
        return None if eta is None else eta.seconds

    def held_by(self) -> str | None:
        """The unit a host benchmark times now, while conversions are held for it (--isolation pause)."""
        if not self.holds_conversions:
            return None
        return next((d.model for d in self.devices.values() if d.kind == "host" and d.state == "busy" and d.model),
                    None)

    def slow_conversion(self) -> tuple[str, float, float] | None:
        """The longest conversion in flight when it has run SLOW_FACTOR times the median conversion of
        this run (and SLOW_MIN_S at least): (unit, seconds so far, the median); else None."""
        if len(self.conversion_s) < SLOW_AFTER:
            return None
        converting = [(name, since) for name, since in self.flying.items()
                      if self.models[name].status == "converting"]
        if not converting:
            return None
        name, since = min(converting, key=lambda item: item[1])
        took, median = self.clock() - since, statistics.median(self.conversion_s)
        return (name, took, median) if took >= max(SLOW_MIN_S, SLOW_FACTOR * median) else None
