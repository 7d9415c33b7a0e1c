"""Reporters that write: RUN_DIR/events.jsonl (read back by `nnlite status` and an attached console)."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from nnlite_tui.core.events import Event, event_from_dict
from nnlite_tui.core.run_files import EVENTS_FILE



class JsonlReporter:
    def __init__(self, run_dir: Path):
        self.path = Path(run_dir) / EVENTS_FILE
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._file = open(self.path, "a", encoding="utf-8")

    def emit(self, event: Event) -> None:
        line = json.dumps(event.to_dict(), default=str) + "\n"
        with self._lock:
            if self._file.closed:
                return
            self._file.write(line)
            self._file.flush()

    def close(self) -> None:
        with self._lock:
            self._file.close()


def read_events(run_dir: Path, last: int | None = None) -> list[Event]:
    path = Path(run_dir) / EVENTS_FILE
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    if last is not None:
        lines = lines[-last:]
    events = []
    for line in lines:
        try:
            data: dict[str, Any] = json.loads(line)
            events.append(event_from_dict(data))
        except (json.JSONDecodeError, ValueError, TypeError):
            continue  # a line cut short by kill -9 is expected at the end; it carries nothing we need
    return events
