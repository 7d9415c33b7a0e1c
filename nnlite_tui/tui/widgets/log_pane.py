"""Log pane: the conversion and benchmark log of one model, bounded.

It follows the model in flight until the operator picks another in the queue (Escape follows again).
"""

from __future__ import annotations

from textual.widgets import Log

from nnlite_tui.tui.state import LOG_LINES_PER_MODEL, RunView


class LogPane(Log):
    def __init__(self, view: RunView, **kwargs) -> None:
        super().__init__(max_lines=LOG_LINES_PER_MODEL, highlight=False, **kwargs)
        self.view = view
        self.picked: str | None = None  # None: follow the model in flight
        self.shown: str | None = None

    def on_mount(self) -> None:
        self.update_title()

    @property
    def target(self) -> str | None:
        return self.picked or self.view.followed()

    def pick(self, model: str | None) -> None:
        self.picked = model
        self.sync()

    def sync(self, new_lines: dict[str, list[str]] | None = None) -> None:
        """Show the target model's log; append only new lines when the target did not change."""
        target = self.target
        if target != self.shown:
            self.clear()
            self.shown = target
            if target is not None:
                self.write_lines(self.view.log_lines(target))
            self.update_title()
        elif target is not None and new_lines and target in new_lines:
            self.write_lines(new_lines[target])

    def update_title(self) -> None:
        how = "picked, Esc follows in-flight" if self.picked else "following in-flight"
        self.border_title = f"Log: {self.shown or '-'}"
        self.border_subtitle = how
