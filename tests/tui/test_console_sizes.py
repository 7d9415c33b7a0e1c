"""The console at 80x24, 160x45 and 220x60: a failure's cause readable in the queue without
opening anything, no column width changing when the first failure arrives, and (80x24) a footer
that keeps Help and Quit and a help box inside the screen."""

import pytest

from nnlite_tui.core.events import ModelLog, ModelStatus, RunStarted, StageFinished, StageStarted
from nnlite_tui.tui.screens.full_text import FullTextScreen
from nnlite_tui.tui.screens.help import HelpScreen
from nnlite_tui.tui.widgets.log_pane import LogPane
from nnlite_tui.tui.widgets.model_queue import ModelQueue

from .conftest import FROZEN, feed, frozen_app

NAMES = ("FractalNet-309422bb05fad9e6f97b0291b8f0dcb0", "alt-nn1-0b5d04e484ebf95c025ff48f05a0730a",
         "ga-mut-1011", "rag-4555c3c648b5366adb7639062350714f", "ga-892")
ERROR = ("export: SamplesAtInference: the model samples at inference (aten::bernoulli); a converted model "
         "cannot reproduce PyTorch's random draws")


def screen_text(app) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


@pytest.mark.parametrize("size", [(80, 24), (160, 45), (220, 60)])
async def test_a_failure_reads_in_the_queue_and_moves_no_column(size):
    app = frozen_app()
    async with app.run_test(size=size) as pilot:
        await feed(app, pilot, RunStarted("runs/t1", NAMES, ("host",), ts=FROZEN - 60),
                   ModelStatus(NAMES[0], "converting", attempt=1, ts=FROZEN - 50),
                   StageStarted(NAMES[0], "convert", ts=FROZEN - 50),
                   StageFinished(NAMES[0], "convert", True, 20.0, ts=FROZEN - 30),
                   ModelStatus(NAMES[0], "done", attempt=1, device="host", median_ms=12.5, ts=FROZEN - 20),
                   ModelStatus(NAMES[1], "converting", attempt=1, ts=FROZEN - 20))
        table = app.screen.query_one(ModelQueue).table
        before = table.column_widths()
        await feed(app, pilot, ModelStatus(NAMES[1], "failed", attempt=1, error=ERROR, ts=FROZEN - 5))
        assert table.column_widths() == before
        row = next(line for line in screen_text(app).splitlines() if "│ alt-nn1" in line)
        assert "export: the model samples" in row  # the stage and the cause's first words, not the class
        if size[0] >= 200:
            assert NAMES[0] in screen_text(app)  # wide: names whole
        footer = screen_text(app).splitlines()[-1]
        assert "? Help" in footer and "q Quit" in footer
        assert "ETA" in screen_text(app).splitlines()[0]


async def test_help_box_fits_80x24():
    app = frozen_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        box = app.screen.query_one("#help").region
        assert box.right <= 80 and box.bottom <= 24
        assert "Model queue (in focus)" in screen_text(app)


async def test_long_lines_scroll_sideways_or_wrap_and_a_failure_is_one_key_away():
    long_line = "Traceback tail: " + "x" * 150 + " RuntimeError: the decisive words"
    app = frozen_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await feed(app, pilot, RunStarted("runs/t1", NAMES, ("host",), ts=FROZEN),
                   ModelStatus(NAMES[0], "converting", attempt=1, ts=FROZEN),
                   ModelLog(NAMES[0], "convert", long_line, ts=FROZEN),
                   ModelStatus(NAMES[1], "failed", attempt=1, error=ERROR + "\nsecond line of the failure", ts=FROZEN))
        log = app.screen.query_one(LogPane)
        assert "the decisive words" not in screen_text(app)  # cut at the pane's edge
        log.action_scroll_columns(100)
        await pilot.pause()
        assert "the decisive words" in screen_text(app) and "from column " in screen_text(app)
        log.action_toggle_wrap()
        await pilot.pause()
        assert log.scroll_x == 0 and "the decisive words" in screen_text(app) and "Traceback tail" in screen_text(app)
        await pilot.press("down")  # the queue's cursor to the failed unit
        await pilot.press("e")
        assert isinstance(app.screen, FullTextScreen)
        text = screen_text(app)
        assert "cannot reproduce PyTorch's random draws" in text and "second line of the failure" in text
