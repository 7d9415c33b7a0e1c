"""How the queue table draws a line: the cells of a model's row, cut to their columns, as a Strip.

Pure drawing (no widget): QueueTable reads its styles once per frame into a FrameStyle and draws
each visible line with draw_cells().
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

from nnlite_tui.core.names import cut_end
from nnlite_tui.core.events import TERMINAL
from nnlite_tui.tui.failure import cause_line
from nnlite_tui.core.text_safety import printable
from nnlite_tui.tui.formatting import sig3
from nnlite_tui.tui.state import ModelRow

GAP = 2  # blanks between columns, written at the end of the left cell (see formatting.py)
MIN_ERROR = 10
NO_STYLE = Style()
STATUS_COLUMN = 1
# Each cell's style carries its column: cells of one style (every cell of the cursor row) then stay
# separate spans where an export joins neighbouring spans of equal style (Textual's simplified SVG
# screenshots, the snapshot tests'). One span for the whole cursor row put its cells where the
# viewer's font advanced its glyphs rather than at their columns: a cut name's "…", narrower than a
# cell in many fonts, moved the cursor row's Status column left of every other row's.
COLUMN_META = tuple(Style.from_meta({"column": n}) for n in range(8))


class Column:
    """`cut` shortens a cell too long for the column: at its end, or (unit names) in its middle."""

    def __init__(self, key: str, label: str, width: int, right: bool = False,
                 cut: Callable[[str, int], str] = cut_end):
        self.key, self.label, self.width, self.right, self.cut = key, label, width, right, cut
        self.hidden = False  # a narrow terminal leaves out the columns it can spare


@dataclass(frozen=True)
class FrameStyle:
    """What every line of one frame is drawn with."""

    width: int
    scroll_x: int
    top: int
    base: Style
    even: Style
    cursor: Style
    header: Style
    columns: tuple[tuple[int, bool, bool], ...]

    @property
    def key(self) -> tuple:
        """What a drawn row depends on besides its cells and its kind (cursor, odd, even)."""
        return self.width, self.scroll_x, self.base, self.even, self.cursor, self.columns


def model_cells(row: ModelRow) -> tuple[str, str, str, str, str, str]:
    """The plain text of a row's cells: model, status, try, device, median, error."""
    error = cause_line(row.error) if row.error else " ".join(f"[{flag}]" for flag in row.flags)
    status = row.status
    if row.skip_asked and status not in TERMINAL:
        status = "skipping"  # asked for; the runner skips it when it reaches it (or its stage ends)
    return (row.name, status, str(row.attempt or ""), row.device or "",
            "" if row.median_ms is None else sig3(row.median_ms), error)


def fit(text: str, width: int, right: bool = False, cut: Callable[[str, int], str] = cut_end) -> str:
    if len(text) > width:
        return cut(text, width)
    return text.rjust(width) if right else text.ljust(width)


def draw_cells(columns: list[Column], cells: list[tuple[str, Style]], base: Style, frame: FrameStyle) -> Strip:
    """One line of the table: each (text, style) cell in its column, on `base`, scrolled and cut to the width."""
    segments = [(" ", base)]  # a margin inside the pane's border
    last = len(columns) - 1
    for n, (column, (text, style)) in enumerate(zip(columns, cells)):
        if column.hidden:
            continue
        cell = fit(printable(text), column.width, column.right, column.cut)
        if column.right:
            # right-aligned: the leading blanks go to the end of the previous cell
            padded = cell.lstrip(" ")
            prev_text, prev_style = segments[-1]
            segments[-1] = (prev_text + cell[:len(cell) - len(padded)], prev_style)
            cell = padded
        segments.append((cell + ("" if n == last else " " * GAP), base + style + COLUMN_META[n]))
    strip = Strip([Segment(t, s) for t, s in segments if t])
    return strip.crop_extend(frame.scroll_x, frame.scroll_x + frame.width, base)
