"""QueueTable: the model queue as a virtual table (Textual's Line API).

It holds only the ordered list of model names that pass the filter; a line is drawn from the
RunView when it is on screen, so 10,000 models cost what the ~40 visible rows cost. A status
change repaints its one line if it is visible, nothing otherwise.
"""

from __future__ import annotations

from typing import Callable, Sequence

from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.strip import Strip

from nnlite_tui.core.events import STATUSES
from nnlite_tui.core.names import cut_middle, short_name
from nnlite_tui.tui.messages import ModelPicked
from nnlite_tui.tui.state import ModelRow
from nnlite_tui.tui.widgets.frame_view import FrameView
from nnlite_tui.tui.widgets.queue_rows import (GAP, MIN_ERROR, NO_STYLE, STATUS_COLUMN, Column, FrameStyle,
                                               draw_cells, model_cells)

HEADER = 1  # lines above the first row
NARROW = 90  # a table narrower than this leaves out the Try and Device columns
MODEL_MIN = (16, 22)  # the model column is never cut below this (narrow, other widths) ...
MODEL_SHARE = 0.45  # ... nor above its longest name, and takes at most this share of what the
# fixed columns leave; the error column takes the rest. Decided by the width alone (and the run's
# names, all known when it starts): the first failure changes no width.
DEVICE_WIDTH = 14  # "emulator-55554"; a longer serial is cut in its middle
STRIPS_KEPT = 2000  # drawn rows kept for reuse (a re-sort moves rows; their text rarely changes)


class QueueTable(FrameView, can_focus=True):
    """Rows come from `lookup(name)`; ModelQueue sets `names` (filtered, sorted) and the widths."""

    BINDINGS = [
        Binding("up,k", "cursor_up", "Up", show=False),
        Binding("down,j", "cursor_down", "Down", show=False),
        Binding("pageup,ctrl+b", "page_up", "Page up", show=False),
        Binding("pagedown,ctrl+f", "page_down", "Page down", show=False),
        Binding("home,g", "scroll_top", "First", show=False),
        Binding("end,G", "scroll_bottom", "Last", show=False),
        Binding("enter", "select", "Detail", show=False),
        Binding("escape", "follow", "Follow in-flight", show=False),
    ]
    COMPONENT_CLASSES = {"queue--header", "queue--cursor", "queue--even-row"}
    DEFAULT_CSS = """
    QueueTable {
        overflow-x: hidden;  /* the error column takes what the others leave */
        background: $surface;
        color: $foreground;
        & > .queue--header { text-style: bold; background: $panel; color: $foreground; }
        & > .queue--even-row { background: $surface-lighten-1 50%; }
        & > .queue--cursor {
            background: $block-cursor-blurred-background;
            color: $block-cursor-blurred-foreground;
            text-style: $block-cursor-blurred-text-style;
        }
        &:focus > .queue--cursor {
            background: $block-cursor-background;
            color: $block-cursor-foreground;
            text-style: $block-cursor-text-style;
        }
        &:dark > .queue--even-row { background: $surface-darken-1 40%; }
    }
    """

    class Selected(Message):
        """Enter (or a click on the row under the cursor): open the model's detail."""

        def __init__(self, model: str) -> None:
            super().__init__()
            self.model = model

    def __init__(self, lookup: Callable[[str], ModelRow], colour: Callable[[str], str], **kwargs) -> None:
        super().__init__(**kwargs)
        self.lookup = lookup
        self.colour = colour  # status -> colour
        self.names: list[str] = []
        self.index: dict[str, int] = {}
        self.cursor = 0
        self._frame: FrameStyle | None = None
        self._strips: dict[tuple, Strip] = {}  # (cells, kind) -> the drawn row
        self._strips_key: tuple | None = None
        self._status_styles: dict[str, Style] = {}
        self._model_width = 10  # the longest name of the run; the column may give way
        self.columns = [Column("model", "Model", 10, cut=short_name), Column("status", "Status", max(map(len, STATUSES))),
                        Column("attempt", "Try", 3, right=True), Column("device", "Device", DEVICE_WIDTH, cut=cut_middle),
                        Column("median", "Median ms", 9, right=True), Column("error", "Error / cause", MIN_ERROR)]

    # --- data ---
    def set_rows(self, names: Sequence[str], keep: str | None = None) -> None:
        top, rows = round(self.scroll_y), self.visible_rows
        shown, cursor = self.names[top:top + rows], self.cursor
        self.names = list(names)
        self.index = {name: i for i, name in enumerate(self.names)}
        if keep is not None and keep in self.index:
            self.cursor = self.index[keep]
        self.cursor = max(0, min(self.cursor, len(self.names) - 1))
        self._size_virtual()
        self.scroll_to_cursor()
        if round(self.scroll_y) != top:
            return  # scrolling repaints the whole table
        # A re-sort or re-filter during a run mostly leaves the rows on screen where they were:
        # repaint the lines whose model (or cursor) changed. Their data changes repaint them anyway.
        now = self.names[top:top + rows]
        changed = [k for k in range(rows)
                   if (shown[k] if k < len(shown) else None) != (now[k] if k < len(now) else None)
                   or (cursor != self.cursor and top + k in (cursor, self.cursor))]
        if len(changed) == rows:
            self.refresh(self.size.region)
        else:
            for k in changed:
                self.refresh_line(top + k + HEADER)

    def restyle(self) -> None:
        """The theme changed: draw every row again."""
        self._strips.clear()
        self._status_styles.clear()
        self.refresh(self.size.region)

    def set_widths(self, model: int) -> None:
        """The longest name of the run (the model column needs no more); the width does the rest."""
        if model != self._model_width:
            self._model_width = model
            self._size_virtual()
            self.refresh(self.size.region)

    def column_widths(self) -> tuple[int, ...]:
        """Each shown column's width (for a reader: the layout must not change mid-run)."""
        return tuple(c.width for c in self.columns if not c.hidden)

    def _size_virtual(self) -> None:
        width = self.scrollable_content_region.width or 80
        narrow = width < NARROW
        for column in self.columns:
            column.hidden = narrow and column.key in ("attempt", "device")
        others = 1 + sum(c.width + GAP for c in self.columns[1:-1] if not c.hidden)
        rest = width - others - GAP
        model = min(self._model_width, max(MODEL_MIN[not narrow], int(rest * MODEL_SHARE)))
        self.columns[0].width = model
        fixed = others + model + GAP
        self.columns[-1].width = max(MIN_ERROR, width - fixed)
        size = Size(fixed + self.columns[-1].width, len(self.names) + HEADER)
        if size == self.virtual_size:
            return
        if not self.is_mounted or not self.container_size:
            self.virtual_size = size
            return
        # A new row count (a filter, a re-sort) changes the scroll range, not the table's place on
        # screen: set it without the layout pass that assigning virtual_size asks for (a layout
        # pass re-arranges and re-renders the whole screen). The scrollbar follows; if it has to
        # appear or go, showing or hiding it asks for the layout itself.
        self.set_reactive(QueueTable.virtual_size, size)
        self._scroll_update(size)

    def on_resize(self) -> None:
        self._size_virtual()
        self.refresh()

    def refresh_models(self, names: Sequence[str]) -> None:
        """Repaint the lines of `names` that are on screen."""
        top = round(self.scroll_y)
        rows = self.visible_rows
        for name in names:
            i = self.index.get(name)
            if i is not None and top <= i < top + rows:
                self.refresh_line(i + HEADER)  # a line of the virtual table (refresh_line scrolls it)

    @property
    def row_count(self) -> int:
        return len(self.names)

    @property
    def visible_rows(self) -> int:
        return max(1, self.scrollable_content_region.height - HEADER)

    def get_row_at(self, i: int) -> tuple[str, ...]:
        return model_cells(self.lookup(self.names[i]))

    def selected(self) -> str | None:
        return self.names[self.cursor] if self.names else None

    # --- drawing ---
    def _frame_context(self) -> FrameStyle:
        base = self.rich_style
        frame = FrameStyle(self.scrollable_content_region.width, round(self.scroll_x), round(self.scroll_y), base,
                       base + self.get_component_rich_style("queue--even-row"),
                       self.get_component_rich_style("queue--cursor"),
                       self.get_component_rich_style("queue--header"),
                       tuple((c.width, c.right, c.hidden) for c in self.columns))
        if frame.key != self._strips_key:  # another width, theme or focus: the drawn rows are stale
            self._strips.clear()
            self._status_styles.clear()
            self._strips_key = frame.key
        return frame

    def render_line(self, y: int) -> Strip:
        frame = self._frame or self._frame_context()
        if y < HEADER:
            return draw_cells(self.columns, [(c.label, NO_STYLE) for c in self.columns], frame.header, frame)
        i = frame.top + y - HEADER
        if i >= len(self.names):
            return Strip.blank(frame.width, frame.base)
        cells = model_cells(self.lookup(self.names[i]))
        kind = 0 if i == self.cursor else 1 + i % 2
        key = (cells, kind)
        strip = self._strips.get(key)
        if strip is None:
            if kind == 0:
                base, status_style = frame.cursor, NO_STYLE
            else:
                base = frame.even if kind == 2 else frame.base
                status_style = self._status_style(cells[1])
            strip = draw_cells(self.columns, [(text, status_style if n == STATUS_COLUMN else NO_STYLE)
                                              for n, text in enumerate(cells)], base, frame)
            if len(self._strips) >= STRIPS_KEPT:
                self._strips.clear()
            self._strips[key] = strip
        return strip

    def _status_style(self, status: str) -> Style:
        style = self._status_styles.get(status)
        if style is None:
            style = self._status_styles[status] = Style(color=self.colour(status))
        return style

    # --- cursor ---
    def move_cursor(self, row: int, pick: bool = True) -> None:
        if not self.names:
            return
        old, self.cursor = self.cursor, max(0, min(row, len(self.names) - 1))
        top = round(self.scroll_y)
        for i in (old, self.cursor):
            if top <= i < top + self.visible_rows:
                self.refresh_line(i + HEADER)
        self.scroll_to_cursor()
        if pick:
            self.post_message(ModelPicked(self.names[self.cursor]))

    def scroll_to_cursor(self) -> None:
        top, rows = round(self.scroll_y), self.visible_rows
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False, immediate=True)
        elif self.cursor >= top + rows:
            self.scroll_to(y=self.cursor - rows + 1, animate=False, immediate=True)

    def action_cursor_up(self) -> None:
        self.move_cursor(self.cursor - 1)

    def action_cursor_down(self) -> None:
        self.move_cursor(self.cursor + 1)

    def action_page_up(self) -> None:
        self.move_cursor(self.cursor - self.visible_rows)

    def action_page_down(self) -> None:
        self.move_cursor(self.cursor + self.visible_rows)

    def action_scroll_top(self) -> None:
        self.move_cursor(0)

    def action_scroll_bottom(self) -> None:
        self.move_cursor(len(self.names) - 1)

    def action_select(self) -> None:
        if self.names:
            self.post_message(self.Selected(self.names[self.cursor]))

    def action_follow(self) -> None:
        self.post_message(ModelPicked(None))

    class HeaderClicked(Message):
        """A click on a column's header: sort by that column."""

        def __init__(self, column: str) -> None:
            super().__init__()
            self.column = column

    def column_at(self, x: int) -> str | None:
        """The key of the column under content column `x` (the margin and gaps go to the left cell)."""
        x += round(self.scroll_x)
        right = 1
        for column in self.columns:
            if column.hidden:
                continue
            right += column.width + GAP
            if x < right:
                return column.key
        return None

    async def _on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        if offset.y < HEADER:
            column = self.column_at(offset.x)
            if column is not None:
                self.post_message(self.HeaderClicked(column))
            return
        i = round(self.scroll_y) + offset.y - HEADER
        if i < len(self.names):
            if i == self.cursor:
                self.action_select()
            else:
                self.move_cursor(i)
