"""Help screen: the keys of the pane in focus first, then the run's keys, then the rest.

It fits 80x24: two columns of short lines, and the box scrolls when the terminal is shorter.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

RUN_KEYS = (
    ("p", "pause / resume (the stage in flight finishes)"),
    ("s", "skip the model(s) in flight"),
    ("x", "skip the model under the cursor"),
    ("r", "retry the failed/skipped model under the cursor"),
    ("t", "stop after the models in flight"),
    ("q", "quit (asks while a model is in flight)"),
)
VIEW_KEYS = (
    ("enter", "model detail: trust flags, then the numbers"),
    ("e", "the whole failure text of the model"),
    ("E", "every event, whole lines"),
    ("v", "results: latency vs parameters, failures"),
    ("T", "next colour theme"),
    ("ctrl+p", "command palette"),
    ("tab", "next pane (shift+tab: previous)"),
    ("?", "this help (for the pane in focus)"),
)
PANE_KEYS = {
    "queue": ("Model queue", (
        ("j k ↑ ↓", "move the cursor"),
        ("g G", "first / last model (home, end)"),
        ("ctrl+f/b", "page down / up"),
        ("/", "filter by name (esc: back)"),
        ("f", "next status filter"),
        ("o", "next sort order; or click a header"),
        ("esc", "the log follows the model in flight"),
        ("click", "a row: cursor; again: detail"),
    )),
    "log": ("Log", (
        ("↑ ↓ pgup pgdn", "scroll back and forth"),
        ("home end", "oldest / newest line"),
        ("← → h l", "scroll sideways (long lines)"),
        ("w", "wrap long lines"),
        ("wheel", "scroll"),
    )),
    "events": ("Events", (
        ("E", "every event kept, whole lines"),
    )),
}


def key_rows(keys: tuple[tuple[str, str], ...]) -> list[Content]:
    return [Content.assemble((f"{key:>13}", "bold $accent"), f"  {what}") for key, what in keys]


class HelpScreen(ModalScreen):
    BINDINGS = [Binding("escape,q,question_mark", "app.pop_screen", "Close")]

    def __init__(self, pane: str | None = None) -> None:
        super().__init__()
        self.pane = pane if pane in PANE_KEYS else "queue"

    def compose(self) -> ComposeResult:
        title, keys = PANE_KEYS[self.pane]
        rows = [Content.styled(f"{title} (in focus)", "bold"), *key_rows(keys),
                Content.styled("The run", "bold"), *key_rows(RUN_KEYS),
                Content.styled("Views", "bold"), *key_rows(VIEW_KEYS)]
        with VerticalScroll(id="help"):
            yield Static(Content("\n").join(rows))

    def on_mount(self) -> None:
        self.query_one("#help").border_title = "Keys"
        self.query_one("#help").border_subtitle = "Esc closes"
