"""LogTailer: streams new lines of a model's log file as ModelLog events while a stage runs."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from nnlite_tui.core.events import ModelLog

MAX_LINES_PER_STAGE = 200  # a runaway log must not flood the UI; the file keeps everything


class LogTailer:
    def __init__(self, path: Path, model: str, stage: str, emit: Callable, interval: float = 0.3):
        self.path = path
        self.model = model
        self.stage = stage
        self.emit = emit
        self.interval = interval
        self._stop = threading.Event()
        self._offset = path.stat().st_size if path.exists() else 0
        self._sent = 0
        # The final drain at exit can overlap the thread's last one when the join gives up on a thread
        # starved of CPU (a loaded host): without the lock both read from one offset and send lines twice.
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name=f"log-{model}", daemon=True)

    def __enter__(self) -> "LogTailer":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(2)
        self._drain(final=True)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self._drain(final=False)

    def _drain(self, final: bool) -> None:
        with self._lock:
            self._drain_locked(final)

    def _drain_locked(self, final: bool) -> None:
        try:
            with open(self.path, "rb") as f:
                f.seek(self._offset)
                data = f.read()
        except FileNotFoundError:
            return
        end = len(data) if final else data.rfind(b"\n") + 1
        self._offset += end
        for raw in data[:end].splitlines():
            line = raw.decode(errors="replace").rstrip()
            if not line:
                continue
            if self._sent < MAX_LINES_PER_STAGE:
                self.emit(ModelLog(model=self.model, stage=self.stage, line=line[:500]))
            elif self._sent == MAX_LINES_PER_STAGE:
                self.emit(ModelLog(model=self.model, stage=self.stage, line=f"... more in {self.path}"))
            self._sent += 1
