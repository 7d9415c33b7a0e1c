"""RUN_DIR/events.jsonl, read back: the one reader for `nnlite status` and an attached console.

The runner appends every event as a JSON line (core.jsonl.JsonlReporter). A line cut short by
kill -9 at the end, or one written by a newer version, is counted and passed over: the rest of
the log still counts.
"""

from __future__ import annotations

import json
import mmap
import os
import threading
from collections.abc import Callable
from pathlib import Path

from nnlite_tui.core.outcomes import error_text
from nnlite_tui.core.events import Event, ModelStatus, RunControl, RunStarted, event_from_dict
from nnlite_tui.core.run_dir import EVENTS_FILE, STATE_FILE

POLL_SECONDS = 0.2
MAX_BATCH = 2000  # events per message, so replaying a long log keeps the UI responsive
FULL_REPLAY_BYTES = 8 << 20  # a longer log is not replayed: the store says where each model is
TAIL_BYTES = 1 << 20  # the end of a long log: recent recoveries, device states, logs
STATUS_MARK = b'"type": "ModelStatus"'  # core.jsonl writes "type" first


class EventTail:
    """Reads RUN_DIR/events.jsonl from the start, then follows it; hands events over in batches."""

    def __init__(self, run_dir: str | os.PathLike, deliver: Callable[[list[Event]], None]):
        self.path = Path(run_dir) / EVENTS_FILE
        self.deliver = deliver
        self.stop = threading.Event()
        self.offset = 0
        self.bad_lines = 0

    def start(self) -> tuple[list[Event], bool]:
        """What to show first: (events, from_snapshot).

        A log up to FULL_REPLAY_BYTES is replayed whole by follow(). A longer one (a run of days),
        or none (a run started from a console), gives way to the store's snapshot of every model
        plus the events at the end of the log; follow() then goes on from the end.
        """
        size = self.path.stat().st_size if self.path.exists() else 0
        if 0 < size <= FULL_REPLAY_BYTES or not Path(self.path.parent, STATE_FILE).exists():
            return [], False
        self.offset = size
        # The store is newer than any status in the tail (snapshot_events drops them): not parsed.
        data = self._read_range(max(0, size - TAIL_BYTES), size, size > TAIL_BYTES) if size else b""
        tail = self._parse(data, skip=STATUS_MARK)
        return snapshot_events(self.path.parent, tail), True

    def _read_range(self, start: int, end: int, whole_lines_only: bool) -> bytes:
        with open(self.path, "rb") as f:
            f.seek(start)
            data = f.read(end - start)
        if whole_lines_only:  # the first line was cut by the seek
            data = data[data.find(b"\n") + 1:]
        return data[:data.rfind(b"\n") + 1]

    def _parse(self, data: bytes, skip: bytes | None = None) -> list[Event]:
        events, bad = parse_events(data, skip)
        self.bad_lines += bad
        return events

    def read_new(self) -> list[Event]:
        """Whole lines appended since the last call; a partial last line waits for the next call."""
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except FileNotFoundError:
            return []
        end = data.rfind(b"\n") + 1
        self.offset += end
        return self._parse(data[:end])

    def follow(self) -> None:
        """Deliver new lines until `stop` is set (from a thread worker)."""
        while not self.stop.is_set():
            events = self.read_new()
            for i in range(0, len(events), MAX_BATCH):
                self.deliver(events[i:i + MAX_BATCH])
            if not events:
                self.stop.wait(POLL_SECONDS)


def snapshot_events(run_dir: Path, tail: list[Event]) -> list[Event]:
    """The run as events: its last start, every model's stored state, then what the tail adds."""
    from nnlite_tui.core.store.files import load_snapshot  # tinydb: only when there is a store to read

    config, records = load_snapshot(run_dir)
    starts = [i for i, e in enumerate(tail) if isinstance(e, RunStarted)]
    recent = tail[starts[-1] + 1:] if starts else tail
    names = tuple(r["name"] for r in records)
    devices = tuple((config or {}).get("devices") or ())
    last_start = tail[starts[-1]] if starts else None
    first = last_start if isinstance(last_start, RunStarted) else RunStarted(str(run_dir), names, devices,
                                                                              resumed=True)
    events: list[Event] = [RunStarted(first.run_dir, names, first.devices or devices, first.resumed, ts=first.ts)]
    for r in records:
        err = r.get("error")
        error = error_text(err.get("stage"), err.get("type"), err.get("message")) if isinstance(err, dict) else None
        events.append(ModelStatus(r["name"], r.get("status", "queued"), attempt=r.get("attempts") or 0,
                                  device=r.get("device"), median_ms=r.get("median_ms"), error=error))
    # The store is newer than any status in the tail; everything else in the tail is kept.
    events += [e for e in recent if not isinstance(e, ModelStatus)]
    return events


def parse_events(data: bytes, skip: bytes | None = None) -> tuple[list[Event], int]:
    """The events in whole JSON lines (less those whose start holds `skip`), and how many lines
    could not be read."""
    events: list[Event] = []
    bad = 0
    for raw in data.splitlines():
        if not raw.strip() or (skip is not None and skip in raw[:40]):
            continue
        try:
            events.append(event_from_dict(json.loads(raw)))
        except (json.JSONDecodeError, ValueError, TypeError):
            bad += 1
    return events, bad


# ----- `nnlite status`: read from the end, since a run of days leaves a log of hundreds of MB -----
CHUNK = 256 << 10
LOG_MARK = b'"type": "ModelLog"'  # JsonlReporter writes "type" first, as json.dumps(to_dict())
COST_MARK = b'"type": "ConversionCost"'  # the ETA's prices: not news to a reader of the last events


def _parse_line(line: bytes) -> Event | None:
    events, _ = parse_events(line)
    return events[0] if events else None  # a line cut short by kill -9, or from a newer writer


def last_events(run_dir: Path, count: int) -> list[Event]:
    """The last `count` events other than log lines and cost estimates, oldest first."""
    path = Path(run_dir) / EVENTS_FILE
    if count <= 0 or not path.exists():
        return []
    found: list[Event] = []
    with open(path, "rb") as f:
        end = f.seek(0, 2)
        carry = b""
        while end > 0 and len(found) < count:
            start = max(0, end - CHUNK)
            f.seek(start)
            data = f.read(end - start) + carry
            lines = data.split(b"\n")
            carry = lines.pop(0) if start > 0 else b""  # may be cut: joined to the next chunk read
            for line in reversed(lines):
                if line.strip() and LOG_MARK not in line[:40] and COST_MARK not in line[:40]:
                    event = _parse_line(line)
                    if event is not None:
                        found.append(event)
                        if len(found) == count:
                            break
            end = start
    return found[::-1]


def paused(run_dir: Path) -> bool:
    """Was the latest session paused (its last pause/resume a pause, after its RunStarted)?"""
    path = Path(run_dir) / EVENTS_FILE
    if not path.exists() or path.stat().st_size == 0:
        return False
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        started = data.rfind(b'"type": "RunStarted"')
        at = len(data)
        while True:
            at = data.rfind(b'"type": "RunControl"', 0, at)
            if at < 0 or at < started:
                return False
            begin = data.rfind(b"\n", 0, at) + 1
            stop = data.find(b"\n", at)
            event = _parse_line(data[begin:stop if stop >= 0 else len(data)])
            if isinstance(event, RunControl) and event.action in ("pause", "resume"):
                return event.action == "pause"
