"""The queue with 10,000 models: a virtual table that draws only the visible rows."""

from nnlite_tui.core.events import ModelStatus, RunStarted
from nnlite_tui.tui.widgets.model_queue import ModelQueue

from .conftest import feed, frozen_app

SIZE = (160, 48)
COUNT = 10_000


def screen_text(app) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


async def test_ten_thousand_models_scroll_filter_and_sort(monkeypatch):
    names = [f"lemur_{i:05d}" for i in range(COUNT)]
    events = [RunStarted("runs/big", tuple(names), ("host", "emulator-32399"))]
    events += [ModelStatus(name, "done", attempt=1, device="emulator-32399", median_ms=float(i % 97) + 0.5)
               for i, name in enumerate(names[:6000])]
    app = frozen_app()
    async with app.run_test(size=SIZE) as pilot:
        await feed(app, pilot, *events)
        queue = app.screen.query_one(ModelQueue)
        table = queue.table
        assert table.row_count == COUNT and queue.border_title.startswith(f"Models {COUNT}/{COUNT}")
        assert table.virtual_size.height == COUNT + 1  # a header line, then one line per model
        text = screen_text(app)
        assert "emulator-32399" in text  # the device column fits the longest serial
        assert "lemur_00000  done" in text and "lemur_00040" not in text  # only the visible rows are drawn
        await pilot.press("end")
        assert table.selected() == names[-1] and names[-1] in screen_text(app)
        # scrolled to the end: a status change of a visible row repaints that row
        await feed(app, pilot, ModelStatus(names[-2], "converting", attempt=1))
        line = next(text for text in screen_text(app).splitlines() if f"│ {names[-2]}" in text)
        assert "converting" in line
        await pilot.press("pageup")
        assert table.cursor == COUNT - 1 - table.visible_rows
        await pilot.press("f", "f", "f")  # status filter: queued, converting, done (statuses no model has are passed over)
        assert table.row_count == 6000 and app.view.models[table.selected()].status == "done"
        await pilot.press("o", "o", "o")  # sort by latency, fastest first
        first = [table.get_row_at(i) for i in range(3)]
        assert [row[4] for row in first] == ["0.500", "0.500", "0.500"] and first[0][1] == "done"
        # A new order is shown from its top, not around the row the cursor was on before (near the end)
        assert table.cursor == 0 and round(table.scroll_y) == 0
        assert f"│ {first[0][0]} " in screen_text(app)
        # an update of a row off screen changes its data, not the screen; a visible one is repainted
        await feed(app, pilot, ModelStatus(names[9999], "failed", attempt=2, error="convert: E: boom"))
        assert app.view.models[names[9999]].status == "failed"
        assert "failed 1" in queue.border_subtitle


async def test_a_re_sort_during_the_run_shows_the_rows_where_they_now_are():
    """A sorted view is re-sorted as statuses change; the screen shows each row at its new place,
    the rows that did not move included."""
    names = [f"lemur_{i:05d}" for i in range(2000)]
    events = [RunStarted("runs/big", tuple(names), ("host",))]
    events += [ModelStatus(name, "done", attempt=1, device="host", median_ms=10.0 + i) for i, name in enumerate(names[:1000])]
    app = frozen_app()
    async with app.run_test(size=SIZE) as pilot:
        await feed(app, pilot, *events)
        table = app.screen.query_one(ModelQueue).table
        await pilot.press("o", "o", "o")  # sort by latency, fastest first
        assert table.names[0] == names[0]
        # a model between the 6th and the 7th fastest: the rows above stay, the rows below move down
        # one line; a model finishing off screen changes nothing on screen
        await feed(app, pilot, ModelStatus(names[1500], "done", attempt=1, device="host", median_ms=15.5),
                   ModelStatus(names[1600], "done", attempt=1, device="host", median_ms=5000.0))
        for _ in range(200):
            if table.names[6] == names[1500]:
                break
            await pilot.pause(0.02)
        assert table.names[6] == names[1500], "the sorted view was not rebuilt"
        await pilot.pause()
        rows = [line for line in screen_text(app).splitlines() if "│ lemur_" in line]
        shown = [line.split("│ ")[1].split()[0] for line in rows]
        assert shown == table.names[:len(shown)] and shown[5:8] == [names[5], names[1500], names[6]]
        assert "15.0" in rows[5] and "15.5" in rows[6] and "16.0" in rows[7]
