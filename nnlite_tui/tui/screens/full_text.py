"""A modal with whole lines: a failure's full text (`e`), every event kept, unabridged (`E`).

The panes cut their lines to fit; the words that say why often come last. Here nothing is cut:
lines wrap to the box's width, and the box scrolls.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from nnlite_tui.tui.widgets.log_pane import clean


class FullTextScreen(ModalScreen):
    BINDINGS = [
        Binding("escape,q,e,E", "app.pop_screen", "Close"),
        Binding("j,down", "scroll(1)", "Down", show=False),
        Binding("k,up", "scroll(-1)", "Up", show=False),
    ]

    def __init__(self, title: str, lines: list[Content | str]) -> None:
        super().__init__()
        self.title_text = title
        self.lines = [line if isinstance(line, Content) else Content(clean(line)) for line in lines]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="full-text"):
            yield Static(Content("\n").join(self.lines) if self.lines else Content("(nothing)"), id="full-text-body")

    def on_mount(self) -> None:
        box = self.query_one("#full-text")
        box.border_title = self.title_text
        box.border_subtitle = "Esc closes  j/k scroll"
        box.focus()

    def action_scroll(self, lines: int) -> None:
        box = self.query_one("#full-text", VerticalScroll)
        box.scroll_to(y=box.scroll_y + lines, animate=False)
