"""Quit confirmation, shown while a model is in flight."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static


class ConfirmQuit(ModalScreen[bool]):
    BINDINGS = [Binding("y", "answer(True)", "Quit"), Binding("n,escape", "answer(False)", "Stay")]

    def __init__(self, in_flight: list[str]) -> None:
        super().__init__()
        self.in_flight = in_flight

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm"):
            yield Static(f"In flight: {', '.join(self.in_flight)}.\n"
                         "Quit now? Child processes are stopped and the run can be resumed later.")
            with Horizontal(id="confirm-buttons"):
                yield Button("Quit (y)", id="yes", variant="error")
                yield Button("Stay (n)", id="no", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#confirm").border_title = "Quit?"
        self.query_one("#no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)
