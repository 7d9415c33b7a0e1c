"""TuiReporter: the pipeline's Reporter for the console. Called from pipeline threads."""

from __future__ import annotations

import threading
from collections import deque

from textual.app import App

from nnlite_tui.core.events import Event, ModelLog
from nnlite_tui.tui.messages import LogsPending, PipelineEvent

# Log lines kept while the UI is busy; the log pane shows fewer than this per model anyway.
MAX_PENDING_LINES = 5000


class TuiReporter:
    """Posts events to the app; never blocks the pipeline.

    Log lines come in bursts (a converter can print thousands), so they are buffered here and the
    app is signalled once per burst: it drains the buffer when it gets to the signal.
    """

    def __init__(self, app: App) -> None:
        self.app = app
        self._lock = threading.Lock()
        self._lines: deque[ModelLog] = deque(maxlen=MAX_PENDING_LINES)
        self._signalled = False

    def emit(self, event: Event) -> None:
        if isinstance(event, ModelLog):
            with self._lock:
                self._lines.append(event)
                if self._signalled:
                    return
                self._signalled = True
            self._post(LogsPending(self))
        else:
            self._post(PipelineEvent(event))

    def drain(self) -> list[ModelLog]:
        with self._lock:
            lines = list(self._lines)
            self._lines.clear()
            self._signalled = False
        return lines

    def _post(self, message) -> None:
        try:
            self.app.post_message(message)
        except RuntimeError:
            # The console's event loop has closed (the operator quit) while the pipeline winds down;
            # its events still reach events.jsonl through the other reporters.
            pass
