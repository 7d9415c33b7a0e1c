"""Attach mode: show a run owned by another process and steer it through its control channel.

The runner appends every event to RUN_DIR/events.jsonl and polls RUN_DIR/control.jsonl
(core.control.ControlChannel). The console tails the one and appends to the other; it never
touches the runner's store or processes.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Callable

import psutil

from nnlite_tui.core.control import ControlChannel
from nnlite_tui.core.events import Event, event_from_dict

EVENTS_FILE = "events.jsonl"
PID_FILE = "runner.pid"
POLL_SECONDS = 0.2
MAX_BATCH = 2000  # events per message, so replaying a days-long log keeps the UI responsive


def runner_pid(run_dir: str | os.PathLike) -> int | None:
    """The pid in RUN_DIR/runner.pid if that process is alive, else None."""
    path = Path(run_dir) / PID_FILE
    try:
        text = path.read_text(encoding="utf-8").strip()
    except OSError:
        return None
    try:
        pid = int(json.loads(text)["pid"]) if text.startswith("{") else int(text.split()[0])
    except (ValueError, KeyError, IndexError, json.JSONDecodeError):
        return None
    return pid if psutil.pid_exists(pid) and pid != os.getpid() else None


class EventTail:
    """Reads RUN_DIR/events.jsonl from the start, then follows it; hands events over in batches."""

    def __init__(self, run_dir: str | os.PathLike, deliver: Callable[[list[Event]], None]):
        self.path = Path(run_dir) / EVENTS_FILE
        self.deliver = deliver
        self.stop = threading.Event()
        self.offset = 0
        self.bad_lines = 0

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
        events = []
        for raw in data[:end].splitlines():
            if not raw.strip():
                continue
            try:
                events.append(event_from_dict(json.loads(raw)))
            except (json.JSONDecodeError, ValueError, TypeError):
                self.bad_lines += 1  # a line from a newer writer or a crash; the rest of the log still counts
        return events

    def follow(self) -> None:
        """Run until `stop` is set (from a thread worker)."""
        while not self.stop.is_set():
            events = self.read_new()
            for i in range(0, len(events), MAX_BATCH):
                self.deliver(events[i:i + MAX_BATCH])
            if not events:
                self.stop.wait(POLL_SECONDS)


class RemoteControl:
    """The operator side of core.control.Control, for a run owned by another process."""

    def __init__(self, run_dir: str | os.PathLike):
        self.channel = ControlChannel(run_dir)
        self.paused = False

    def pause(self) -> None:
        self.channel.send("pause")
        self.paused = True

    def resume(self) -> None:
        self.channel.send("resume")
        self.paused = False

    def skip(self, model: str | None = None) -> None:
        self.channel.send("skip", model)

    def retry(self, model: str) -> None:
        self.channel.send("retry", model)

    def request_stop(self, now: bool = False) -> None:
        self.channel.send("stop_now" if now else "stop_after_current")
