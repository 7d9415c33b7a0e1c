"""Attach mode: a run owned by another process, shown from its events.jsonl and steered via control.jsonl."""

import json
import subprocess
import sys

import pytest

from nnlite_tui.core.run.control import ControlChannel
from nnlite_tui.core.events import ModelLog, ModelStatus, RunControl
from nnlite_tui.core.run.control import runner_pid
from nnlite_tui.core.run.event_log import EventTail
from nnlite_tui.tui.widgets.run_header import RunHeader

from .conftest import FROZEN, frozen_app
from .scripted import busy_run_events

SIZE = (160, 48)


def write_events(path, events, mode="a"):
    with open(path, mode, encoding="utf-8") as f:
        for event in events:
            f.write(json.dumps(event.to_dict()) + "\n")


@pytest.fixture
def runner(tmp_path):
    """A live process standing in for the headless runner that owns tmp_path."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    (tmp_path / "runner.pid").write_text(str(proc.pid))
    yield proc
    proc.kill()
    proc.wait()


async def wait_for(pilot, condition, tries=150):
    for _ in range(tries):
        if condition():
            return
        await pilot.pause(0.05)
    raise AssertionError("condition not reached")


def test_runner_pid_only_for_a_live_process(tmp_path, runner):
    assert runner_pid(tmp_path) == runner.pid
    runner.kill()
    runner.wait()
    assert runner_pid(tmp_path) is None
    (tmp_path / "runner.pid").write_text("garbage")
    assert runner_pid(tmp_path) is None


def test_tail_leaves_a_partial_line_for_later_and_counts_bad_lines(tmp_path):
    path = tmp_path / "events.jsonl"
    write_events(path, [ModelStatus("m1", "converting")])
    with open(path, "a") as f:
        f.write('{"type": "NoSuchEvent"}\n{"type": "ModelStatus", "model": "m2", "sta')
    tail = EventTail(tmp_path, lambda events: None)
    assert [e.model for e in tail.read_new()] == ["m1"] and tail.bad_lines == 1
    with open(path, "a") as f:
        f.write('tus": "done"}\n')
    assert [(e.model, e.status) for e in tail.read_new()] == [("m2", "done")]


async def test_attached_console_shows_the_run_live_and_sends_controls(tmp_path, runner):
    events_path = tmp_path / "events.jsonl"
    write_events(events_path, busy_run_events(FROZEN))
    channel = ControlChannel(tmp_path)
    channel.skip_existing()  # as the runner does when it starts
    app = frozen_app(run_dir=str(tmp_path), attach=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: len(app.view.models) == 12)
        assert "attached to runs/t1" in str(app.screen.query_one(RunHeader).render())
        write_events(events_path, [ModelStatus("model_07", "done", attempt=1, median_ms=3.0),
                                   ModelLog("model_08", "convert", "live line"),
                                   ModelStatus("model_08", "converting", attempt=1)])
        await wait_for(pilot, lambda: app.view.models["model_08"].status == "converting")
        assert app.screen.query_one("#log").shown == "model_08"
        await pilot.press("p")
        assert channel.poll() == [("pause", None)]
        assert app.view.paused
        # the runner applies it and echoes it; the console shows it once
        # The model_09 line comes after the echo: once the console shows it, it has read the echo too.
        write_events(events_path, [RunControl("pause"), ModelStatus("model_09", "converting", attempt=1)])
        await wait_for(pilot, lambda: app.view.models["model_09"].status == "converting")
        await pilot.pause()
        events = str(app.screen.query_one("#events-body").render())
        assert events.count("operator: pause") == 1
        await pilot.press("s")
        await pilot.press("t")
        assert channel.poll() == [("skip", None), ("stop_after_current", None)]
        await pilot.press("q")  # leaves the runner running: no question, no stop
    assert channel.poll() == []
    assert runner.poll() is None


async def test_attached_console_replays_pause_state_and_resume(tmp_path, runner):
    write_events(tmp_path / "events.jsonl", [*busy_run_events(FROZEN), RunControl("pause")])
    app = frozen_app(run_dir=str(tmp_path), attach=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.view.paused)
        await pilot.press("p")
        assert ControlChannel(tmp_path).poll() == [("resume", None)]
        assert not app.view.paused


async def test_attached_console_says_when_the_runner_is_gone(tmp_path, runner):
    write_events(tmp_path / "events.jsonl", busy_run_events(FROZEN))
    app = frozen_app(run_dir=str(tmp_path), attach=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: len(app.view.models) == 12)
        header = app.screen.query_one(RunHeader)
        assert app.view.runner_alive and "RUNNING" in str(header.render())
        runner.kill()
        runner.wait()
        await wait_for(pilot, lambda: "NO RUNNER" in str(header.render()))
        assert header.has_class("-no-runner")
        # Commands now would go unheard (a runner started later skips what was written before it):
        # the console says so and neither writes them nor shows them done.
        await pilot.press("p", "x")
        await pilot.pause()
        assert ControlChannel(tmp_path).poll() == [] and not app.view.paused
        assert not any(isinstance(e, RunControl) for e in app.view.notable)
        assert "No process runs" in str(list(app._notifications)[-1].message)


async def test_a_long_log_gives_way_to_the_store_snapshot_and_its_tail(tmp_path, runner, monkeypatch):
    from nnlite_tui.core import store as store_module
    from nnlite_tui.core.events import DeviceState, Recovery, RunStarted
    from nnlite_tui.core.run import event_log as attach

    monkeypatch.setattr(attach, "FULL_REPLAY_BYTES", 2000)
    monkeypatch.setattr(attach, "TAIL_BYTES", 1000)
    names = ("a", "b", "c")
    with store_module.RunStore(tmp_path / "state.json", flush_interval=0) as store:
        store.set_config({"devices": ["host"]})
        store.add_models([{"name": n} for n in names])
        store.transition("a", "done", attempts=1, median_ms=2.5)
        store.transition("b", "failed", attempts=3, error={"stage": "convert", "type": "E", "message": "boom"})
    # an old, long history (statuses that the store has since overtaken), then the current run's start
    old = [ModelStatus("a", "converting", attempt=1) for _ in range(60)]
    write_events(tmp_path / "events.jsonl", [*old, RunStarted(str(tmp_path), names, ("host",), resumed=True),
                                             ModelStatus("a", "converting"), DeviceState("host", "busy", model="c"),
                                             Recovery("cool-down", "host", countdown_s=30.0)])
    app = frozen_app(run_dir=str(tmp_path), attach=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: len(app.view.models) == 3)
        assert {n: r.status for n, r in app.view.models.items()} == {"a": "done", "b": "failed", "c": "queued"}
        assert app.view.models["b"].error == "convert: E: boom" and app.view.models["a"].median_ms == 2.5
        assert app.view.devices["host"].model == "c"
        events = str(app.screen.query_one("#events-body").render())
        assert "cool-down host" in events
        assert "failed b" not in events  # a stored failure is history: in the queue, not an event
        write_events(tmp_path / "events.jsonl", [ModelStatus("c", "converting", attempt=1)])
        await wait_for(pilot, lambda: app.view.models["c"].status == "converting")


async def test_a_run_without_an_event_log_is_shown_from_its_store(tmp_path):
    from nnlite_tui.core import store as store_module

    with store_module.RunStore(tmp_path / "state.json", flush_interval=0) as store:
        store.add_models([{"name": n} for n in ("a", "b")])
        store.transition("a", "done", attempts=1, median_ms=1.5)
    app = frozen_app(run_dir=str(tmp_path), attach=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: len(app.view.models) == 2)
        assert app.view.models["a"].status == "done" and app.view.models["b"].status == "queued"
        assert "NO RUNNER" in str(app.screen.query_one(RunHeader).render())
        assert "crashed" not in str(app.screen.query_one("#events-body").render())
