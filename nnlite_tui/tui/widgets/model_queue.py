"""Model queue pane: every model with status, attempts, device, median latency and error summary.

Filter by status (select or `f`) and by name (`/`), sort (`o`); counts by status in the title.
The table is virtual (queue_table.py): a status change repaints one visible line; a change of
membership or order re-filters and re-sorts the names (milliseconds for 10,000), debounced.
"""

from __future__ import annotations

from itertools import islice

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Input, Select

from nnlite_tui.core.events import STATUSES
from nnlite_tui.tui.state import ModelRow, RunView
from nnlite_tui.tui.themes import theme_colour
from nnlite_tui.tui.widgets.borders import set_border_text
from nnlite_tui.tui.widgets.queue_table import QueueTable

# Status -> theme variable; resolved against the current theme when a line is drawn.
STATUS_VARIABLE = {"queued": "text-muted", "converting": "accent", "converted": "secondary",
                   "benchmarking": "primary", "done": "success", "failed": "error", "skipped": "warning"}
SORTS = {
    "queue": lambda r: r.order,
    "status": lambda r: (STATUSES.index(r.status) if r.status in STATUSES else 99, r.order),
    "name": lambda r: r.name,
    "fastest": lambda r: (r.median_ms is None, r.median_ms or 0.0),
    # The slowest first: what to look at in a long run's results (models without a median still last).
    "slowest": lambda r: (r.median_ms is None, -(r.median_ms or 0.0)),
    "attempts": lambda r: (-r.attempt, r.order),
}
HEADER_SORTS = {"model": "name", "status": "status", "attempt": "attempts", "median": "fastest", "error": "status"}
REBUILD_SECONDS = 0.3  # status changes that move rows (filtered or sorted view) are gathered this long
MODEL_WIDTH = (10, 64)  # the model column fits the longest name within these bounds


class ModelQueue(Vertical):
    BINDINGS = [
        Binding("slash", "focus_filter", "Filter", show=False),
        Binding("f", "cycle_status", "Status filter", show=False),
        Binding("o", "cycle_sort", "Sort", show=False),
        Binding("escape", "focus_table", "Back to the table", show=False),  # from the name filter
    ]

    def __init__(self, view: RunView, **kwargs) -> None:
        super().__init__(**kwargs)
        self.view = view
        self.status_filter: str | None = None
        self.name_filter = ""
        self.sort = "queue"
        self._rebuild_pending = False
        self._colours: dict[str, str] = {}
        self._longest = 0
        self._fitted = 0  # models whose names the column widths have seen (names never change)
        self._lower: dict[str, str] = {}  # model name -> lower case, for the name filter

    def compose(self) -> ComposeResult:
        with Horizontal(id="queue-filters"):
            yield Input(placeholder="filter by name  ( / )", id="name-filter")
            yield Select([(s, s) for s in STATUSES], prompt="any status", id="status-filter",
                         compact=True)
        yield QueueTable(self.view.models.__getitem__, self.status_colour, id="queue-table")

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self._theme_changed())
        self.rebuild()

    def _theme_changed(self) -> None:
        self._colours.clear()
        self.table.restyle()

    def status_colour(self, status: str) -> str:
        colour = self._colours.get(status)
        if colour is None:
            variable = STATUS_VARIABLE.get(status, "foreground")
            colour = self._colours[status] = theme_colour(self.app.theme_variables, variable)
        return colour

    @property
    def table(self) -> QueueTable:
        return self.query_one(QueueTable)

    # --- rendering ---
    def matches(self, row: ModelRow) -> bool:
        if self.status_filter and row.status != self.status_filter:
            return False
        return self.name_filter.lower() in row.name.lower()

    def update_title(self) -> None:
        counts = self.view.counts()
        parts = [f"{s} {counts[s]}" for s in STATUSES if counts[s]]
        shown = self.table.row_count
        filters = " ".join(x for x in (self.status_filter or "", self.name_filter and f"'{self.name_filter}'") if x)
        title = f"Models {shown}/{len(self.view.models)}  sort: {self.sort}" + (f"  filter: {filters}" if filters else "")
        subtitle = "  ".join(parts)
        set_border_text(self, title, subtitle)

    def _fit_columns(self) -> None:
        """The model column as wide as the run's longest name (within MODEL_WIDTH), all of them
        known when the run starts; the table decides the rest from its width."""
        low, high = MODEL_WIDTH
        models = self.view.models
        longest = max([self._longest, *map(len, islice(models, self._fitted, None))])
        self._fitted = len(models)
        if longest != self._longest:
            self._longest = longest
            self.table.set_widths(max(low, min(high, longest)))

    def filtered(self) -> list[ModelRow]:
        """The rows that pass the filters, in queue order (the same test as matches(), for 10,000 rows at once)."""
        rows = self.view.models.values()
        if self.status_filter:
            status = self.status_filter
            rows = [r for r in rows if r.status == status]
        if self.name_filter:
            needle, lower = self.name_filter.lower(), self._lower
            if len(lower) != len(self.view.models):
                self._lower = lower = {name: name.lower() for name in self.view.models}
            rows = [r for r in rows if needle in lower[r.name]]
        return list(rows)

    def rebuild(self, to_top: bool = False) -> None:
        """Filter and sort again, the cursor on the model it was on (or, `to_top`, on the first row)."""
        self._rebuild_pending = False
        self._fit_columns()
        rows = self.filtered()
        if self.sort != "queue":
            rows.sort(key=SORTS[self.sort])
        table = self.table
        table.set_rows([r.name for r in rows], keep=None if to_top else table.selected())
        if to_top:
            table.move_cursor(0, pick=False)
        self.update_title()

    def schedule_rebuild(self) -> None:
        if not self._rebuild_pending:
            self._rebuild_pending = True
            self.set_timer(REBUILD_SECONDS, self.rebuild)

    def update_models(self, names: set[str]) -> None:
        """Repaint the visible rows of `names`; re-filter/re-sort when a row may move."""
        table = self.table
        moved = self.sort not in ("queue", "name")
        rows = [self.view.models[name] for name in names]
        self._fit_columns()
        if not moved and (self.status_filter or self.name_filter):
            moved = any((row.name in table.index) != self.matches(row) for row in rows)
        if moved:
            self.schedule_rebuild()
        table.refresh_models(names)
        self.update_title()

    def move_cursor_to(self, name: str) -> None:
        i = self.table.index.get(name)
        if i is not None:  # else the model is filtered out; the cursor stays where it was
            self.table.move_cursor(i, pick=False)

    def selected(self) -> str | None:
        return self.table.selected()

    # --- operator input ---
    @on(Input.Changed, "#name-filter")
    def _name_changed(self, event: Input.Changed) -> None:
        self.name_filter = event.value.strip()
        self.rebuild()

    @on(Input.Submitted, "#name-filter")
    def _name_done(self) -> None:
        self.action_focus_table()

    @on(Select.Changed, "#status-filter")
    def _status_changed(self, event: Select.Changed) -> None:
        self.status_filter = None if event.value is Select.NULL else str(event.value)
        self.rebuild()

    def action_focus_filter(self) -> None:
        self.add_class("-filtering")  # shown again where a compact layout hides the filter row
        self.query_one("#name-filter", Input).focus()

    def action_focus_table(self) -> None:
        self.table.focus()
        self._filters_shown()

    def _filters_shown(self) -> None:
        self.set_class(bool(self.name_filter or self.status_filter), "-filtering")

    def action_cycle_status(self) -> None:
        """The next status that some model has (a 10,000-model run has most statuses empty at any time:
        stepping through them showed empty tables on the way to the one wanted)."""
        counts = self.view.counts()
        order = [None, *(s for s in STATUSES if counts[s] or s == self.status_filter)]
        self.status_filter = order[(order.index(self.status_filter) + 1) % len(order)]
        select = self.query_one("#status-filter", Select)
        with select.prevent(Select.Changed):
            select.value = self.status_filter if self.status_filter else Select.NULL
        self._filters_shown()
        self.rebuild()

    @on(QueueTable.HeaderClicked)
    def _header_clicked(self, event: QueueTable.HeaderClicked) -> None:
        """Sort by the clicked column; the median's header again: the other way round."""
        sort = HEADER_SORTS.get(event.column)
        if sort is None:
            return
        if sort == "fastest" and self.sort == "fastest":
            sort = "slowest"
        self.sort = sort
        self.rebuild(to_top=True)

    def action_cycle_sort(self) -> None:
        names = list(SORTS)
        self.sort = names[(names.index(self.sort) + 1) % len(names)]
        # A new order is read from its top (the slowest, the most attempts): the view used to stay on
        # the model the cursor was on, wherever the new order put it.
        self.rebuild(to_top=True)
