"""Events pane: failures and recovery actions, newest first, coloured by severity."""

from __future__ import annotations

import time

from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from nnlite_tui.core.events import DeviceState, Event, ModelStatus, Recovery, RunControl, RunFinished, RunStarted
from nnlite_tui.tui.state import RunView

SHOWN = 200
SEVERITY_STYLE = {"info": "$text-muted", "warning": "$warning", "error": "$error"}


def clock_time(ts: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(ts))


def describe(event: Event, now: float) -> tuple[str, str]:
    """(severity, text) of one notable event."""
    if isinstance(event, Recovery):
        text = f"{event.action} {event.target}"
        if event.countdown_s is not None:
            left = event.countdown_s - (now - event.ts)
            text += f"  {left:.0f}s left" if left > 0 else "  done"
        return event.severity, f"{text}  {event.detail}".rstrip()
    if isinstance(event, ModelStatus):
        return "error", f"failed {event.model} (try {event.attempt}): {event.error or ''}".rstrip(": ")
    if isinstance(event, DeviceState):
        return "warning", f"device {event.serial} {event.state} {event.detail}".rstrip()
    if isinstance(event, RunControl):
        return "info", f"operator: {event.action.replace('_', ' ')} {event.model or ''}".rstrip()
    if isinstance(event, RunStarted):
        word = "resumed" if event.resumed else "started"
        return "info", f"run {word}: {len(event.models)} models on {', '.join(event.devices) or '-'}"
    if isinstance(event, RunFinished):
        counts = " ".join(f"{k} {v}" for k, v in sorted(event.counts.items()))
        return "info", f"run {'stopped' if event.stopped else 'finished'} in {event.seconds:.0f}s: {counts}"
    return "info", type(event).__name__


class EventsPane(VerticalScroll):
    def __init__(self, view: RunView, **kwargs) -> None:
        super().__init__(**kwargs)
        self.view = view
        self.body = Static(id="events-body")

    def compose(self):
        yield self.body

    def on_mount(self) -> None:
        self.border_title = "Events"
        self.set_interval(1.0, self.tick)
        self.refresh_events()

    def tick(self) -> None:
        """Cool-down countdowns run down between events."""
        now = self.view.clock()
        if any(isinstance(e, Recovery) and e.countdown_s and now - e.ts < e.countdown_s + 2
               for e in self.view.notable):
            self.refresh_events()

    def refresh_events(self) -> None:
        now = self.view.clock()
        lines = []
        for event in list(self.view.notable)[:SHOWN]:
            severity, text = describe(event, now)
            style = SEVERITY_STYLE.get(severity, "$foreground")
            lines.append(Content.assemble((clock_time(event.ts), "dim"), " ", (text, style)))
        errors = sum(1 for e in self.view.notable if describe(e, now)[0] == "error")
        self.border_title = f"Events {len(self.view.notable)}" + (f"  errors {errors}" if errors else "")
        self.body.update(Content("\n").join(lines) if lines else Content.from_markup("[dim]no events yet[/]"))
