"""Typed messages between the pipeline (or an attached run's event log) and the console."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from textual.message import Message

from nnlite_tui.core.events import Event

if TYPE_CHECKING:
    from nnlite_tui.tui.reporter import TuiReporter


class PipelineEvent(Message):
    """One pipeline event (status changes, device states, recoveries...) posted on its own."""

    def __init__(self, event: Event) -> None:
        super().__init__()
        self.event = event


class PipelineEvents(Message):
    """Many events at once: an attached run's event log, read in chunks (or rebuilt from its store)."""

    def __init__(self, events: Sequence[Event], from_snapshot: bool = False) -> None:
        super().__init__()
        self.events = list(events)
        self.from_snapshot = from_snapshot


class EventsPending(Message):
    """Events are waiting in the reporter; one of these stands for any number of them."""

    def __init__(self, reporter: TuiReporter) -> None:
        super().__init__()
        self.reporter = reporter

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, EventsPending) and message.reporter is self.reporter


class ModelPicked(Message):
    """The operator moved the queue cursor to a model (None: follow the model in flight again)."""

    def __init__(self, model: str | None) -> None:
        super().__init__()
        self.model = model
