"""Every control, driven through the keys, reaching a real Control that a pipeline honours."""

import json

from textual.command import CommandList, CommandPalette

from nnlite_tui.tui.app import ExitCode
from nnlite_tui.tui.screens.confirm import ConfirmQuit
from nnlite_tui.tui.screens.detail import ModelDetailScreen
from nnlite_tui.tui.screens.help import HelpScreen
from nnlite_tui.tui.widgets.run_header import RunHeader

from .conftest import FROZEN, feed, frozen_app
from .scripted import ScriptedPipeline, busy_run_events

SIZE = (160, 48)


async def wait_for(pilot, condition, tries=500):  # 10 s and more: CI machines are slow
    for _ in range(tries):
        if condition():
            return
        await pilot.pause(0.02)
    raise AssertionError("condition not reached")


async def test_pause_resume_and_skip_in_flight_reach_the_pipeline():
    pipeline = ScriptedPipeline(models=("m1", "m2"), hold="m1")
    app = frozen_app(pipeline_factory=lambda: pipeline)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.view.in_flight() == ["m1"])
        header = app.screen.query_one(RunHeader)
        await pilot.press("p")
        assert app.control.paused and app.view.paused
        assert header.has_class("-paused") and "PAUSED" in str(header.render())
        await pilot.press("p")
        assert not app.control.paused and header.has_class("-running")
        await pilot.press("s")  # m1 is held in conversion until skipped
        await wait_for(pilot, lambda: app.view.models["m1"].status == "skipped")
        await wait_for(pilot, lambda: app.view.finished is not None)
        assert app.view.models["m2"].status == "done"
        assert "FINISHED" in str(header.render())
        await pilot.press("q")  # the run has ended: no question asked
    assert app.return_value == ExitCode.OK


async def test_pause_holds_the_pipeline_at_the_next_model():
    pipeline = ScriptedPipeline(models=("m1", "m2", "m3"), hold="m1")
    app = frozen_app(pipeline_factory=lambda: pipeline)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.view.in_flight() == ["m1"])
        await pilot.press("p", "s")
        await wait_for(pilot, lambda: app.view.models["m1"].status == "skipped")
        await wait_for(pilot, lambda: pipeline.held_before == "m2")  # the pause holds the run before m2
        assert app.view.models["m2"].status == "queued"
        await pilot.press("p")
        await wait_for(pilot, lambda: app.view.finished is not None)
        assert app.view.counts()["done"] == 2
        await pilot.press("q")


async def test_skip_retry_selected_and_stop_after_current():
    app = frozen_app()
    async with app.run_test(size=SIZE) as pilot:
        await feed(app, pilot, *busy_run_events(FROZEN))
        await pilot.press("down", "down")  # model_02 (failed)
        await pilot.press("r")
        assert app.control.take_retries() == ["model_02"]
        await pilot.press("down", "down", "down", "down", "down", "down")  # model_08 (queued)
        await pilot.press("x")
        assert app.control.should_skip("model_08")
        await pilot.press("t")
        assert app.control.stopping and not app.control.stop_now.is_set()
        assert "STOPPING" in str(app.screen.query_one(RunHeader).render())
        events = str(app.screen.query_one("#events-body").render())
        assert "operator: retry model_02" in events and "operator: skip model_08" in events


async def test_quit_while_in_flight_asks_then_stops_children_and_leaves_run_resumable():
    pipeline = ScriptedPipeline(models=("m1", "m2"), hold="m1")
    app = frozen_app(pipeline_factory=lambda: pipeline)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.view.in_flight() == ["m1"])
        await pilot.press("q")
        assert isinstance(app.screen, ConfirmQuit)
        await pilot.press("n")
        assert not isinstance(app.screen, ConfirmQuit) and app.is_running
        await pilot.press("q")
        await pilot.press("y")
        await wait_for(pilot, lambda: not app.is_running)
    assert app.return_value == ExitCode.STOPPED
    assert pipeline.shutdown_called.is_set()
    assert app.control.stop_now.is_set()
    assert app.pipeline_done.is_set()
    assert app.view.models["m1"].status == "queued"  # not marked skipped or failed: redone on resume


async def test_detail_screen_shows_report_statistics_and_histogram(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    reports = tmp_path / "runs" / "t1" / "reports"
    reports.mkdir(parents=True)
    samples = [1_000_000 + 10_000 * (i % 7) for i in range(50)]
    report = {"model_name": "model_00", "device_type": "host", "os_version": "Linux 6.1", "valid": True,
              "emulator": False, "error_message": None, "in_dim_0": 1, "in_dim_1": 3, "in_dim_2": 32,
              "in_dim_3": 32, "conversion": {"converter": "litert-torch", "seconds": 4.2, "max_abs_diff": 1e-6},
              "benchmark": {"stats": {"mean_ns": 1.03e6, "median_ns": 1.03e6, "p90_ns": 1.06e6, "p99_ns": 1.06e6,
                                      "std_ns": 2e4, "min_ns": 1e6, "max_ns": 1.06e6},
                            "samples_ns": samples, "output_shapes": [[1, 10]]}}
    (reports / "model_00__host__xnnpack.json").write_text(json.dumps(report))
    app = frozen_app()
    async with app.run_test(size=SIZE) as pilot:
        await feed(app, pilot, *busy_run_events(FROZEN))
        await pilot.press("enter")
        assert isinstance(app.screen, ModelDetailScreen) and app.screen.model == "model_00"
        text = "\n".join(str(w.render()) for w in app.screen.query(".detail-block"))
        assert "status done  try 1  device host" in text
        assert "input (1, 3, 32, 32)  output (1, 10)" in text
        assert "median 1.03 ms" in text and "p99 1.06 ms" in text
        assert "converter litert-torch  took 4.20 s  max |diff| 1.00e-06" in text
        assert "emulator no" in text and "False" not in text
        assert app.screen.query_one(".latency-sparkline").data[:2] == [1.0, 1.01]
        await pilot.press("escape")
        assert not isinstance(app.screen, ModelDetailScreen)


async def test_help_screen_and_palette_commands_for_every_action():
    app = frozen_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        titles = [c.title for c in app.get_system_commands(app.screen)]
        for title in ("Pause / resume", "Skip in-flight", "Skip selected", "Retry selected", "Stop after current",
                      "Model detail", "Help", "Next theme", "Quit", "Filter by name", "Filter by status",
                      "Sort models", "Follow in-flight log", "Failure text", "Events, whole lines"):
            assert title in titles
        assert len(titles) == len(set(titles)) and "Keys" not in titles and "Theme" not in titles  # one entry each


def _first_command(app) -> str | None:
    """The first command the open palette lists, once its search has answered."""
    if not isinstance(app.screen, CommandPalette):
        return None
    results = app.screen.query_one(CommandList)
    return str(results.get_option_at_index(0).prompt.plain) if results.option_count else None


async def test_palette_runs_an_action():
    app = frozen_app()
    async with app.run_test(size=SIZE) as pilot:
        await feed(app, pilot, *busy_run_events(FROZEN))
        await pilot.press("ctrl+p")
        await pilot.press(*"pause / resume")
        await wait_for(pilot, lambda: (_first_command(app) or "").startswith("Pause / resume"))  # search answered
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.control.paused)


async def test_themes_selectable_by_option_and_at_runtime():
    app = frozen_app(theme="nnlite-light")
    async with app.run_test(size=SIZE) as pilot:
        assert app.theme == "nnlite-light"
        await pilot.press("T")
        assert app.theme != "nnlite-light" and app.theme in app.theme_names
    bad = frozen_app(theme="no-such-theme")
    async with bad.run_test(size=SIZE) as pilot:
        assert bad.theme == "nnlite-dark"
        assert any("unknown theme 'no-such-theme'" in n.message for n in bad._notifications)


async def test_a_crashed_pipeline_is_reported_not_hidden():
    def broken():
        raise RuntimeError("no devices")

    app = frozen_app(pipeline_factory=broken)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: "crashed pipeline  RuntimeError: no d"
                       in str(app.screen.query_one("#events-body").render()))
        assert app.pipeline_done.is_set()
        await pilot.press("q")
    assert app.return_value == ExitCode.INTERNAL
