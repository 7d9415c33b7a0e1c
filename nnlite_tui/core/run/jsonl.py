"""The reporter that writes RUN_DIR/events.jsonl (read back by core.event_log)."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from nnlite_tui.core.events import Event, Recovery
from nnlite_tui.core.run_dir import EVENTS_FILE
from nnlite_tui.errors import environment_cause


def _reopen(file, path: Path):
    """A fresh handle: a failed flush leaves the old one's buffer full of text that was never written."""
    try:
        file.close()
    except OSError:
        pass  # the same refused write again; its text is lost and counted
    return open(path, "a", encoding="utf-8")


class JsonlReporter:
    def __init__(self, run_dir: Path):
        self.path = Path(run_dir) / EVENTS_FILE
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._file = open(self.path, "a", encoding="utf-8")
        self._lost = 0  # events the disk refused, counted in an events-lost line once it takes them again

    def emit(self, event: Event) -> None:
        line = json.dumps(event.to_dict(), default=str) + "\n"
        with self._lock:
            if self._file.closed:
                return
            try:
                if self._lost:
                    lost = Recovery(action="events-lost", target=EVENTS_FILE, severity="warning",
                                    detail=f"{self._lost} event(s) not written: the disk refused them")
                    self._file.write(json.dumps(lost.to_dict(), default=str) + "\n")
                self._file.write(line)
                self._file.flush()
                self._lost = 0
            except OSError as exc:
                if environment_cause(exc) is None:
                    raise
                self._lost += 1  # the run pauses on the disk elsewhere (DiskGuard); the log must not stop it
                self._file = _reopen(self._file, self.path)

    def close(self) -> None:
        with self._lock:
            self._file.close()
