"""Results screen: latency vs parameter count (a log-log scatter drawn with cells), failures by
stage, and the median latency per device; it follows the run while it is open.

Everything comes from the console's RunView; parameter counts are read once per finished model
from its report, in a thread worker, a bounded number per refresh.
"""

from __future__ import annotations

import math

from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Static

from nnlite_tui.tui.failure import cause_line
from nnlite_tui.core.text_safety import printable
from nnlite_tui.tui.formatting import line, milliseconds, sig3
from nnlite_tui.core.names import short_name
from nnlite_tui.tui.results import (ParamCache, Point, device_figures, failure_groups, failures_by_stage,
                                    scatter)
from nnlite_tui.tui.state import RunView

REFRESH_SECONDS = 1.0
# Parameter counts taken per refresh, from the run's report index (no report opened): a 10,000-model
# run fills in two refreshes (bench/results_scale.py).
READS_PER_REFRESH = 5000
BAR_WIDTH = 30
ERRORS_PER_STAGE = 3  # the commonest errors listed under a stage's bar
EXAMPLE_WIDTH = 24  # a unit that had the error


def count_text(value: float) -> str:
    for unit, size in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if value >= size:
            return f"{sig3(value / size)}{unit}"
    return f"{value:.0f}"


def cell_of(point: Point, ranges: tuple[float, float, float, float], width: int, height: int) -> tuple[int, int]:
    """(row, column) of `point` in scatter()'s grid (the same mapping)."""
    x0, x1, y0, y1 = (math.log10(v) for v in ranges)
    x1, y1 = (x1 if x1 > x0 else x0 + 1), (y1 if y1 > y0 else y0 + 1)
    column = min(width - 1, int((math.log10(point.params) - x0) / (x1 - x0) * (width - 1) + 0.5))
    row = min(height - 1, int((math.log10(point.median_ms) - y0) / (y1 - y0) * (height - 1) + 0.5))
    return height - 1 - row, column


class ResultsScreen(Screen):
    BINDINGS = [Binding("escape,q,v", "app.pop_screen", "Back"),
                Binding("left,h", "move_point(-1)", "Previous point"),
                Binding("right,l", "move_point(1)", "Next point")]

    def __init__(self, view: RunView, cache: ParamCache) -> None:
        super().__init__()
        self.view = view
        self.cache = cache  # kept by the app: reopening the screen does not read the reports again
        self._shown: dict[str, str] = {}  # pane id -> the markup on screen
        self.cursor: str | None = None  # the unit named under the plot's cursor
        self._cells: dict[tuple[int, int], list[Point]] = {}  # the plot's cells -> their points, as drawn
        self._points: list[Point] = []  # as drawn, fewest parameters first

    def compose(self) -> ComposeResult:
        with Horizontal(id="results"):
            yield Static(id="results-plot", classes="pane")
            with Vertical(id="results-side"):
                yield Static(id="results-failures", classes="pane")
                yield Static(id="results-devices", classes="pane")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#results-plot").border_title = "Latency vs parameters (log-log)"
        self.query_one("#results-failures").border_title = "Failures by stage"
        self.query_one("#results-devices").border_title = "Median latency per device"
        self.refresh_results()
        self.set_interval(REFRESH_SECONDS, self.refresh_results)

    def refresh_results(self) -> None:
        rows = list(self.view.models.values())
        missing = self.cache.missing(rows)
        if missing:
            self._read_params(missing[:READS_PER_REFRESH])
        # The panes have fixed sizes: new content needs no layout pass (which re-renders the screen),
        # and content that did not change needs no repaint.
        for pane, content in (("#results-plot", self.plot_content(rows, len(missing))),
                              ("#results-failures", self.failures_content(rows)),
                              ("#results-devices", self.devices_content(rows))):
            static = self.query_one(pane, Static)
            if self._shown.get(pane) != content.markup:
                self._shown[pane] = content.markup
                static.update(content, layout=False)

    @work(thread=True, exclusive=True, group="results-params", exit_on_error=False)
    def _read_params(self, names: list[str]) -> None:
        self.cache.fill(self.view.run_dir, names)

    def plot_content(self, rows, unread: int) -> Content:
        plot = self.query_one("#results-plot")
        width = max(20, plot.content_region.width - 10)
        height = max(5, plot.content_region.height - 4)
        points = sorted(self.cache.points(rows), key=lambda p: (p.params, p.median_ms, p.name))
        grid, ranges = scatter(points, width, height)
        x0, x1, y0, y1 = ranges
        self._points = points
        self._cells = {}
        for point in points:
            self._cells.setdefault(cell_of(point, ranges, width, height), []).append(point)
        if points and self.cursor not in {p.name for p in points}:
            self.cursor = points[-1].name  # the largest model: where a reader looks first
        marked = next((cell for cell, held in self._cells.items() if any(p.name == self.cursor for p in held)), None)
        middle = (height - 1) // 2
        lines = []
        for i, row in enumerate(grid):
            # log axis: the middle row is the geometric mean of the ends
            label = milliseconds(y1) if i == 0 else milliseconds(y0) if i == height - 1 else \
                milliseconds(math.sqrt(y0 * y1)) if i == middle and points else ""
            if marked is not None and marked[0] == i:
                c = marked[1]
                lines.append(line((f"{label:>9}│", "dim"), (row[:c], "$primary"), ("◆", "bold reverse $accent"),
                                  (row[c + 1:], "$primary")))
            else:
                lines.append(line((f"{label:>9}│", "dim"), (row, "$primary")))
        lines.append(Content.styled(" " * 9 + "└" + "─" * width, "dim"))
        if points:
            left, right = count_text(x0), count_text(x1)
            lines.append(Content.styled(" " * 10 + left + " " * max(1, width - len(left) - len(right)) + right, "dim"))
        under = next((p for p in points if p.name == self.cursor), None)
        if under is not None:
            lines.append(line(("◆ ", "bold $accent"), (short_name(under.name, max(16, width - 40)), "bold"),
                              f"  {count_text(under.params)} parameters  median {milliseconds(under.median_ms)}",
                              ("   ← → or the mouse: another point", "dim")))
        done = sum(1 for r in rows if r.status == "done")
        note = f"{len(points)} of {done} done models plotted"
        if unread:
            note += f"; reading {unread} reports"
        lines.append(Content.styled(note + "   · 1  • 2-3  ● 4-7  █ 8+ models per cell", "dim"))
        return Content("\n").join(lines)

    def action_move_point(self, step: int) -> None:
        names = [p.name for p in self._points]
        if not names:
            return
        i = names.index(self.cursor) if self.cursor in names else len(names) - 1
        self.cursor = names[max(0, min(len(names) - 1, i + step))]
        self.refresh_results()

    def on_mouse_move(self, event: events.MouseMove) -> None:
        """The point nearest the mouse, when it is over the plot's cells."""
        plot = self.query_one("#results-plot")
        offset = event.get_content_offset(plot)
        if offset is None or not self._cells:
            return
        at = (offset.y, offset.x - 10)  # the 9-character axis label and the axis line
        cell = min(self._cells, key=lambda c: (c[0] - at[0]) ** 2 + ((c[1] - at[1]) / 2) ** 2)
        if abs(cell[0] - at[0]) <= 2 and abs(cell[1] - at[1]) <= 4:
            name = self._cells[cell][0].name
            if name != self.cursor:
                self.cursor = name
                self.refresh_results()

    def failures_content(self, rows) -> Content:
        """A bar per stage, and under it its commonest errors: how many, what, and one unit that had it."""
        stages = failures_by_stage(rows)
        if not stages:
            return Content.styled("no failures", "dim")
        groups = failure_groups(rows)
        width = max(30, self.query_one("#results-failures").content_region.width or 60)
        peak = max(count for _, count in stages)
        lines = []
        for stage, count in stages:
            lines.append(line(f"{stage:<10} ", ("█" * max(1, round(BAR_WIDTH * count / peak)) + " ", "$error"),
                              str(count)))
            shown = groups.get(stage, [])[:ERRORS_PER_STAGE]
            for group in shown:
                example = short_name(printable(group.example), EXAMPLE_WIDTH)
                room = width - 8 - len(example) - 2
                cause = cause_line(f"{stage}: {printable(group.message)}").removeprefix(f"{stage}: ")  # the class last
                message = cause if len(cause) <= room else cause[:max(1, room - 1)] + "…"
                lines.append(line(f"{group.count:>6}  ", message.ljust(room) + "  ", (example, "dim")))
            others = len(groups.get(stage, [])) - len(shown)
            if others > 0:
                lines.append(Content.styled(f"{'':>6}  and {others} other error{'s' if others > 1 else ''}", "dim"))
        return Content("\n").join(lines)

    def devices_content(self, rows) -> Content:
        figures = device_figures(rows)
        if not figures:
            return Content.styled("no model done yet", "dim")
        width = max(len(f.device) for f in figures)
        head = Content.styled(f"{'device':<{width}}  {'done':>6}  {'median':>10}  {'fastest':>10}  {'slowest':>10}",
                              "bold")
        return Content("\n").join([head, *(
            Content(f"{f.device:<{width}}  {f.done:>6}  {milliseconds(f.median_ms):>10}  "
                    f"{milliseconds(f.fastest_ms):>10}  {milliseconds(f.slowest_ms):>10}") for f in figures)])
