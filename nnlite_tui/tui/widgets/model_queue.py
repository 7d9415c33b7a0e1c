"""Model queue pane: every model with status, attempts, device, median latency and error summary.

Filter by status (select or `f`) and by name (`/`), sort (`o`); counts by status in the title.
Rows are updated in place; a change of membership or order rebuilds the table, debounced.
"""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import DataTable, Input, Select
from textual.widgets.data_table import RowDoesNotExist

from nnlite_tui.core.events import STATUSES
from nnlite_tui.tui.messages import ModelPicked
from nnlite_tui.tui.state import ModelRow, RunView
from nnlite_tui.tui.themes import theme_colour

# Status -> theme variable; resolved against the current theme when a cell is drawn.
STATUS_VARIABLE = {"queued": "text-muted", "converting": "accent", "converted": "secondary",
                   "benchmarking": "primary", "done": "success", "failed": "error", "skipped": "warning"}
SORTS = {
    "queue": lambda r: r.order,
    "status": lambda r: (STATUSES.index(r.status) if r.status in STATUSES else 99, r.order),
    "name": lambda r: r.name,
    "latency": lambda r: (r.median_ms is None, r.median_ms or 0.0),
    "attempts": lambda r: (-r.attempt, r.order),
}
COLUMNS = (("model", "Model", 26), ("status", "Status", 12), ("attempt", "Try", 3),
           ("device", "Device", 13), ("median", "Median ms", 9), ("error", "Error", None))


class QueueTable(DataTable):
    """Reports cursor moves made by the operator (not by rebuilds) as ModelPicked."""

    BINDINGS = [Binding("escape", "follow", "Follow in-flight", show=False)]

    def _picked(self) -> None:
        if self.row_count:
            key = self.coordinate_to_cell_key(self.cursor_coordinate).row_key
            self.post_message(ModelPicked(key.value))

    def action_cursor_up(self) -> None:
        super().action_cursor_up()
        self._picked()

    def action_cursor_down(self) -> None:
        super().action_cursor_down()
        self._picked()

    def action_page_up(self) -> None:
        super().action_page_up()
        self._picked()

    def action_page_down(self) -> None:
        super().action_page_down()
        self._picked()

    def action_scroll_top(self) -> None:
        super().action_scroll_top()
        self._picked()

    def action_scroll_bottom(self) -> None:
        super().action_scroll_bottom()
        self._picked()

    async def _on_click(self, event) -> None:
        await super()._on_click(event)
        self._picked()

    def action_follow(self) -> None:
        self.post_message(ModelPicked(None))


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

    def compose(self) -> ComposeResult:
        with Horizontal(id="queue-filters"):
            yield Input(placeholder="filter by name  ( / )", id="name-filter")
            yield Select([(s, s) for s in STATUSES], prompt="any status", id="status-filter",
                         compact=True)
        yield QueueTable(id="queue-table", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        table = self.query_one(QueueTable)
        for key, label, width in COLUMNS:
            table.add_column(label, key=key, width=width)
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self.rebuild())
        self.rebuild()

    def on_resize(self) -> None:
        """The error column takes the width the others leave, so the table never scrolls sideways."""
        table = self.table
        fixed = sum(width + 2 * table.cell_padding for _, _, width in COLUMNS if width)
        column = next((c for c in table.columns.values() if c.key.value == "error"), None)
        if column is not None:
            column.auto_width = False
            column.width = max(10, table.scrollable_content_region.width - fixed - 2 * table.cell_padding - 1)
            table.refresh(layout=True)

    @property
    def table(self) -> QueueTable:
        return self.query_one(QueueTable)

    # --- rendering ---
    def matches(self, row: ModelRow) -> bool:
        if self.status_filter and row.status != self.status_filter:
            return False
        return self.name_filter.lower() in row.name.lower()

    def cells(self, row: ModelRow) -> tuple:
        colour = theme_colour(self.app.theme_variables, STATUS_VARIABLE.get(row.status, "foreground"))
        error = (row.error or "").splitlines()[0] if row.error else ""
        return (row.name, Text(row.status, style=colour, end=""), str(row.attempt or ""), row.device or "",
                "" if row.median_ms is None else f"{row.median_ms:.3f}", error)

    def update_title(self) -> None:
        counts = self.view.counts()
        parts = [f"{s} {counts[s]}" for s in STATUSES if counts[s]]
        shown = self.table.row_count
        filters = " ".join(x for x in (self.status_filter or "", self.name_filter and f"'{self.name_filter}'") if x)
        self.border_title = (f"Models {shown}/{len(self.view.models)}  sort: {self.sort}"
                             + (f"  filter: {filters}" if filters else ""))
        self.border_subtitle = "  ".join(parts)

    def rebuild(self) -> None:
        self._rebuild_pending = False
        table = self.table
        keep = None
        if table.row_count:
            keep = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        rows = sorted((r for r in self.view.models.values() if self.matches(r)), key=SORTS[self.sort])
        with self.app.batch_update():
            table.clear()
            for row in rows:
                table.add_row(*self.cells(row), key=row.name)
            if keep is not None and keep in self.view.models:
                self.move_cursor_to(keep)
        self.update_title()

    def schedule_rebuild(self) -> None:
        if not self._rebuild_pending:
            self._rebuild_pending = True
            # A rebuild costs ~40 ms per 1000 rows: big queues are re-filtered/re-sorted less often.
            self.set_timer(max(0.3, len(self.view.models) / 1000), self.rebuild)

    def update_models(self, names: set[str]) -> None:
        """Refresh the rows of `names` in place; rebuild when a row enters or leaves the filter."""
        table = self.table
        for name in names:
            row = self.view.models[name]
            try:
                table.get_row_index(name)
            except RowDoesNotExist:
                if self.matches(row):
                    self.schedule_rebuild()
                continue
            if not self.matches(row) or self.sort != "queue":
                self.schedule_rebuild()
            for (key, _, _), value in zip(COLUMNS, self.cells(row)):
                table.update_cell(name, key, value)
        self.update_title()

    def move_cursor_to(self, name: str) -> None:
        try:
            self.table.move_cursor(row=self.table.get_row_index(name))
        except RowDoesNotExist:
            pass  # the model is filtered out; the cursor stays where it was

    def selected(self) -> str | None:
        table = self.table
        if not table.row_count:
            return None
        return table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value

    # --- operator input ---
    @on(Input.Changed, "#name-filter")
    def _name_changed(self, event: Input.Changed) -> None:
        self.name_filter = event.value.strip()
        self.rebuild()

    @on(Input.Submitted, "#name-filter")
    def _name_done(self) -> None:
        self.table.focus()

    @on(Select.Changed, "#status-filter")
    def _status_changed(self, event: Select.Changed) -> None:
        self.status_filter = None if event.value is Select.NULL else str(event.value)
        self.rebuild()

    def action_focus_filter(self) -> None:
        self.query_one("#name-filter", Input).focus()

    def action_focus_table(self) -> None:
        self.table.focus()

    def action_cycle_status(self) -> None:
        order = [None, *STATUSES]
        self.status_filter = order[(order.index(self.status_filter) + 1) % len(order)]
        select = self.query_one("#status-filter", Select)
        with select.prevent(Select.Changed):
            select.value = self.status_filter if self.status_filter else Select.NULL
        self.rebuild()

    def action_cycle_sort(self) -> None:
        names = list(SORTS)
        self.sort = names[(names.index(self.sort) + 1) % len(names)]
        self.rebuild()
