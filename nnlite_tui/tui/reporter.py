"""TuiReporter: the pipeline's Reporter for the console. Called from pipeline threads."""

from __future__ import annotations

import threading

from textual.app import App

from nnlite_tui.core.events import Event, ModelLog
from nnlite_tui.tui.messages import EventsPending

# Log lines kept while the UI is busy; the log pane shows fewer than this per model anyway.
MAX_PENDING_LINES = 5000


class TuiReporter:
    """Posts events to the app; never blocks the pipeline.

    Events come in bursts (a converter prints thousands of lines; a big run changes many statuses
    a second), so they are buffered here in order and the app is signalled once per burst: it
    folds the whole buffer when it gets to the signal, one screen update for many events. Status
    events are never dropped; log lines past MAX_PENDING_LINES wait in the model's log file only.
    """

    def __init__(self, app: App) -> None:
        self.app = app
        self._lock = threading.Lock()
        self._events: list[Event] = []
        self._lines = 0
        self.dropped_lines = 0
        self._signalled = False

    def emit(self, event: Event) -> None:
        with self._lock:
            if isinstance(event, ModelLog):
                if self._lines >= MAX_PENDING_LINES:
                    self.dropped_lines += 1
                    return
                self._lines += 1
            self._events.append(event)
            if self._signalled:
                return
            self._signalled = True
        self._post(EventsPending(self))

    def drain(self) -> list[Event]:
        with self._lock:
            events, self._events = self._events, []
            self._lines = 0
            self._signalled = False
        return events

    def _post(self, message) -> None:
        try:
            self.app.post_message(message)
        except RuntimeError:
            # The console's event loop has closed (the operator quit) while the pipeline winds down;
            # its events still reach events.jsonl through the other reporters.
            pass
