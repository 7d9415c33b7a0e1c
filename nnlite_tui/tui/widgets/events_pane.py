"""Events pane: failures and recovery actions, newest first, coloured by severity."""

from __future__ import annotations

import itertools
import time

from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.geometry import Region
from textual.strip import Strip
from textual.visual import Visual
from textual.widget import Widget

from nnlite_tui.core.events import DeviceState, Event, ModelStatus, Recovery, RunControl, RunFinished, RunStarted
from nnlite_tui.core.names import short_name
from nnlite_tui.tui.failure import cause_line
from nnlite_tui.core.text_safety import printable
from nnlite_tui.tui.state import RunView
from nnlite_tui.tui.widgets.borders import set_border_text

TARGET_WIDTH = 20  # a long target (a device path, a unit's name) keeps its start and its end
NAME_WIDTH = 28  # a unit's name in a line about it (the rest of the line says what happened)
FAILED_NAME_WIDTH = 18  # ... about its failure: the cause needs the room
SHOWN = 100  # newest events on screen; the whole history is in events.jsonl (nnlite status)
SEVERITY_STYLE = {"info": "$text-muted", "warning": "$warning", "error": "$error"}


def clock_time(ts: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(ts))


def severity(event: Event) -> str:
    if isinstance(event, Recovery):
        return event.severity
    if isinstance(event, ModelStatus):
        return "error"
    if isinstance(event, DeviceState):
        return "warning"
    return "info"


def describe(event: Event, now: float, whole: bool = False) -> str:
    """The text of one notable event, on one line (the pane cuts it to its width); `whole`: names
    uncut and a failure's cause with its full first lines."""
    name_width = 10_000 if whole else NAME_WIDTH
    if isinstance(event, Recovery):
        text = f"{event.action} {short_name(event.target, TARGET_WIDTH)}"
        if event.countdown_s is not None:
            left = event.countdown_s - (now - event.ts)
            text += f"  {left:.0f}s left" if left > 0 else "  done"
        detail = " ".join(event.detail.split())  # multi-line details (tracebacks, paths) on one line
        return f"{text}  {detail}".rstrip()
    if isinstance(event, ModelStatus):
        error = " ".join((event.error or "").split()) if whole else cause_line(event.error)
        # The cause after a shorter name: in a narrow pane the name took the whole line.
        name = short_name(event.model, name_width if whole else FAILED_NAME_WIDTH)
        tries = f" (try {event.attempt})" if event.attempt > 1 or whole else ""
        return f"failed {name}{tries}: {error}".rstrip(": ")
    if isinstance(event, DeviceState):
        return f"device {event.serial} {event.state} {event.detail}".rstrip()
    if isinstance(event, RunControl):
        model = short_name(event.model, name_width) if event.model else ""
        return f"operator: {event.action.replace('_', ' ')} {model}".rstrip()
    if isinstance(event, RunStarted):
        word = "resumed" if event.resumed else "started"
        return f"run {word}: {len(event.models)} models on {', '.join(event.devices) or '-'}"
    if isinstance(event, RunFinished):
        counts = " ".join(f"{k} {v}" for k, v in sorted(event.counts.items()) if v)
        return f"run {'stopped' if event.stopped else 'finished'} in {event.seconds:.0f}s: {counts}"
    return type(event).__name__


class EventLines(Widget):
    """The pane's body: one line per event, each drawn once and reused while newer events push it
    down. A new event moves every line (all repainted, from their drawn strips); a countdown tick
    repaints its own line only."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.lines: list[Content] = []
        self._strips: list[Strip] = []
        self._drawn: dict[int, tuple[Content, Strip]] = {}  # id(line) -> (line, strip)
        self._drawn_key: tuple | None = None

    def render(self) -> Content:
        """The text shown, as one Content (for a reader of the pane; drawing goes by line)."""
        return Content("\n").join(self.lines)

    def show(self, lines: list[Content]) -> None:
        self.lines = lines
        old, self._strips = self._strips, [self._draw(line) for line in lines]
        changed = [y for y in range(max(len(old), len(self._strips)))
                   if y >= len(old) or y >= len(self._strips) or old[y] is not self._strips[y]]
        if len(changed) > 1:
            self.refresh()
        elif changed:
            self.refresh(Region(0, changed[0], self.size.width, 1))

    def _draw(self, line: Content) -> Strip:
        width, style = self.size.width, self.visual_style
        if (width, style) != self._drawn_key:  # another width or theme: draw every line again
            self._drawn.clear()
            self._drawn_key = (width, style)
        drawn = self._drawn.get(id(line))
        if drawn is not None and drawn[0] is line:
            return drawn[1]
        strips = Visual.to_strips(self, line, width, 1, style) if width else []
        strip = strips[0] if strips else Strip.blank(width, style.rich_style)
        if len(self._drawn) > 4 * SHOWN:
            self._drawn.clear()
        self._drawn[id(line)] = (line, strip)
        return strip

    def render_line(self, y: int) -> Strip:
        if self._drawn_key != (self.size.width, self.visual_style):
            self._strips = [self._draw(line) for line in self.lines]
        if y < len(self._strips):
            return self._strips[y]
        return Strip.blank(self.size.width, self.visual_style.rich_style)


class EventsPane(Vertical, can_focus=True):
    """The newest events that fit; older ones are in events.jsonl (`nnlite status`).

    The body has a fixed size, so an update repaints this pane alone (no layout pass).
    """

    BINDINGS = [Binding("enter", "app.show_events", "Whole lines", show=False)]

    def __init__(self, view: RunView, **kwargs) -> None:
        super().__init__(**kwargs)
        self.view = view
        self.body = EventLines(id="events-body")
        self._lines: dict[tuple[int, int], tuple[Event, Content]] = {}
        self._none = Content.styled("no events yet", "dim")

    def compose(self):
        yield self.body

    def on_mount(self) -> None:
        self.border_title = "Events"
        self.set_interval(1.0, self.tick)
        self.refresh_events()

    def line(self, event: Event, now: float, width: int) -> Content:
        """One event's line, cut to the pane's width; cached unless it has a countdown to run down.
        The full text is in events.jsonl and the model's log."""
        key = (id(event), width)
        cached = self._lines.get(key)
        if cached is not None and cached[0] is event:
            return cached[1]
        style = SEVERITY_STYLE.get(severity(event), "$foreground")
        stamp = clock_time(event.ts) + " "
        text = printable(describe(event, now))
        room = max(8, width - len(stamp))
        if len(text) > room:
            text = text[:room - 1] + "…"
        line = Content.assemble((stamp, "dim"), (text, style))
        if not (isinstance(event, Recovery) and event.countdown_s):
            self._lines[key] = (event, line)
            if len(self._lines) > 4 * SHOWN:
                self._lines.clear()  # events fell out of view.notable; cheap to rebuild the visible ones
        return line

    def on_resize(self) -> None:
        self.refresh_events()

    def tick(self) -> None:
        """Cool-down countdowns run down between events."""
        now = self.view.clock()
        if any(isinstance(e, Recovery) and e.countdown_s and now - e.ts < e.countdown_s + 2
               for e in self.view.notable):
            self.refresh_events()

    def refresh_events(self) -> None:
        now = self.view.clock()
        width, height = self.body.size
        # Only what fits: the body does not scroll, and every line drawn costs each repaint.
        shown = min(SHOWN, height) if height else SHOWN
        lines = [self.line(event, now, width or 60) for event in itertools.islice(self.view.notable, shown)]
        errors = sum(1 for e in self.view.notable if severity(e) == "error")
        title = f"Events {len(self.view.notable)}" + (f"  errors {errors}" if errors else "")
        set_border_text(self, title, "E: whole lines")
        self.body.show(lines or [self._none])
