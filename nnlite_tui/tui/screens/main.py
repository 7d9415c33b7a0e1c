"""The console's main screen: lays the panes out and routes folded events to the panes they touch."""

from __future__ import annotations

from typing import Callable, Iterable

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.screen import Screen

from nnlite_tui.core.events import (ConversionCost, DeviceState, Event, ModelLog, ModelStatus, ReferenceTimed,
                                    RoundFinished, RunControl, RunStarted, StageFinished, StageStarted)
from nnlite_tui.tui.messages import ModelPicked
from nnlite_tui.tui.state import RunView
from nnlite_tui.tui.widgets.devices import DevicesPane
from nnlite_tui.tui.widgets.events_pane import EventsPane
from nnlite_tui.tui.widgets.log_pane import LogPane
from nnlite_tui.tui.widgets.model_queue import ModelQueue
from nnlite_tui.tui.widgets.queue_table import QueueTable
from nnlite_tui.tui.widgets.run_header import RunHeader
from nnlite_tui.tui.widgets.steady_footer import SteadyFooter


COMPACT_WIDTH, COMPACT_HEIGHT = 110, 30
WIDE_WIDTH = 200


class MainScreen(Screen):
    def __init__(self, view: RunView, mode: str, run_pid: Callable[[], int | None] | None = None) -> None:
        super().__init__()
        self.view = view
        self.mode = mode
        self.run_pid = run_pid  # the runner's pid, for the host card's load figures (None: not sampled)

    def compose(self) -> ComposeResult:
        yield RunHeader(self.view, mode=self.mode, id="run-header")
        with Horizontal(id="top"):
            yield ModelQueue(self.view, id="queue", classes="pane")
            with Vertical(id="side"):
                yield DevicesPane(self.view, run_pid=self.run_pid, id="devices", classes="pane")
                yield EventsPane(self.view, id="events", classes="pane")
        yield LogPane(self.view, id="log", classes="pane")
        yield SteadyFooter()

    def on_mount(self) -> None:
        self.query_one("#queue-table").focus()
        self.fit_layout(self.size.width, self.size.height)

    def on_resize(self, event) -> None:
        self.fit_layout(event.size.width, event.size.height)

    def fit_layout(self, width: int, height: int) -> None:
        """One of three layouts, by the terminal's size only: compact (80x24: the side panes below
        the queue, a shorter log), medium, and wide (200+ columns: a wider queue, a taller log)."""
        layout = "-compact" if width < COMPACT_WIDTH or height < COMPACT_HEIGHT else \
            "-wide" if width >= WIDE_WIDTH else "-medium"
        if not self.has_class(layout):
            self.remove_class("-compact", "-medium", "-wide")
            self.add_class(layout)
            footer = self.query_one(SteadyFooter)
            footer.compact = layout == "-compact"
            footer.show_command_palette = layout != "-compact"  # ctrl+p still opens it; Help and Quit need the room
            if footer.is_mounted:
                footer.refresh(recompose=True)

    def show(self, events: Iterable[Event]) -> None:
        """Update the panes touched by `events`, which the view has already folded in."""
        models: set[str] = set()
        devices: set[str] = set()
        lines = self.view.take_fresh_lines()  # log lines the view kept (library noise filtered)
        notable = restart = False
        for event in events:
            if isinstance(event, ModelLog):
                continue
            elif isinstance(event, (ModelStatus, StageStarted, StageFinished)):
                models.add(event.model)
                notable |= isinstance(event, ModelStatus) and event.status == "failed"
            elif isinstance(event, DeviceState):
                devices.add(event.serial)
                notable |= event.state in ("lost", "offline")
            elif isinstance(event, ReferenceTimed):
                devices.add(event.serial)
            elif isinstance(event, (RoundFinished, ConversionCost)):
                continue  # its log line came with the view's fresh lines; a cost shows in the ETA only
            elif isinstance(event, RunControl):
                notable = True
                if event.model:  # a skip shows on its row at once ("skipping")
                    models.update(name for name in event.model.split(", ") if name in self.view.models)
            else:
                notable = True
                restart |= isinstance(event, RunStarted)
        if models:  # the host card counts the conversions in flight beside its benchmark
            devices.update(s for s, d in self.view.devices.items() if d.kind == "host")
        with self.app.batch_update():
            if restart:
                self.query_one(ModelQueue).rebuild()
            elif models:
                self.query_one(ModelQueue).update_models(models)
            if devices:
                self.query_one(DevicesPane).update_devices(devices)
            if notable:
                self.query_one(EventsPane).refresh_events()
            self.query_one(LogPane).sync(lines)
            self.query_one(RunHeader).update_from_view()

    def show_all(self) -> None:
        """Redraw every pane from the view."""
        with self.app.batch_update():
            self.query_one(ModelQueue).rebuild()
            self.query_one(DevicesPane).update_devices(set(self.view.devices))
            self.query_one(EventsPane).refresh_events()
            self.view.take_fresh_lines()
            self.query_one(LogPane).sync()
            self.query_one(RunHeader).update_from_view()

    def selected_model(self) -> str | None:
        return self.query_one(ModelQueue).selected()

    @on(QueueTable.Selected)
    def _row_selected(self, event: QueueTable.Selected) -> None:
        self.app.action_detail(event.model)

    @on(ModelPicked)
    def _picked(self, message: ModelPicked) -> None:
        self.pick_model(message.model)

    def pick_model(self, model: str | None) -> None:
        """Show `model`'s log, or follow the model in flight (None)."""
        self.query_one(LogPane).pick(model)
