"""Every operator action is answered on screen at once (200 ms) and written to events.jsonl; an
action after the run ended says why nothing happened instead of showing it done."""

import json
import time

from nnlite_tui.core.run.jsonl import JsonlReporter
from nnlite_tui.tui.widgets.run_header import RunHeader

from .conftest import frozen_app
from .scripted import ScriptedPipeline

SIZE = (160, 45)
AT_ONCE_S = 0.2


def screen_text(app) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def row_of(app, model: str) -> str:
    return next((line.strip("│ ") for line in screen_text(app).splitlines() if line.startswith(f"│ {model} ")), "")


async def answered(pilot, key, condition):
    """Press `key`; the seconds until `condition()` held on screen."""
    start = time.monotonic()
    await pilot.press(key)
    while not condition():
        assert time.monotonic() - start < 5, f"{key}: no answer on screen"
        await pilot.pause(0.01)
    return time.monotonic() - start


async def test_each_action_shows_at_once_and_goes_to_the_event_log(tmp_path):
    # m1 is held until skipped; the others take a second each: room for the actions before the end
    pipeline = ScriptedPipeline(models=("m1", "m2", "m3", "m4"), run_dir=str(tmp_path), hold="m1", step_s=1.0)
    reporter = JsonlReporter(tmp_path)
    app = frozen_app(pipeline_factory=lambda: pipeline, run_dir=str(tmp_path), reporters=[reporter])
    async with app.run_test(size=SIZE) as pilot:
        while app.view.in_flight() != ["m1"]:
            await pilot.pause(0.02)
        header = app.screen.query_one(RunHeader)
        events = app.screen.query_one("#events-body")
        await pilot.press("down", "up")  # the session's first key pays one-time costs (imports, first styles)
        took = {}
        took["pause"] = await answered(pilot, "p", lambda: "PAUSED" in str(header.render())
                                       and "operator: pause" in str(events.render()))
        took["resume"] = await answered(pilot, "p", lambda: "RUNNING" in str(header.render())
                                        and "operator: resume" in str(events.render()))
        await pilot.press("down", "down")  # m3, queued
        took["skip queued"] = await answered(pilot, "x", lambda: row_of(app, "m3").split()[:2] == ["m3", "skipping"]
                                             and "operator: skip m3" in str(events.render()))
        took["skip in flight"] = await answered(pilot, "s", lambda: "operator: skip m1" in str(events.render()))
        while app.view.models["m1"].status != "skipped":
            await pilot.pause(0.02)
        await pilot.press("home")
        took["retry"] = await answered(pilot, "r", lambda: "operator: retry m1" in str(events.render()))
        took["stop after current"] = await answered(pilot, "t", lambda: "STOPPING" in str(header.render())
                                                    or app.view.finished is not None)
        assert all(seconds < AT_ONCE_S for seconds in took.values()), took
        while app.view.finished is None:
            await pilot.pause(0.02)
        # After the end: the keys say why nothing happens, and nothing is sent or shown as done.
        shown = len(app.view.notable)
        await pilot.press("p", "r")
        messages = [n.message for n in app._notifications]
        assert any("nothing to pause" in m for m in messages) and any("nothing to retry" in m for m in messages)
        assert len(app.view.notable) == shown
        await pilot.press("q")
    reporter.close()
    logged = [json.loads(line) for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    actions = [(e["action"], e["model"]) for e in logged if e["type"] == "RunControl"]
    assert ("pause", None) in actions and ("resume", None) in actions and ("skip", "m3") in actions
    assert ("skip", "m1") in actions and ("retry", "m1") in actions and ("stop_after_current", None) in actions
    assert len(actions) == 6  # each once: after the end, nothing was sent
