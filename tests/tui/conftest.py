import time

import pytest

from nnlite_tui.tui.app import make_app
from nnlite_tui.tui.messages import PipelineEvents

FROZEN = 1_760_000_000.0  # every clock the console reads is this instant in tests


@pytest.fixture(autouse=True)
def utc(monkeypatch):
    """Event times are shown in local time; pin it so screens do not depend on the machine."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def frozen_app(**kwargs):
    """The console with a frozen clock; every stream of events is shown at once (ui_interval 0)
    unless a test asks for the throttle."""
    kwargs.setdefault("ui_interval", 0.0)
    kwargs.setdefault("sample_host", False)  # the host card's live CPU figures would vary the screens
    return make_app(clock=lambda: FROZEN, **kwargs)


async def feed(app, pilot, *events):
    """Deliver events the way an attached run does, and let the console settle."""
    app.post_message(PipelineEvents(events))
    await pilot.pause()
    await pilot.pause()
