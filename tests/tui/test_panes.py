"""Each pane updates from posted pipeline messages."""

from nnlite_tui.core.events import DeviceState, ModelLog, ModelStatus, Recovery, RunStarted
from nnlite_tui.tui.messages import PipelineEvent
from nnlite_tui.tui.widgets.devices import DevicesPane
from nnlite_tui.tui.widgets.events_pane import EventsPane
from nnlite_tui.tui.widgets.log_pane import LogPane
from nnlite_tui.tui.widgets.model_queue import ModelQueue
from nnlite_tui.tui.widgets.run_header import RunHeader

from .conftest import FROZEN, feed, frozen_app
from .scripted import busy_run_events

SIZE = (160, 48)


def table_rows(app):
    table = app.screen.query_one(ModelQueue).table
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


async def test_queue_shows_every_model_with_status_attempts_latency_error_and_counts():
    app = frozen_app()
    async with app.run_test(size=SIZE) as pilot:
        await feed(app, pilot, *busy_run_events(FROZEN))
        rows = {r[0]: r for r in table_rows(app)}
        assert len(rows) == 12
        assert rows["model_00"][1:5] == ["done", "1", "host", "1.82"]
        assert rows["model_02"][1] == "failed" and rows["model_02"][2] == "2"
        # the cause first, the exception's class last (it said nothing in a narrow column)
        assert rows["model_02"][5] == "convert: unsupported op aten::grid_sampler (TorchExportError)"
        assert rows["model_07"][1] == "converting"
        queue = app.screen.query_one(ModelQueue)
        assert queue.border_title == "Models 12/12  sort: queue"
        assert "done 3" in queue.border_subtitle and "failed 1" in queue.border_subtitle
        # a single status message updates its row in place
        app.post_message(PipelineEvent(ModelStatus("model_07", "done", attempt=1, median_ms=2.0)))
        await pilot.pause()
        assert {r[0]: r for r in table_rows(app)}["model_07"][1] == "done"
        assert "done 4" in queue.border_subtitle


async def test_queue_filters_by_status_and_name_and_sorts():
    app = frozen_app()
    async with app.run_test(size=SIZE) as pilot:
        await feed(app, pilot, *busy_run_events(FROZEN))
        await pilot.press("f")  # queued
        assert {r[1] for r in table_rows(app)} == {"queued"}
        await pilot.press("f")  # converting
        assert [r[0] for r in table_rows(app)] == ["model_07"]
        assert "converting" in app.screen.query_one(ModelQueue).border_title
        for _ in range(6):  # back round to "any status"
            await pilot.press("f")
        assert len(table_rows(app)) == 12
        await pilot.press("slash")
        await pilot.press("1", "1")
        await pilot.pause()
        assert [r[0] for r in table_rows(app)] == ["model_11"]
        await pilot.press("enter")  # leaves the filter box for the table
        assert app.focused is app.screen.query_one(ModelQueue).table
        await pilot.press("slash", "escape")  # so does Escape
        assert app.focused is app.screen.query_one(ModelQueue).table
        app.screen.query_one("#name-filter").value = ""
        await pilot.pause()
        await pilot.press("o")  # sort by status
        assert table_rows(app)[0][1] == "queued" and table_rows(app)[-1][1] == "skipped"
        await pilot.press("o", "o")  # sort by latency: fastest first, then models without a median
        assert [r[0] for r in table_rows(app)][:3] == ["model_03", "model_00", "model_01"]
        await pilot.press("o")  # the slowest first, models without a median still last
        assert [r[0] for r in table_rows(app)][:3] == ["model_01", "model_00", "model_03"]
        assert table_rows(app)[-1][4] == ""


async def test_devices_pane_shows_a_card_per_device_with_live_boot_timer():
    clock = [FROZEN]
    app = frozen_app()
    app.view.clock = lambda: clock[0]
    async with app.run_test(size=SIZE) as pilot:
        await feed(app, pilot, *busy_run_events(FROZEN))
        pane = app.screen.query_one(DevicesPane)
        assert set(pane.cards) == {"host", "emulator-5554"}
        emulator = str(pane.cards["emulator-5554"].render())
        assert "booting" in emulator and "40s" in emulator and "sys.boot_completed=0" in emulator
        host = str(pane.cards["host"].render())
        assert "model_05" in host and "54.5°C" in host and "6144 MiB free" in host
        clock[0] += 10
        pane.tick()
        assert "50s" in str(pane.cards["emulator-5554"].render())
        app.post_message(PipelineEvent(DeviceState("emulator-5554", "device", kind="emulator", phase="ready",
                                                   boot_elapsed_s=61.0, boot_completed=True)))
        await pilot.pause()
        card = str(pane.cards["emulator-5554"].render())
        assert "device" in card and "sys.boot_completed=1" in card


async def test_log_pane_follows_the_model_in_flight_until_the_operator_picks_another():
    app = frozen_app()
    async with app.run_test(size=SIZE) as pilot:
        await feed(app, pilot, *busy_run_events(FROZEN))
        log = app.screen.query_one(LogPane)
        assert log.shown == "model_07" and log.line_count == 8
        await feed(app, pilot, ModelLog("model_00", "benchmark", "old model line"),
                   ModelStatus("model_08", "converting", attempt=1), ModelLog("model_08", "convert", "new line"))
        assert log.shown == "model_08" and list(log.lines) == ["new line"]
        await pilot.press("down")  # the operator moves the cursor: model_01
        assert log.shown == "model_01" and log.picked == "model_01"
        await feed(app, pilot, ModelStatus("model_09", "converting", attempt=1))
        assert log.shown == "model_01"  # picked stays picked
        await pilot.press("escape")
        assert log.shown == "model_09" and log.picked is None


async def test_log_bursts_from_a_thread_are_coalesced_and_bounded():
    import threading

    from nnlite_tui.tui.messages import EventsPending

    seen = []
    app = frozen_app()
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await feed(app, pilot, RunStarted("runs/t1", ("m1",), ("host",)), ModelStatus("m1", "converting"))
        burst = threading.Thread(target=lambda: [app.reporter.emit(ModelLog("m1", "convert", f"line {i}"))
                                                 for i in range(3000)])
        burst.start()
        burst.join()
        for _ in range(5):
            await pilot.pause()
        drained = [m for m in seen if isinstance(m, EventsPending)]
        assert 1 <= len(drained) < 100
        log = app.screen.query_one(LogPane)
        assert log.lines[-1] == "line 2999" and log.line_count == 500  # bounded per model


async def test_events_pane_newest_first_coloured_by_severity_with_countdown():
    clock = [FROZEN]
    app = frozen_app()
    app.view.clock = lambda: clock[0]
    async with app.run_test(size=SIZE) as pilot:
        await feed(app, pilot, *busy_run_events(FROZEN))
        pane = app.screen.query_one(EventsPane)
        text = pane.body.render()
        lines = str(text).splitlines()
        assert "cool-down host  60s left" in lines[0]
        assert "reconnect emulator-5554" in lines[1]
        assert any("failed model_02" in line for line in lines)
        styles = {str(span.style) for span in text.spans}
        assert "$error" in styles and "$warning" in styles
        clock[0] += 45
        pane.tick()
        assert "15s left" in str(pane.body.render()).splitlines()[0]
        await feed(app, pilot, Recovery("emulator-restart", "emulator-5554", severity="error"))
        assert "emulator-restart" in str(pane.body.render()).splitlines()[0]


async def test_header_shows_progress_throughput_eta_and_state():
    app = frozen_app()
    async with app.run_test(size=SIZE) as pilot:
        await feed(app, pilot, *busy_run_events(FROZEN))
        header = app.screen.query_one(RunHeader)
        text = str(header.render())
        assert "RUNNING" in text and "done 3" in text and "failed 1" in text and "of 12" in text
        assert "30.0 models/h" in text  # 5 finished in 10 minutes
        # no stage timings in these events: the ETA is by count, marked with ~
        assert "ETA ~14:00" in text and "elapsed 0:10:00" in text
        assert "model_05, model_07" in text
        assert header.has_class("-running")


async def test_log_pane_scrolls_back_and_keeps_its_place_while_lines_arrive():
    app = frozen_app()
    async with app.run_test(size=SIZE) as pilot:
        await feed(app, pilot, RunStarted("runs/t1", ("m1",), ("host",)), ModelStatus("m1", "converting"),
                   *[ModelLog("m1", "convert", f"line {i}") for i in range(100)])
        log = app.screen.query_one(LogPane)
        height = log.scrollable_content_region.height
        assert log.render_line(height - 1).text.strip() == "line 99"  # newest at the bottom
        log.focus()
        await pilot.press("pageup")
        assert log.render_line(height - 1).text.strip() == "line 89"
        assert "10 newer lines below" in log.border_subtitle
        await feed(app, pilot, ModelLog("m1", "convert", "line 100"), ModelLog("m1", "convert", "line 101"))
        assert log.render_line(height - 1).text.strip() == "line 89"  # the operator's place is kept
        await pilot.press("home")
        assert log.render_line(0).text.strip() == "line 0"  # no blank rows above the oldest line
        await pilot.press("end")
        assert log.render_line(height - 1).text.strip() == "line 101"
        assert "newer lines below" not in log.border_subtitle


async def test_a_stream_of_events_reaches_the_screen_at_most_once_per_interval():
    app = frozen_app(ui_interval=0.4)
    async with app.run_test(size=SIZE) as pilot:
        await feed(app, pilot, RunStarted("runs/t1", ("m1", "m2"), ("host",)))
        queue = app.screen.query_one(ModelQueue)
        await pilot.pause(0.5)
        await feed(app, pilot, ModelStatus("m1", "done", attempt=1))  # the first after a quiet spell: at once
        assert "done 1" in queue.border_subtitle
        await feed(app, pilot, ModelStatus("m2", "done", attempt=1))  # within the interval: folded, not shown
        assert app.view.models["m2"].status == "done" and "done 1" in queue.border_subtitle
        await pilot.pause(0.5)
        assert "done 2" in queue.border_subtitle
        app.action_toggle_pause()  # the operator's own commands are shown at once
        assert "PAUSED" in str(app.screen.query_one(RunHeader).render())


async def test_header_names_the_conversion_holding_the_run_up_and_the_log_pane_its_phase():
    from nnlite_tui.core.events import StageFinished
    from nnlite_tui.core.progress import phase_line

    slow = "FractalNet-309422bb05fad9e6f97b0291b8f0dcb0@int8"
    app = frozen_app()
    async with app.run_test(size=SIZE) as pilot:
        await feed(app, pilot, RunStarted("runs/t1", ("a", "b", "c", slow), ("host",), ts=FROZEN - 300,
                                          holds_conversions=True),
                   *(StageFinished(name, "convert", True, 20.0, ts=FROZEN - 200) for name in ("a", "b", "c")),
                   ModelStatus(slow, "converting", attempt=1, ts=FROZEN - 150),
                   ModelLog(slow, "convert", phase_line("build", 0.0), ts=FROZEN - 149),
                   ModelLog(slow, "convert", phase_line("lower", 30.0), ts=FROZEN - 119))
        header = str(app.screen.query_one(RunHeader).render()).splitlines()[1]
        assert "slow: FractalNet-" in header and "@int8 converting 2m30s in lower, 8x the median 20.0 s" in header
        title = str(app.screen.query_one(LogPane).border_title)
        assert title.startswith("Log: FractalNet-") and "@int8  ▸ lower 119 s (from " in title
        assert "before: build 30.0 s" in str(app.screen.query_one(LogPane).border_subtitle)
        assert "held while" not in title
        # A host benchmark holds the conversions (--isolation pause): the title says so while it lasts.
        await feed(app, pilot, DeviceState("host", "busy", kind="host", model="c", ts=FROZEN))
        assert str(app.screen.query_one(LogPane).border_title).endswith("; held while the host times c")
        await feed(app, pilot, DeviceState("host", "idle", kind="host", ts=FROZEN))
        assert "held while" not in str(app.screen.query_one(LogPane).border_title)


async def test_the_first_failure_changes_no_column_width():
    """The widths come from the terminal's width and the run's names (all known at its start): the
    first failure used to shrink every name from 41 to 25 characters mid-run."""
    fractal = "FractalNet-309422bb05fad9e6f97b0291b8f0dcb0"
    app = frozen_app()
    async with app.run_test(size=SIZE) as pilot:
        await feed(app, pilot, RunStarted("runs/t1", (fractal, f"{fractal}@int8"), ("host", "emulator-5554"), ts=FROZEN),
                   ModelStatus(fractal, "done", attempt=1, device="emulator-5554", median_ms=257.0, ts=FROZEN))
        table = app.screen.query_one(ModelQueue).table
        before = table.column_widths()
        assert before[-1] >= 30  # the error column has room for a cause before any failure
        await feed(app, pilot, ModelStatus(f"{fractal}@int8", "failed", attempt=1, device="host", ts=FROZEN,
                                           error="convert: TorchExportError: unsupported op aten::grid_sampler"))
        assert table.column_widths() == before
        text = "\n".join(strip.text for strip in app.screen._compositor.render_strips())
        assert "convert: unsupported op aten::" in text
