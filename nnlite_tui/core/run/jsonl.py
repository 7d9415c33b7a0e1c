"""The reporter that writes RUN_DIR/events.jsonl (read back by core.event_log)."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from nnlite_tui.core.events import Event
from nnlite_tui.core.run_dir import EVENTS_FILE



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
