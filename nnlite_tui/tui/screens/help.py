"""Help screen: what every key does."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

KEYS = (
    ("p", "pause / resume the run (the model in flight finishes its current stage)"),
    ("s", "skip the model(s) in flight"),
    ("x", "skip the model under the queue cursor"),
    ("r", "retry the model under the queue cursor"),
    ("t", "stop after the models in flight finish"),
    ("q", "quit (asks first while a model is in flight; the run stays resumable)"),
    ("enter", "model detail: report, shapes, conversion, latency histogram"),
    ("g", "results: latency vs parameters, failures by stage, medians per device"),
    ("/", "filter models by name"),
    ("f", "cycle the status filter"),
    ("o", "cycle the sort order (queue, status, name, fastest, slowest, attempts)"),
    ("esc", "log pane follows the model in flight again"),
    ("T", "next colour theme"),
    ("ctrl+p", "command palette: every action above, and themes"),
    ("?", "this help"),
)


class HelpScreen(ModalScreen):
    BINDINGS = [Binding("escape,q,question_mark", "app.pop_screen", "Close")]

    def compose(self) -> ComposeResult:
        rows = [Content.assemble((f"{key:>6}", "bold $accent"), f"  {what}") for key, what in KEYS]
        with VerticalScroll(id="help"):
            yield Static(Content("\n").join(rows))

    def on_mount(self) -> None:
        self.query_one("#help").border_title = "Keys"
        self.query_one("#help").border_subtitle = "Esc closes"
