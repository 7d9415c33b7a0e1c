"""Log pane: the conversion and benchmark log of one model, bounded.

It follows the model in flight until the operator picks another in the queue (Escape follows again).

A line-API view of a bounded buffer whose virtual height is fixed at the buffer's bound, newest
line at the bottom: appending a line repaints the pane but never changes its size or scroll
position, so a busy log costs no layout pass (a layout pass re-renders the whole screen; Textual's
Log widget grows its virtual size, hence a layout, on every write). The operator can still scroll
back through the lines kept.
"""

from __future__ import annotations

import re
from collections import deque
from typing import Iterable

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.markup import escape
from textual.strip import Strip

from nnlite_tui.core.names import cut_end, short_name
from nnlite_tui.core.text_safety import printable
from nnlite_tui.tui.state import LOG_LINES_PER_MODEL, RunView
from nnlite_tui.tui.widgets.borders import set_border_text
from nnlite_tui.tui.widgets.frame_view import FrameView

MAX_WIDTH = 500  # characters of a line kept (the model's log file has them whole)
CONTROL = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|[\x00-\x08\x0b-\x1f\x7f]")


def clean(line: str) -> str:
    """One printable line: tabs expanded, terminal escapes and control characters dropped."""
    return printable(CONTROL.sub("", line.expandtabs(4)))[:MAX_WIDTH]


class LogPane(FrameView, can_focus=True):
    """No scrollbar (the fixed virtual height would misstate how much there is): the wheel and the
    keys scroll, and the subtitle says how far back the view is."""

    DEFAULT_CSS = """
    LogPane { overflow-x: hidden; overflow-y: hidden; }
    """
    BINDINGS = [
        Binding("up", "scroll_lines(-1)", "Up", show=False),
        Binding("down", "scroll_lines(1)", "Down", show=False),
        Binding("pageup", "scroll_lines(-10)", "Page up", show=False),
        Binding("pagedown", "scroll_lines(10)", "Page down", show=False),
        Binding("home", "scroll_lines(-1000)", "Oldest", show=False),
        Binding("end", "scroll_lines(1000)", "Newest", show=False),
        Binding("left,h", "scroll_columns(-8)", "Left", show=False),
        Binding("right,l", "scroll_columns(8)", "Right", show=False),
        Binding("w", "toggle_wrap", "Wrap", show=False),
    ]

    def __init__(self, view: RunView, **kwargs) -> None:
        super().__init__(**kwargs)
        self.view = view
        self.picked: str | None = None  # None: follow the model in flight
        self.shown: str | None = None
        self.lines: deque[str] = deque(maxlen=LOG_LINES_PER_MODEL)
        self._width = 0
        self._frame: tuple[int, int, int, int, Style] | None = None  # width, height, scroll x and y, style: while a frame is drawn
        self._strips: dict[tuple[str, int], Strip] = {}  # (line, scroll x) -> the drawn line
        self._strips_key: tuple | None = None
        self.wrap = False  # long lines (a traceback's last line) folded onto the next rows instead of cut
        self._written = 0  # lines written since the last clear: the wrapped rows are rebuilt after a change
        self._rows: tuple[tuple, list[str]] = ((), [])

    def on_mount(self) -> None:
        self.update_title()
        self.set_interval(1.0, self.tick)
        self.virtual_size = Size(MAX_WIDTH, LOG_LINES_PER_MODEL)
        self.call_after_refresh(self._to_end)

    def on_resize(self) -> None:
        self.update_title()  # the name in the title is cut to the pane's width

    def _to_end(self) -> None:
        self.scroll_to(y=self.max_scroll_y, animate=False, immediate=True)

    @property
    def line_count(self) -> int:
        return len(self.lines)

    def rows(self) -> list[str] | deque[str]:
        """What the pane shows, one entry a screen row: the lines, or (wrap) their pieces."""
        if not self.wrap:
            return self.lines
        width = max(8, self.scrollable_content_region.width)
        key = (self._written, len(self.lines), width)
        if self._rows[0] != key:
            rows = [line[i:i + width] for line in self.lines for i in range(0, max(1, len(line)), width)]
            self._rows = (key, rows[-LOG_LINES_PER_MODEL:])
        return self._rows[1]

    def action_toggle_wrap(self) -> None:
        self.wrap = not self.wrap
        self.scroll_x = 0
        self._to_end()
        self.refresh()
        self.update_title()

    def action_scroll_columns(self, columns: int) -> None:
        if not self.wrap:
            longest = max(map(len, self.lines), default=0)
            room = max(0, longest - self.scrollable_content_region.width)
            # overflow-x is hidden (no scrollbar row): scroll_to() would not move, the attribute does
            self.scroll_x = max(0, min(room, self.scroll_x + columns))
            self.update_title()

    def action_scroll_lines(self, lines: int) -> None:
        self.scroll_y = self.validate_scroll_y(self.scroll_y + lines)
        self.update_title()

    def _on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        event.stop()
        self.action_scroll_lines(3)

    def _on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        event.stop()
        self.action_scroll_lines(-3)

    def validate_scroll_y(self, value: float) -> float:
        """Not above the oldest line kept (the fixed virtual height leaves blank rows there)."""
        top = max(0, LOG_LINES_PER_MODEL - max(len(self.rows()), self.scrollable_content_region.height))
        return max(top, min(value, self.max_scroll_y))

    def validate_scroll_target_y(self, value: float) -> float:
        return round(self.validate_scroll_y(value))

    # --- content ---
    @property
    def target(self) -> str | None:
        return self.picked or self.view.followed()

    def pick(self, model: str | None) -> None:
        self.picked = model
        self.sync()

    def clear(self) -> None:
        self.lines.clear()
        self._written += 1
        self.refresh()

    def write_lines(self, lines: Iterable[str]) -> None:
        added = [clean(line) for line in lines]
        self.lines.extend(added)
        self._written += 1
        if self.scroll_y < self.max_scroll_y - 0.5:  # scrolled back: the lines on screen stay there
            self.scroll_y = self.validate_scroll_y(self.scroll_y - len(added))
            self.update_title()
        self.refresh(self.size.region)  # the lines only: the border and its title stay as they are

    def sync(self, new_lines: dict[str, list[str]] | None = None) -> None:
        """Show the target model's log; append only new lines when the target did not change."""
        target = self.target
        if target != self.shown:
            self.lines.clear()
            self._written += 1
            self.shown = target
            if target is not None:
                self.lines.extend(clean(line) for line in self.view.log_lines(target))
            self._to_end()
            self.refresh()
            self.update_title()
        else:
            if target is not None and new_lines and target in new_lines:
                self.write_lines(new_lines[target])
            self.update_title()  # a new phase began, or the unit left its stage (set_border_text skips no change)

    def update_title(self) -> None:
        """`Log: <unit>` and, while the unit converts or is benchmarked, the phase its job is in (title)
        and what its earlier phases took (subtitle)."""
        how = "picked, Esc follows in-flight" if self.picked else "following in-flight"
        if self.wrap:
            how = "wrapped (w)  " + how
        elif self.is_mounted and self.scroll_x:
            how = f"from column {round(self.scroll_x) + 1} (← →)  " + how
        back = round(self.max_scroll_y - self.scroll_y) if self.is_mounted else 0
        subtitle = (f"{back} newer lines below  " if back > 0 else "") + how
        room = (self.size.width or 120) - 8  # the border's corners and the title's padding
        live = self.view.phases.get(self.shown) if self.shown else None
        progress = live.describe(self.view.clock()) if live is not None else ""
        holder = self.view.held_by() if live is not None and live.stage == "convert" else None
        if holder:  # its worker is stopped meanwhile: the phase's clock runs, the phase does not
            progress += f"; held while the host times {short_name(holder, 28)}"
        if not self.shown:
            title = "Log: -"
        elif not progress:
            title = f"Log: {short_name(self.shown, max(16, room - 5))}"
        else:  # the name gives way to the progress down to 24 characters; the progress is cut after that
            name = short_name(self.shown, max(24, min(len(self.shown), room - 9 - len(progress))))
            title = cut_end(f"Log: {name}  ▸ {progress}", room)
            before = live.before()
            if before:
                subtitle = cut_end(f"before: {before}", room - len(subtitle) - 3) + "  " + subtitle
        set_border_text(self, escape(printable(title)), escape(subtitle))

    def tick(self) -> None:
        """The phase's clock runs between the job's lines."""
        if self.shown is not None and self.shown in self.view.phases:
            self.update_title()

    # --- drawing ---
    def _frame_context(self) -> tuple[int, int, int, int, Style]:
        region, style = self.scrollable_content_region, self.rich_style
        if (region.width, style) != self._strips_key:  # another width or style: the drawn lines are stale
            self._strips.clear()
            self._strips_key = (region.width, style)
        return region.width, region.height, round(self.scroll_x), round(self.scroll_y), style

    def render_line(self, y: int) -> Strip:
        width, height, scroll_x, scroll_y, style = self._frame or self._frame_context()
        rows = self.rows()
        count = len(rows)
        if count <= height:  # all fits: top-aligned, as a terminal fills
            index = y
        else:  # newest at the bottom of the fixed virtual height
            index = count - (LOG_LINES_PER_MODEL - (scroll_y + y))
        if not 0 <= index < count:
            return Strip.blank(width, style)
        text = rows[index]
        key = (text, scroll_x)
        strip = self._strips.get(key)
        if strip is None:  # a new line moves the others up: each is drawn once, then reused
            strip = Strip([Segment(text, style)]).crop_extend(scroll_x, scroll_x + width, style)
            if len(self._strips) >= 4 * LOG_LINES_PER_MODEL:
                self._strips.clear()
            self._strips[key] = strip
        return strip
