"""The console (Pilot): a model whose name and error message hold terminal sequences, and whose log
lines do too, reaches no pane raw: neither the main screen (queue, log pane, events pane) nor the
model's detail screen puts an ESC, BEL, C1 control or bidi override in the text it draws."""

from __future__ import annotations

import re

from nnlite_tui.core.events import ModelLog, ModelStatus, RunStarted
from tests.tui.conftest import FROZEN, feed, frozen_app

EVIL = "evil\x1b]0;pwned\x07\x9b2J\u202e"
ERROR = "convert: X: boom \x1b[2J\x1b]52;c;AA==\x07"
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _drawn(app) -> str:
    """The text of every cell the screen draws (Textual adds its own cursor moves around it)."""
    update = app.screen._compositor.render_update(full=True)
    return "\n".join("".join(segment.text for segment in strip) for strip in update.strips)


async def test_no_pane_draws_a_control_character():
    app = frozen_app()
    async with app.run_test(size=(160, 48)) as pilot:
        await feed(app, pilot, RunStarted(ts=FROZEN, run_dir="/r", models=(EVIL, "plain"), devices=("host",)),
                   ModelStatus(EVIL, "converting", attempt=1, ts=FROZEN),
                   ModelLog(EVIL, "convert", "line \x1b]0;title\x07 \x9b31m red", ts=FROZEN),
                   ModelStatus(EVIL, "failed", attempt=1, error=ERROR, ts=FROZEN))
        main = _drawn(app)
        assert "evil\\x1b]0;pwned" in main  # the queue shows the name, escaped
        assert "red" in main and "boom" in main  # the log pane and the error column
        await pilot.press("enter")  # the selected model's detail screen
        await pilot.pause()
        detail = _drawn(app)
        assert "boom \\x1b[2J" in detail
        for text in (main, detail):
            assert sorted({repr(ch) for ch in UNSAFE.findall(text)}) == []
